use super::*;

/// Markdown to escaped HTML (for tests, and anywhere a string is wanted).
fn to_html(src: &str) -> String {
    let mut sink = HtmlSink::default();
    render(&parse(src), &mut sink);
    sink.html
}

/// A [`Sink`] writing HTML text, escaping everything.
#[derive(Debug, Default)]
struct HtmlSink {
    html: String,
    open: Vec<&'static str>,
}

impl HtmlSink {
    fn escape(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '&' => self.html.push_str("&amp;"),
                '<' => self.html.push_str("&lt;"),
                '>' => self.html.push_str("&gt;"),
                '"' => self.html.push_str("&quot;"),
                '\'' => self.html.push_str("&#39;"),
                c => self.html.push(c),
            }
        }
    }
}

impl Sink for HtmlSink {
    fn open(&mut self, tag: Tag<'_>) {
        self.html.push('<');
        self.html.push_str(tag.name());
        match tag {
            Tag::A(href) => {
                self.html.push_str(" href=\"");
                self.escape(href);
                self.html
                    .push_str("\" target=\"_blank\" rel=\"noopener noreferrer\"");
            }
            Tag::Ol(start) if start != 1 => {
                self.html.push_str(&format!(" start=\"{start}\""));
            }
            _ => {}
        }
        self.html.push('>');
        let void = matches!(tag, Tag::Br | Tag::Hr);
        self.open.push(if void { "" } else { tag.name() });
    }

    fn close(&mut self) {
        if let Some(name) = self.open.pop()
            && !name.is_empty()
        {
            self.html.push_str("</");
            self.html.push_str(name);
            self.html.push('>');
        }
    }

    fn text(&mut self, text: &str) {
        self.escape(text);
    }
}

#[test]
fn paragraphs_and_line_breaks() {
    assert_eq!(
        to_html("Xin chào quý khách!\nEm có thể giúp gì?\n\nĐoạn hai."),
        "<p>Xin chào quý khách!<br>Em có thể giúp gì?</p><p>Đoạn hai.</p>"
    );
}

#[test]
fn html_in_the_input_is_text() {
    let html = to_html("<script>alert(1)</script> <img src=x onerror=alert(1)> & \"q\" 'a'");
    assert_eq!(
        html,
        "<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot; &#39;a&#39;</p>"
    );
    assert!(!to_html("**<b>x</b>**").contains("<b>"));
    assert_eq!(
        to_html("```\n<div onclick=x>\n```"),
        "<pre><code>&lt;div onclick=x&gt;</code></pre>"
    );
}

#[test]
fn emphasis_strong_and_code() {
    assert_eq!(
        to_html("**Giá:** 22.490.000 VND, *còn hàng*, `SKU-1`"),
        "<p><strong>Giá:</strong> 22.490.000 VND, <em>còn hàng</em>, <code>SKU-1</code></p>"
    );
    assert_eq!(
        to_html("*a **b** c*"),
        "<p><em>a <strong>b</strong> c</em></p>"
    );
    assert_eq!(to_html("**a *b***"), "<p><strong>a <em>b</em></strong></p>");
    assert_eq!(to_html("__x__ _y_"), "<p><strong>x</strong> <em>y</em></p>");
}

#[test]
fn unclosed_and_intraword_markers_stay_literal() {
    assert_eq!(to_html("**Giá đang"), "<p>**Giá đang</p>");
    assert_eq!(to_html("5 * 3 = 15"), "<p>5 * 3 = 15</p>");
    assert_eq!(to_html("snake_case_name"), "<p>snake_case_name</p>");
    assert_eq!(to_html("a ** b"), "<p>a ** b</p>");
    assert_eq!(to_html("`open"), "<p>`open</p>");
    assert_eq!(to_html(r"\*not em\*"), "<p>*not em*</p>");
}

#[test]
fn lists() {
    assert_eq!(
        to_html("Cấu hình:\n- CPU: i5\n- GPU: RTX 4060\n  (8GB)\n\n1. Một\n2. Hai"),
        "<p>Cấu hình:</p><ul><li>CPU: i5</li><li>GPU: RTX 4060<br>(8GB)</li></ul><ol><li>Một</li><li>Hai</li></ol>"
    );
    assert_eq!(
        to_html("3) ba\n4) bốn"),
        "<ol start=\"3\"><li>ba</li><li>bốn</li></ol>"
    );
    assert_eq!(to_html("* a\n+ b"), "<ul><li>a</li><li>b</li></ul>");
}

#[test]
fn headings_quotes_rules_and_code() {
    assert_eq!(
        to_html("# Tiêu đề\n## Phụ ##\n####### no"),
        "<h3>Tiêu đề</h3><h4>Phụ</h4><p>####### no</p>"
    );
    assert_eq!(
        to_html("> trích\n> dẫn\n\n---\n```rust\nfn main() {}\n  x\n```\nsau"),
        "<blockquote>trích<br>dẫn</blockquote><hr><pre><code>fn main() {}\n  x</code></pre><p>sau</p>"
    );
}

#[test]
fn an_unclosed_fence_takes_the_rest() {
    assert_eq!(
        to_html("Ví dụ:\n```\nlet a = 1;"),
        "<p>Ví dụ:</p><pre><code>let a = 1;</code></pre>"
    );
}

#[test]
fn links_only_with_safe_targets() {
    assert_eq!(
        to_html("[Trang chủ](https://example.com/a?b=1&c=\"2\")"),
        "<p>Trang chủ</p>",
        "a quote in the target: the words stay, the link goes"
    );
    assert_eq!(
        to_html("Xem [Trang chủ](https://example.com/a?b=1&c=2)."),
        "<p>Xem <a href=\"https://example.com/a?b=1&amp;c=2\" target=\"_blank\" rel=\"noopener noreferrer\">Trang chủ</a>.</p>"
    );
    assert_eq!(to_html("[bấm](javascript:alert(1))"), "<p>bấm)</p>");
    assert_eq!(to_html("[bấm](JavaScript:alert`1`)"), "<p>bấm</p>");
    assert_eq!(to_html("[x](data:text/html,hi)"), "<p>x</p>");
    assert_eq!(to_html("[x](/relative)"), "<p>x</p>");
    assert_eq!(
        to_html("[Gọi](tel:0979825281)"),
        "<p><a href=\"tel:0979825281\" target=\"_blank\" rel=\"noopener noreferrer\">Gọi</a></p>"
    );
}

#[test]
fn bare_urls_become_links_without_trailing_punctuation() {
    assert_eq!(
        to_html("Xem https://anphat.example/bao-hanh."),
        "<p>Xem <a href=\"https://anphat.example/bao-hanh\" target=\"_blank\" rel=\"noopener noreferrer\">https://anphat.example/bao-hanh</a>.</p>"
    );
    assert_eq!(to_html("xhttps://a.b"), "<p>xhttps://a.b</p>");
}

#[test]
fn safe_href_rules() {
    for ok in [
        "https://a.b",
        "HTTP://a.b/c",
        "mailto:a@b.c",
        "tel:+8412345",
    ] {
        assert!(safe_href(ok), "{ok}");
    }
    for bad in [
        "javascript:alert(1)",
        " https://a.b",
        "https://a b",
        "https://a\u{0}b",
        "vbscript:x",
        "https://",
        "//evil.example",
        "data:text/html,x",
    ] {
        assert!(!safe_href(bad), "{bad}");
    }
}

#[test]
fn never_panics_and_never_emits_raw_angle_brackets() {
    // Every prefix of tricky inputs, as a stream would deliver them.
    let samples = [
        "**Giá:** [link](https://a.b/<x>) `c*d` _e_ \\",
        "1. *a\n2. **b\n```\n<x>\n",
        "> [a](javascript:x)\n---\n# h <i>",
        "Ôi **đẹp** quá 😀 *ừ* __à__ `mã` https://vi.wikipedia.org/wiki/Việt_Nam.",
    ];
    for sample in samples {
        for (end, _) in sample.char_indices() {
            let html = to_html(&sample[..end]);
            for bad in ["<x", "<i>", "href=\"javascript"] {
                assert!(!html.contains(bad), "{html}");
            }
        }
    }
}
