//! Steps 9 and 13: the search results as the model reads them, the sources extracted from
//! them, the numbered sources section appended to the answer, and the filter that cuts a
//! sources list the model wrote itself.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::boundary::{WebSource, is_web_url};
use crate::conversation::Language;
use crate::engine::TextFilter;

/// The seed's heading (Vietnamese), with its blank line: `"\n\nNguồn tham khảo:\n\n"`.
pub const SOURCES_HEADING_VI: &str = "Nguồn tham khảo:";
/// The English heading (mission): `Sources:`.
pub const SOURCES_HEADING_EN: &str = "Sources:";

/// The search results as text for the prompt (and `tool-server/tools/call`): per result
/// `Title: …`, `Content: …`, `Link: …` lines, results separated by a blank line.
pub fn results_text(results: &[WebSource]) -> String {
    let mut out = String::new();
    for (i, result) in results.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        let line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!(
            "Title: {}\nContent: {}\nLink: {}",
            line(&result.title),
            line(&result.snippet),
            result.url.trim()
        ));
    }
    out
}

/// A source to cite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Its title (may be empty).
    pub title: String,
    /// Its `http(s)` address.
    pub url: String,
}

/// The sources in a search-results text (seed: "Parse 'Link: ...' patterns", "Clean
/// markdown link formats"): each `Link:` line's URL ([`clean_url`]), titled by the nearest
/// `Title:` line before it; only `http(s)` URLs, each once, in order.
pub fn extract_sources(text: &str) -> Vec<Source> {
    let mut sources = Vec::new();
    let mut seen = BTreeSet::new();
    let mut title = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = strip_key(line, "Title:") {
            title = rest.trim().into();
        } else if let Some(rest) = strip_key(line, "Link:") {
            let url = clean_url(rest);
            if is_web_url(url) && seen.insert(String::from(url)) {
                sources.push(Source {
                    title: core::mem::take(&mut title),
                    url: url.into(),
                });
            }
            title.clear();
        }
    }
    sources
}

fn strip_key<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let head = line.get(..key.len())?;
    head.eq_ignore_ascii_case(key).then(|| &line[key.len()..])
}

pub use crate::boundary::clean_url;

/// The sources section appended to an answer: `"\n\nNguồn tham khảo:\n\n1. Title - url\n…"`
/// (`Sources:` in English); `{n}. {url}` for an untitled source; `""` when there are none.
pub fn sources_section(language: Language, sources: &[Source]) -> String {
    if sources.is_empty() {
        return String::new();
    }
    let heading = match language {
        Language::Vi => SOURCES_HEADING_VI,
        Language::En => SOURCES_HEADING_EN,
    };
    let mut out = format!("\n\n{heading}\n\n");
    for (i, source) in sources.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if source.title.is_empty() {
            out.push_str(&format!("{}. {}", i + 1, source.url));
        } else {
            out.push_str(&format!("{}. {} - {}", i + 1, source.title, source.url));
        }
    }
    out
}

/// Headings of a sources list a model may write itself (compared in lower case).
const MODEL_HEADINGS: [&str; 3] = ["nguồn tham khảo", "sources", "references"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineStart {
    Undecided,
    Heading,
    Text,
}

fn classify(head: &str, line_ended: bool) -> LineStart {
    let probe = head
        .trim_end_matches('\n')
        .trim_start_matches(['#', '*', '_', '>', ' ', '\t']);
    let lower = probe.to_lowercase();
    for heading in MODEL_HEADINGS {
        if let Some(rest) = lower.strip_prefix(heading) {
            let rest = rest.trim_start_matches(['*', '_', ' ']);
            return if rest.starts_with(':') || (rest.is_empty() && line_ended) {
                LineStart::Heading
            } else if rest.is_empty() {
                LineStart::Undecided
            } else {
                LineStart::Text
            };
        }
    }
    if !line_ended && MODEL_HEADINGS.iter().any(|h| h.starts_with(&*lower)) {
        LineStart::Undecided
    } else {
        LineStart::Text
    }
}

/// Streams a model's answer while cutting it at a line that starts a sources list of its
/// own (`Nguồn tham khảo`, `Sources`, `References`, followed by `:` or the line's end):
/// only the code-built list is shown. Text at a line's start is held while it could still
/// be such a heading, and trailing whitespace is held until more text follows, so what is
/// streamed is exactly what [`SourcesCut::kept`] stores.
#[derive(Debug, Clone, Default)]
pub struct SourcesCut {
    whitespace: String,
    head: String,
    mid_line: bool,
    cut: bool,
    kept: String,
}

impl SourcesCut {
    /// A filter at the start of an answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a piece of the model's text; returns the text to stream now.
    pub fn push(&mut self, delta: &str) -> String {
        let mut out = String::new();
        for c in delta.chars() {
            self.push_char(c, &mut out);
        }
        self.kept.push_str(&out);
        out
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        if self.cut {
            return;
        }
        if self.mid_line {
            if c.is_whitespace() {
                self.whitespace.push(c);
                self.mid_line = c != '\n';
            } else {
                out.push_str(&self.whitespace);
                self.whitespace.clear();
                out.push(c);
            }
            return;
        }
        if self.head.is_empty() && c.is_whitespace() {
            self.whitespace.push(c);
            return;
        }
        self.head.push(c);
        match classify(&self.head, c == '\n') {
            LineStart::Undecided => {}
            LineStart::Heading => self.cut = true,
            LineStart::Text => {
                out.push_str(&self.whitespace);
                self.whitespace.clear();
                let head = core::mem::take(&mut self.head);
                match head.strip_suffix('\n') {
                    Some(line) => {
                        out.push_str(line);
                        self.whitespace.push('\n');
                    }
                    None => {
                        out.push_str(&head);
                        self.mid_line = true;
                    }
                }
            }
        }
    }

    /// Ends the answer: the held text still to stream (trailing whitespace is dropped).
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.cut && !self.head.is_empty() {
            if classify(&self.head, true) == LineStart::Heading {
                self.cut = true;
            } else {
                out.push_str(&self.whitespace);
                out.push_str(self.head.trim_end());
            }
        }
        self.whitespace.clear();
        self.head.clear();
        self.kept.push_str(&out);
        out
    }

    /// Everything streamed so far.
    pub fn kept(&self) -> &str {
        &self.kept
    }

    /// Whether the model's own sources list was cut.
    pub fn was_cut(&self) -> bool {
        self.cut
    }
}

impl TextFilter for SourcesCut {
    fn push(&mut self, delta: &str) -> String {
        SourcesCut::push(self, delta)
    }

    fn finish(&mut self) -> String {
        SourcesCut::finish(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pieces: &[&str]) -> (String, String) {
        let mut cut = SourcesCut::new();
        let mut streamed = String::new();
        for piece in pieces {
            streamed.push_str(&cut.push(piece));
        }
        streamed.push_str(&cut.finish());
        (streamed, cut.kept().into())
    }

    #[test]
    fn a_model_written_sources_list_is_cut_and_trailing_space_dropped() {
        let (streamed, kept) = run(&[
            "Đánh răng 2 lần",
            " mỗi ngày.\n\n",
            "**Nguồn",
            " tham khảo:**\n1. x",
        ]);
        assert_eq!(streamed, "Đánh răng 2 lần mỗi ngày.");
        assert_eq!(kept, streamed);
        let (streamed, _) = run(&["Brush twice.\n\nReferences\n- a"]);
        assert_eq!(streamed, "Brush twice.");
        let (streamed, _) = run(&["Brush.\n", "## Sources: a, b"]);
        assert_eq!(streamed, "Brush.");
    }

    #[test]
    fn ordinary_lines_starting_like_a_heading_are_kept() {
        let text = "Sources of fluoride include water.\nSo brush.\n\n- Soft brush  \n";
        let (streamed, _) = run(&[text]);
        assert_eq!(
            streamed,
            "Sources of fluoride include water.\nSo brush.\n\n- Soft brush"
        );
        let (streamed, _) = run(&["S", "o"]);
        assert_eq!(streamed, "So");
    }

    #[test]
    fn sources_are_extracted_cleaned_and_numbered() {
        let text = "Title: Sâu răng\nContent: x\nLink: [Sâu răng](https://a.vn/sau-rang)\n\n\
                    Title: Nope\nContent: y\nLink: javascript:alert(1)\n\n\
                    Title: Dup\nContent: z\nLink: <https://a.vn/sau-rang>\n\n\
                    Title:\nContent: w\nLink: https://b.vn/x";
        let sources = extract_sources(text);
        assert_eq!(sources.len(), 2);
        assert_eq!(
            sources_section(Language::Vi, &sources),
            "\n\nNguồn tham khảo:\n\n1. Sâu răng - https://a.vn/sau-rang\n2. https://b.vn/x"
        );
        assert!(sources_section(Language::En, &sources).starts_with("\n\nSources:\n\n1. "));
        assert_eq!(sources_section(Language::En, &[]), "");
    }

    #[test]
    fn links_are_unwrapped_and_still_validated() {
        use crate::boundary::is_web_url;
        for (link, want) in [
            ("[C](https://c.example/x)", "https://c.example/x"),
            (" <https://d.example/y> ", "https://d.example/y"),
            (
                "[Tooth](https://en.wikipedia.org/wiki/Tooth_(anatomy))",
                "https://en.wikipedia.org/wiki/Tooth_(anatomy)",
            ),
            ("[E](https://e.example/z \"title\")", "https://e.example/z"),
            ("[F](<https://f.example/a>)", "https://f.example/a"),
            ("https://plain.example/", "https://plain.example/"),
        ] {
            assert_eq!(clean_url(link), want, "{link}");
            assert!(is_web_url(clean_url(link)), "{link}");
        }
        for link in [
            "[J](javascript:alert(1))",
            "[https://ok.example](javascript:alert(1))",
            "<javascript:alert(1)>",
            "[x](data:text/html,hi)",
            "[x]()",
            "see [x](https://a.example)",
        ] {
            assert!(!is_web_url(clean_url(link)), "{link}");
        }
    }
}
