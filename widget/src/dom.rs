//! Markdown into DOM nodes: the browser [`Sink`] for [`crate::markdown`].
//!
//! Elements come only from [`Tag`]; text only ever becomes `Text` nodes and link targets
//! only `href` attributes (already vetted by [`crate::markdown::safe_href`]). Nothing is
//! parsed as HTML, so model output cannot inject markup or script.

use web_sys::{Document, Element};

use crate::markdown::{self, Sink, Tag};

/// Replace `target`'s children with `text` rendered as markdown.
pub(crate) fn render_markdown(target: &Element, text: &str) {
    target.set_text_content(None);
    let Some(doc) = target.owner_document() else {
        return;
    };
    let mut sink = DomSink {
        doc,
        stack: vec![target.clone()],
    };
    markdown::render(&markdown::parse(text), &mut sink);
}

struct DomSink {
    doc: Document,
    /// Open elements; the first is the target and is never popped.
    stack: Vec<Element>,
}

impl DomSink {
    fn parent(&self) -> &Element {
        // The target is pushed first and `close` never pops it.
        &self.stack[self.stack.len() - 1]
    }
}

impl Sink for DomSink {
    fn open(&mut self, tag: Tag<'_>) {
        let Ok(el) = self.doc.create_element(tag.name()) else {
            // Keep opens and closes balanced even if creation failed.
            self.stack.push(self.parent().clone());
            return;
        };
        match tag {
            Tag::A(href) => {
                let _ = el.set_attribute("href", href);
                let _ = el.set_attribute("target", "_blank");
                let _ = el.set_attribute("rel", "noopener noreferrer");
            }
            Tag::Ol(start) if start != 1 => {
                let _ = el.set_attribute("start", &start.to_string());
            }
            _ => {}
        }
        let _ = self.parent().append_child(&el);
        self.stack.push(el);
    }

    fn close(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    fn text(&mut self, text: &str) {
        let node = self.doc.create_text_node(text);
        let _ = self.parent().append_child(&node);
    }
}
