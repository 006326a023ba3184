//! Safe markdown for assistant messages.
//!
//! Assistant text is model output: it must never become markup. [`parse`] turns it into a
//! small tree ([`Block`]s of [`Inline`]s) and [`render`] walks that tree into a [`Sink`]
//! — DOM nodes in the browser (`crate::dom`), escaped HTML in tests ([`to_html`]). Only
//! the tags in [`Tag`] can ever be produced, every piece of text goes through the sink as
//! text, and a link survives only when its target is `http(s):`, `mailto:` or `tel:`
//! (so no `javascript:` URLs); any HTML in the input is shown as the literal text it is.
//!
//! The dialect is what chat models write: paragraphs (a single newline is a line break),
//! `#` headings, `-`/`*`/`+` and `1.` lists, fenced code, `>` quotes, `---` rules, and
//! inline `**strong**`, `*em*`/`_em_`, `` `code` ``, `[text](url)` and bare `https://` links.
//! Unclosed markers stay literal, so a message renders sensibly while it streams in.

/// A block of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Block {
    /// A paragraph; single newlines inside it are [`Inline::Break`]s.
    Paragraph(Vec<Inline>),
    /// A heading of level 1–6.
    Heading(u8, Vec<Inline>),
    /// A list; `start` is the first number of an ordered list.
    List {
        /// Numbered (`1.`) or bulleted.
        ordered: bool,
        /// First number of an ordered list.
        start: u32,
        /// The items' content.
        items: Vec<Vec<Inline>>,
    },
    /// Fenced code, verbatim.
    Code(String),
    /// A `>` quote.
    Quote(Vec<Inline>),
    /// A thematic break (`---`).
    Rule,
}

/// Inline content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inline {
    /// Plain text.
    Text(String),
    /// `**strong**`.
    Strong(Vec<Inline>),
    /// `*emphasis*`.
    Em(Vec<Inline>),
    /// `` `code` ``.
    Code(String),
    /// A link whose `href` passed [`safe_href`].
    Link {
        /// The target.
        href: String,
        /// The link text.
        children: Vec<Inline>,
    },
    /// A line break.
    Break,
}

/// The only elements rendering produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag<'a> {
    P,
    /// A heading, already mapped to `h3`–`h5` (the panel's own title is the page's top).
    H(u8),
    Ul,
    /// An ordered list and its start number.
    Ol(u32),
    Li,
    Pre,
    Code,
    Strong,
    Em,
    Quote,
    /// A link to a [`safe_href`]; opens in a new tab with `rel="noopener noreferrer"`.
    A(&'a str),
    /// Void element: opened and closed at once.
    Br,
    /// Void element: opened and closed at once.
    Hr,
}

impl Tag<'_> {
    /// The element name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::P => "p",
            Self::H(3) => "h3",
            Self::H(4) => "h4",
            Self::H(_) => "h5",
            Self::Ul => "ul",
            Self::Ol(_) => "ol",
            Self::Li => "li",
            Self::Pre => "pre",
            Self::Code => "code",
            Self::Strong => "strong",
            Self::Em => "em",
            Self::Quote => "blockquote",
            Self::A(_) => "a",
            Self::Br => "br",
            Self::Hr => "hr",
        }
    }
}

/// Where rendering goes. Every `open` is matched by one `close`, void tags included.
pub(crate) trait Sink {
    /// Start an element (a child of the current one).
    fn open(&mut self, tag: Tag<'_>);
    /// End the current element.
    fn close(&mut self);
    /// Append text to the current element — as text, never as markup.
    fn text(&mut self, text: &str);
}

/// Whether `href` may become a link: absolute `http:`/`https:`/`mailto:`/`tel:` without
/// whitespace or control characters.
pub(crate) fn safe_href(href: &str) -> bool {
    let rest = ["https://", "http://", "mailto:", "tel:"]
        .iter()
        .find_map(|scheme| {
            let head = href.get(..scheme.len())?;
            head.eq_ignore_ascii_case(scheme)
                .then(|| &href[scheme.len()..])
        });
    rest.is_some_and(|rest| !rest.is_empty())
        && !href
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '<' | '>'))
}

/// Parse `src` into blocks.
pub(crate) fn parse(src: &str) -> Vec<Block> {
    let lines: Vec<&str> = src.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        i += 1;
        if line.is_empty() {
            continue;
        }
        if let Some(fence) = fence(line) {
            let mut code = String::new();
            while i < lines.len() && !lines[i].trim_start().starts_with(fence) {
                if !code.is_empty() {
                    code.push('\n');
                }
                code.push_str(lines[i]);
                i += 1;
            }
            i += 1; // the closing fence, if any
            blocks.push(Block::Code(code));
        } else if is_rule(line) {
            blocks.push(Block::Rule);
        } else if let Some((level, text)) = heading(line) {
            blocks.push(Block::Heading(level, inline(text)));
        } else if let Some((ordered, start, first)) = list_item(line) {
            let mut items = vec![first.to_string()];
            while i < lines.len() {
                let next = lines[i].trim_start();
                match list_item(next) {
                    Some((o, _, text)) if o == ordered => items.push(text.to_string()),
                    None if !next.is_empty() && lines[i].starts_with([' ', '\t']) => {
                        if let Some(last) = items.last_mut() {
                            last.push('\n');
                            last.push_str(next);
                        }
                    }
                    _ => break,
                }
                i += 1;
            }
            let items = items.iter().map(|t| inline(t)).collect();
            blocks.push(Block::List {
                ordered,
                start,
                items,
            });
        } else if let Some(first) = line.strip_prefix('>') {
            let mut text = first.trim_start().to_string();
            while let Some(next) = lines.get(i).and_then(|l| l.trim_start().strip_prefix('>')) {
                text.push('\n');
                text.push_str(next.trim_start());
                i += 1;
            }
            blocks.push(Block::Quote(inline(&text)));
        } else {
            let mut text = line.to_string();
            while let Some(next) = lines.get(i).map(|l| l.trim_start()) {
                if next.is_empty() || starts_block(next) {
                    break;
                }
                text.push('\n');
                text.push_str(next);
                i += 1;
            }
            blocks.push(Block::Paragraph(inline(&text)));
        }
    }
    blocks
}

fn fence(line: &str) -> Option<&'static str> {
    ["```", "~~~"].into_iter().find(|f| line.starts_with(f))
}

fn is_rule(line: &str) -> bool {
    let mut chars = line.chars().filter(|c| !c.is_whitespace());
    let Some(first) = chars.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_') && {
        let rest: Vec<char> = chars.collect();
        rest.len() >= 2 && rest.iter().all(|&c| c == first)
    }
}

fn heading(line: &str) -> Option<(u8, &str)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    let rest = &line[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| (level as u8, rest.trim().trim_end_matches('#').trim_end()))
}

/// `- x`, `* x`, `+ x` → (false, 1, "x"); `12. x` or `12) x` → (true, 12, "x").
fn list_item(line: &str) -> Option<(bool, u32, &str)> {
    if let Some(text) = ["- ", "* ", "+ "].iter().find_map(|m| line.strip_prefix(m)) {
        return Some((false, 1, text.trim_start()));
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = &line[digits..];
    let text = rest
        .strip_prefix(". ")
        .or_else(|| rest.strip_prefix(") "))?;
    Some((true, line[..digits].parse().ok()?, text.trim_start()))
}

fn starts_block(line: &str) -> bool {
    fence(line).is_some()
        || is_rule(line)
        || heading(line).is_some()
        || list_item(line).is_some()
        || line.starts_with('>')
}

/// Parse inline content.
pub(crate) fn inline(src: &str) -> Vec<Inline> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = src;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        if let Some((node, used)) = inline_at(rest, prev) {
            if !text.is_empty() {
                out.push(Inline::Text(core::mem::take(&mut text)));
            }
            prev = rest[..used].chars().next_back();
            out.push(node);
            rest = &rest[used..];
            continue;
        }
        let mut len = c.len_utf8();
        if c == '\\'
            && let Some(next) = rest[1..].chars().next()
            && next.is_ascii_punctuation()
        {
            text.push(next);
            len += 1;
        } else {
            text.push(c);
        }
        prev = Some(c);
        rest = &rest[len..];
    }
    if !text.is_empty() {
        out.push(Inline::Text(text));
    }
    out
}

/// An inline construct starting at the beginning of `rest`, and how many bytes it used.
fn inline_at(rest: &str, prev: Option<char>) -> Option<(Inline, usize)> {
    let word_before = prev.is_some_and(char::is_alphanumeric);
    match rest.as_bytes()[0] {
        b'\n' => Some((Inline::Break, 1)),
        b'`' => {
            let end = rest[1..].find('`')?;
            (end > 0).then(|| (Inline::Code(rest[1..1 + end].to_string()), end + 2))
        }
        b'*' | b'_' => {
            let marker = &rest[..1];
            let double = rest[1..].starts_with(marker);
            if marker == "_" && word_before {
                return None;
            }
            let delim = if double { &rest[..2] } else { marker };
            let after = &rest[delim.len()..];
            if after.starts_with(char::is_whitespace) || after.starts_with(marker) {
                return None;
            }
            let end = closing(after, delim)?;
            let children = inline(&after[..end]);
            let node = if double {
                Inline::Strong(children)
            } else {
                Inline::Em(children)
            };
            Some((node, delim.len() * 2 + end))
        }
        b'[' => {
            let close = rest.find("](")?;
            let label = &rest[1..close];
            let url_start = close + 2;
            let url_len = rest[url_start..].find(')')?;
            let href = &rest[url_start..url_start + url_len];
            if label.is_empty() || label.contains(['[', ']']) {
                return None;
            }
            let used = url_start + url_len + 1;
            if safe_href(href) {
                let children = inline(label);
                let href = href.to_string();
                Some((Inline::Link { href, children }, used))
            } else {
                // Not a link we allow: keep the words, drop the target.
                Some((Inline::Text(label.to_string()), used))
            }
        }
        b'h' if !word_before && (rest.starts_with("https://") || rest.starts_with("http://")) => {
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"'))
                .unwrap_or(rest.len());
            let url = rest[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'']);
            safe_href(url).then(|| {
                let link = Inline::Link {
                    href: url.to_string(),
                    children: vec![Inline::Text(url.to_string())],
                };
                (link, url.len())
            })
        }
        _ => None,
    }
}

/// The byte offset in `s` of the `delim` that closes an emphasis opened just before `s`.
fn closing(s: &str, delim: &str) -> Option<usize> {
    let marker = delim.as_bytes()[0];
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            // Markers inside code spans do not count.
            if let Some(end) = s[i + 1..].find('`') {
                i += end + 2;
                continue;
            }
        }
        if bytes[i] != marker {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == marker).count();
        let before_ok = i > 0 && !bytes[i - 1].is_ascii_whitespace();
        let after = s[i + run..].chars().next();
        let after_ok = marker != b'_' || !after.is_some_and(char::is_alphanumeric);
        if before_ok && after_ok {
            match (delim.len(), run) {
                // A run of two inside `*…*` belongs to a nested `**…**`.
                (1, 2) => {}
                // The closer is the end of the run: `*a **b***`, `**a *b***`.
                (d, r) if r >= d => return Some(i + r - d),
                _ => {}
            }
        }
        i += run;
    }
    None
}

/// Render `blocks` into `sink`.
pub(crate) fn render(blocks: &[Block], sink: &mut impl Sink) {
    for block in blocks {
        match block {
            Block::Paragraph(inlines) => wrap(sink, Tag::P, inlines),
            Block::Heading(level, inlines) => wrap(sink, Tag::H((level + 2).min(5)), inlines),
            Block::List {
                ordered,
                start,
                items,
            } => {
                sink.open(if *ordered { Tag::Ol(*start) } else { Tag::Ul });
                for item in items {
                    wrap(sink, Tag::Li, item);
                }
                sink.close();
            }
            Block::Code(code) => {
                sink.open(Tag::Pre);
                sink.open(Tag::Code);
                sink.text(code);
                sink.close();
                sink.close();
            }
            Block::Quote(inlines) => wrap(sink, Tag::Quote, inlines),
            Block::Rule => {
                sink.open(Tag::Hr);
                sink.close();
            }
        }
    }
}

fn wrap(sink: &mut impl Sink, tag: Tag<'_>, inlines: &[Inline]) {
    sink.open(tag);
    render_inlines(inlines, sink);
    sink.close();
}

fn render_inlines(inlines: &[Inline], sink: &mut impl Sink) {
    for node in inlines {
        match node {
            Inline::Text(text) => sink.text(text),
            Inline::Strong(children) => wrap(sink, Tag::Strong, children),
            Inline::Em(children) => wrap(sink, Tag::Em, children),
            Inline::Code(code) => {
                sink.open(Tag::Code);
                sink.text(code);
                sink.close();
            }
            Inline::Link { href, children } => wrap(sink, Tag::A(href), children),
            Inline::Break => {
                sink.open(Tag::Br);
                sink.close();
            }
        }
    }
}

#[cfg(test)]
mod tests;
