//! A turn's payloads (`{"kind","data"}`) as DOM: lists, tables, charts (inline SVG),
//! sources, evidence, and follow-up and control questions as chips.
//!
//! Every string of a payload becomes a `Text` node or an attribute value, never markup;
//! links only point where [`rich::link`] allows, open in a new tab, and carry
//! `rel="noopener noreferrer"`. Large payloads are capped ([`rich::MAX_ROWS`],
//! [`rich::MAX_ITEMS`]) and say how much they show. Chips carry their question in `data-q`;
//! the message's click handler sends it.

use js_sys::{Array, Reflect};
use wasm_bindgen::JsValue;
use web_sys::{Document, Element};

use crate::api::{field, items, parse_json};
use crate::i18n::{Lang, Strings};
use crate::rich::{self, ChartKind, Shape};

const SVG: &str = "http://www.w3.org/2000/svg";

/// Renders payloads into one message.
pub(crate) struct Painter<'a> {
    /// The document.
    pub doc: Document,
    /// Numbers' language.
    pub lang: Lang,
    /// The panel's words.
    pub strings: &'static Strings,
    /// The origin of the page embedding the panel (site-relative links go there).
    pub site: Option<&'a str>,
}

impl Painter<'_> {
    /// Replace `target`'s children with `payloads` (JSON texts) rendered.
    pub(crate) fn paint(&self, target: &Element, payloads: &[String]) {
        target.set_text_content(None);
        for text in payloads {
            let Some(payload) = parse_json(text) else {
                continue;
            };
            let data = get(&payload, "data");
            match field(&payload, &["kind"]).as_deref() {
                Some("list") => self.list(target, &data),
                Some("table") => self.table(target, &data),
                Some("chart") => self.chart(target, &data),
                Some("sources") => self.sources(target, &data),
                Some("evidence") => self.evidence(target, &data),
                Some("follow_ups") => self.chips(target, &data, self.strings.follow_ups),
                Some("control") => self.chips(target, &get(&data, "questions"), self.strings.control),
                _ => {}
            }
        }
    }

    fn el(&self, parent: &Element, tag: &str, class: &str) -> Element {
        let el = self
            .doc
            .create_element(tag)
            .unwrap_or_else(|_| parent.clone());
        if !class.is_empty() {
            let _ = el.set_attribute("class", class);
        }
        let _ = parent.append_child(&el);
        el
    }

    fn text(&self, parent: &Element, tag: &str, class: &str, text: &str) -> Element {
        let el = self.el(parent, tag, class);
        el.set_text_content(Some(text));
        el
    }

    fn svg(&self, parent: &Element, tag: &str, attrs: &[(&str, &str)]) -> Element {
        let el = self
            .doc
            .create_element_ns(Some(SVG), tag)
            .unwrap_or_else(|_| parent.clone());
        for (name, value) in attrs {
            let _ = el.set_attribute(name, value);
        }
        let _ = parent.append_child(&el);
        el
    }

    /// A link to `href` when it is safe, else plain text.
    fn link(&self, parent: &Element, text: &str, href: &str) -> Element {
        match rich::link(href, self.site) {
            Some(url) => {
                let a = self.text(parent, "a", "", text);
                let _ = a.set_attribute("href", &url);
                let _ = a.set_attribute("target", "_blank");
                let _ = a.set_attribute("rel", "noopener noreferrer");
                a
            }
            None => self.text(parent, "span", "", text),
        }
    }

    /// "Showing the first N of M" under a capped collection.
    fn shown(&self, parent: &Element, shown: usize, total: usize) {
        if total > shown {
            let note = self
                .strings
                .showing
                .replace("{n}", &rich::number(shown as f64, self.lang))
                .replace("{total}", &rich::number(total as f64, self.lang));
            self.text(parent, "p", "cw-note", &note);
        }
    }

    fn list(&self, target: &Element, data: &JsValue) {
        let list = items(data, "items");
        let ul = self.el(target, "ul", "cw-list");
        let shown = capped(&list, rich::MAX_ITEMS, |item| {
            let li = self.el(&ul, "li", "");
            let title = field(&item, &["title"]).unwrap_or_default();
            self.link(&li, &title, &field(&item, &["path"]).unwrap_or_default());
            if let Some(sub) = field(&item, &["subtitle"]) {
                self.text(&li, "small", "", &sub);
            }
        });
        let total = field(data, &["total"])
            .and_then(|t| t.parse::<f64>().ok())
            .map_or(list.length() as usize, |t| t as usize);
        self.shown(target, shown, total.max(list.length() as usize));
    }

    fn table(&self, target: &Element, data: &JsValue) {
        let columns: Vec<(String, String, bool)> = items(data, "columns")
            .iter()
            .map(|c| {
                (
                    field(&c, &["key"]).unwrap_or_default(),
                    field(&c, &["label"]).unwrap_or_default(),
                    field(&c, &["type"]).as_deref() == Some("number"),
                )
            })
            .collect();
        let rows = items(data, "rows");
        // Scrollable both ways, and reachable by keyboard to scroll.
        let wrap = self.el(target, "div", "cw-table");
        let _ = wrap.set_attribute("role", "region");
        let _ = wrap.set_attribute("aria-label", self.strings.table);
        let _ = wrap.set_attribute("tabindex", "0");
        let table = self.el(&wrap, "table", "");
        let head = self.el(&self.el(&table, "thead", ""), "tr", "");
        for (_, label, number) in &columns {
            let th = self.text(&head, "th", if *number { "cw-num" } else { "" }, label);
            let _ = th.set_attribute("scope", "col");
        }
        let body = self.el(&table, "tbody", "");
        let shown = capped(&rows, rich::MAX_ROWS, |row| {
            let tr = self.el(&body, "tr", "");
            for (key, _, number) in &columns {
                let cell = get(&row, key);
                let td = self.el(&tr, "td", if *number { "cw-num" } else { "" });
                if let Some(n) = cell.as_f64() {
                    td.set_text_content(Some(&rich::number(n, self.lang)));
                } else if let Some(href) = field(&cell, &["href"]) {
                    self.link(&td, &field(&cell, &["text"]).unwrap_or_default(), &href);
                } else {
                    td.set_text_content(field(&row, &[key]).as_deref());
                }
            }
        });
        self.shown(target, shown, rows.length() as usize);
    }

    fn chart(&self, target: &Element, data: &JsValue) {
        let Some(kind) = field(data, &["chart"]).and_then(|k| ChartKind::parse(&k)) else {
            return;
        };
        let labels: Vec<String> = items(data, "labels")
            .iter()
            .map(|l| l.as_string().unwrap_or_default())
            .collect();
        let series: Vec<(String, Vec<f64>)> = items(data, "series")
            .iter()
            .map(|s| {
                let values = items(&s, "values")
                    .iter()
                    .map(|v| v.as_f64().unwrap_or(0.0))
                    .collect();
                (field(&s, &["name"]).unwrap_or_default(), values)
            })
            .collect();
        let values: Vec<Vec<f64>> = series.iter().map(|(_, v)| v.clone()).collect();
        let figure = self.el(target, "figure", "cw-chart");
        if let Some(title) = field(data, &["title"]) {
            self.text(&figure, "figcaption", "", &title);
        }
        let view = format!("0 0 {} {}", rich::WIDTH, rich::HEIGHT);
        let alt = field(data, &["alt"]).unwrap_or_default();
        let svg = self.svg(&figure, "svg", &[("viewBox", &view), ("role", "img"), ("aria-label", &alt)]);
        for shape in rich::chart(kind, &labels, &values) {
            match shape {
                Shape::Rect { series, x, y, w, h } => {
                    let attrs = [("x", x), ("y", y), ("width", w), ("height", h)].map(|(k, v)| (k, format!("{v:.1}")));
                    let rect = self.svg(&svg, "rect", &[("class", &colour(series))]);
                    for (k, v) in attrs {
                        let _ = rect.set_attribute(k, &v);
                    }
                }
                Shape::Line { series, points } => {
                    self.svg(&svg, "polyline", &[("class", &colour(series)), ("points", &points)]);
                }
                Shape::Slice { series, d } => {
                    self.svg(&svg, "path", &[("class", &colour(series)), ("d", &d)]);
                }
                Shape::Label { x, text } => {
                    let y = format!("{}", rich::HEIGHT - 8.0);
                    let t = self.svg(&svg, "text", &[("x", &format!("{x:.1}")), ("y", &y)]);
                    t.set_text_content(Some(&text));
                }
            }
        }
        // The legend: the pie's slices with their values, or the series' names.
        let legend = self.el(&figure, "ul", "cw-legend");
        if kind == ChartKind::Pie {
            let first = values.first().cloned().unwrap_or_default();
            for (i, label) in labels.iter().take(rich::MAX_LABELS).enumerate() {
                let value = first.get(i).copied().unwrap_or(0.0);
                self.key(&legend, i, &format!("{label}: {}", rich::number(value, self.lang)));
            }
        } else if series.len() > 1 {
            for (i, (name, _)) in series.iter().take(rich::MAX_SERIES).enumerate() {
                self.key(&legend, i, name);
            }
        }
    }

    fn key(&self, legend: &Element, series: usize, text: &str) {
        let li = self.el(legend, "li", "");
        self.el(&li, "i", &colour(series));
        let _ = li.append_child(&self.doc.create_text_node(text));
    }

    fn sources(&self, target: &Element, data: &JsValue) {
        let list: Array = if Array::is_array(data) {
            data.clone().into()
        } else {
            Array::new()
        };
        let section = self.el(target, "section", "cw-sources");
        self.text(&section, "h3", "", self.strings.sources);
        let ol = self.el(&section, "ol", "");
        let shown = capped(&list, rich::MAX_ITEMS, |source| {
            let li = self.el(&ol, "li", "");
            let title = field(&source, &["title"]).unwrap_or_default();
            self.link(&li, &title, &field(&source, &["url"]).unwrap_or_default());
            if let Some(snippet) = field(&source, &["snippet"]) {
                self.text(&li, "small", "", &snippet);
            }
        });
        self.shown(&section, shown, list.length() as usize);
    }

    fn evidence(&self, target: &Element, data: &JsValue) {
        let list: Array = if Array::is_array(data) {
            data.clone().into()
        } else {
            Array::new()
        };
        let section = self.el(target, "section", "cw-evidence");
        self.text(&section, "h3", "", self.strings.evidence);
        let ul = self.el(&section, "ul", "");
        capped(&list, rich::MAX_ITEMS, |item| {
            let mut line = field(&item, &["claim"]).unwrap_or_default();
            for index in items(&item, "sources").iter().filter_map(|i| i.as_f64()) {
                line.push_str(&format!(" [{}]", index as u64 + 1));
            }
            if let Some(c) = get(&item, "confidence").as_f64() {
                line.push_str(&format!(" ({}%)", rich::number((c * 100.0).round(), self.lang)));
            }
            self.text(&ul, "li", "", &line);
        });
    }

    fn chips(&self, target: &Element, data: &JsValue, label: &str) {
        let list: Array = if Array::is_array(data) {
            data.clone().into()
        } else {
            Array::new()
        };
        let group = self.el(target, "div", "cw-chips");
        let _ = group.set_attribute("role", "group");
        let _ = group.set_attribute("aria-label", label);
        capped(&list, rich::MAX_ITEMS, |question| {
            let Some(question) = question.as_string().filter(|q| !q.trim().is_empty()) else {
                return;
            };
            let chip = self.text(&group, "button", "cw-starter", &question);
            let _ = chip.set_attribute("type", "button");
            let _ = chip.set_attribute("data-q", &question);
        });
    }
}

/// Call `each` on the first `cap` items of `list`; how many that was.
fn capped(list: &Array, cap: usize, mut each: impl FnMut(JsValue)) -> usize {
    let shown = (list.length() as usize).min(cap);
    for i in 0..shown {
        each(list.get(i as u32));
    }
    shown
}

fn get(value: &JsValue, key: &str) -> JsValue {
    if value.is_object() {
        Reflect::get(value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

fn colour(series: usize) -> String {
    format!("cw-s{}", series % rich::MAX_SERIES)
}
