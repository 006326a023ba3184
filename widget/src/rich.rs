//! The pure rules behind rich turns (`crate::payload` draws them): tool names in plain
//! words, numbers in the panel's language, which link targets are safe, and chart geometry.
//! Tested on the host.

use crate::i18n::Lang;

/// Tables show at most this many rows (the rest are counted, not drawn): a 10,000-row
/// payload must not freeze the page.
pub(crate) const MAX_ROWS: usize = 100;

/// Lists, sources, evidence and chips show at most this many items.
pub(crate) const MAX_ITEMS: usize = 50;

/// Charts draw at most this many labels and series.
pub(crate) const MAX_LABELS: usize = 60;
/// See [`MAX_LABELS`].
pub(crate) const MAX_SERIES: usize = 6;

/// A tool's name in plain words: `search_products` → `Search products`.
pub(crate) fn tool_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut prev_lower = false;
    for c in name.trim().chars() {
        if matches!(c, '_' | '-' | '.' | ':') {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            prev_lower = false;
            continue;
        }
        // camelCase → camel case
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase();
        if out.is_empty() {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out.trim_end().to_string()
}

/// `value` as people write it in `lang`: `1.234.567,5` in Vietnamese, `1,234,567.5` in
/// English; at most two decimals, trailing zeros dropped.
pub(crate) fn number(value: f64, lang: Lang) -> String {
    if !value.is_finite() {
        return String::new();
    }
    let (group, point) = match lang {
        Lang::Vi => ('.', ','),
        Lang::En => (',', '.'),
    };
    let cents = (value.abs() * 100.0).round();
    let whole = (cents / 100.0).trunc();
    let frac = (cents - whole * 100.0) as u32;
    let digits = format!("{whole:.0}");
    let mut out = String::new();
    if value < 0.0 && cents > 0.0 {
        out.push('-');
    }
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(group);
        }
        out.push(d);
    }
    if frac > 0 {
        out.push(point);
        let f = format!("{frac:02}");
        out.push_str(f.trim_end_matches('0'));
    }
    out
}

/// Where a payload's link may point: an absolute `http(s)` URL as it is, or a
/// site-relative path (`/rooms/12`) on `site` (the page embedding the panel). Anything else
/// (`javascript:`, `data:`, `//host`, relative paths, whitespace) is no link: the text shows
/// without one.
pub(crate) fn link(href: &str, site: Option<&str>) -> Option<String> {
    if href.is_empty()
        || href
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '<' | '>' | '\\'))
    {
        return None;
    }
    if href.starts_with('/') {
        if href.starts_with("//") {
            return None;
        }
        let site = site.filter(|s| s.starts_with("https://") || s.starts_with("http://"))?;
        return Some(format!("{}{href}", site.trim_end_matches('/')));
    }
    let lower = href.get(..8).unwrap_or(href).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &href[8..]
    } else if lower.starts_with("http://") {
        &href[7..]
    } else {
        return None;
    };
    (!rest.is_empty() && !rest.starts_with('/')).then(|| href.to_string())
}

/// Chart canvas (SVG user units).
pub(crate) const WIDTH: f64 = 320.0;
/// See [`WIDTH`].
pub(crate) const HEIGHT: f64 = 180.0;
/// Room under the plot for the labels.
const BOTTOM: f64 = 24.0;
const TOP: f64 = 8.0;
const SIDE: f64 = 8.0;

/// One shape of a chart; `series` picks its colour.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// A bar.
    Rect {
        /// Colour index.
        series: usize,
        /// Left, top, width, height.
        x: f64,
        /// See `x`.
        y: f64,
        /// See `x`.
        w: f64,
        /// See `x`.
        h: f64,
    },
    /// A line through points (`"x,y x,y"`).
    Line {
        /// Colour index.
        series: usize,
        /// The `points` attribute.
        points: String,
    },
    /// A pie slice (`d` of a path).
    Slice {
        /// Colour index.
        series: usize,
        /// The `d` attribute.
        d: String,
    },
    /// A category label under the plot, centred on `x`.
    Label {
        /// Centre.
        x: f64,
        /// The text.
        text: String,
    },
}

/// How a chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChartKind {
    /// Bars.
    Bar,
    /// Lines.
    Line,
    /// A pie (the first series).
    Pie,
}

impl ChartKind {
    /// From the payload's `chart` field.
    pub(crate) fn parse(kind: &str) -> Option<Self> {
        match kind {
            "bar" => Some(Self::Bar),
            "line" => Some(Self::Line),
            "pie" => Some(Self::Pie),
            _ => None,
        }
    }
}

/// The shapes of a chart of `labels` × `series` (values per label; missing, negative and
/// non-finite values count as 0). Capped at [`MAX_LABELS`] and [`MAX_SERIES`].
pub(crate) fn chart(kind: ChartKind, labels: &[String], series: &[Vec<f64>]) -> Vec<Shape> {
    let n = labels.len().min(MAX_LABELS);
    let series = &series[..series.len().min(MAX_SERIES)];
    let value = |s: &[f64], i: usize| s.get(i).copied().filter(|v| v.is_finite() && *v > 0.0);
    let mut shapes = Vec::new();
    if n == 0 || series.is_empty() {
        return shapes;
    }
    if kind == ChartKind::Pie {
        let values: Vec<f64> = (0..n)
            .map(|i| value(&series[0], i).unwrap_or(0.0))
            .collect();
        let total: f64 = values.iter().sum();
        if total <= 0.0 {
            return shapes;
        }
        let (cx, cy, r) = (WIDTH / 2.0, HEIGHT / 2.0, HEIGHT / 2.0 - SIDE);
        let point = |turns: f64| {
            let a = turns * core::f64::consts::TAU - core::f64::consts::FRAC_PI_2;
            (cx + r * a.cos(), cy + r * a.sin())
        };
        let mut start = 0.0;
        for (i, v) in values.iter().enumerate() {
            if *v <= 0.0 {
                continue;
            }
            let end = start + v / total;
            let d = if v / total > 0.9999 {
                // A whole circle: two half arcs.
                format!(
                    "M{cx:.1},{:.1}a{r:.1},{r:.1} 0 1,1 0,{:.1}a{r:.1},{r:.1} 0 1,1 0,-{:.1}Z",
                    cy - r,
                    2.0 * r,
                    2.0 * r
                )
            } else {
                let ((x0, y0), (x1, y1)) = (point(start), point(end));
                let large = u8::from(end - start > 0.5);
                format!("M{cx:.1},{cy:.1}L{x0:.1},{y0:.1}A{r:.1},{r:.1} 0 {large},1 {x1:.1},{y1:.1}Z")
            };
            shapes.push(Shape::Slice { series: i, d });
            start = end;
        }
        return shapes;
    }
    let max = series
        .iter()
        .flat_map(|s| (0..n).filter_map(|i| value(s, i)))
        .fold(0.0, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = (WIDTH - 2.0 * SIDE) / n as f64;
    let y_of = |v: f64| TOP + plot_h - v / max * plot_h;
    match kind {
        ChartKind::Bar => {
            let w = slot * 0.8 / series.len() as f64;
            for (k, s) in series.iter().enumerate() {
                for i in 0..n {
                    let v = value(s, i).unwrap_or(0.0);
                    let x = SIDE + slot * i as f64 + slot * 0.1 + w * k as f64;
                    let y = y_of(v);
                    shapes.push(Shape::Rect {
                        series: k,
                        x,
                        y,
                        w,
                        h: TOP + plot_h - y,
                    });
                }
            }
        }
        _ => {
            for (k, s) in series.iter().enumerate() {
                let points: Vec<String> = (0..n)
                    .map(|i| {
                        let x = SIDE + slot * (i as f64 + 0.5);
                        format!("{x:.1},{:.1}", y_of(value(s, i).unwrap_or(0.0)))
                    })
                    .collect();
                shapes.push(Shape::Line {
                    series: k,
                    points: points.join(" "),
                });
            }
        }
    }
    // Label every category while they fit; otherwise every k-th.
    let step = n.div_ceil(8);
    for i in (0..n).step_by(step) {
        shapes.push(Shape::Label {
            x: SIDE + slot * (i as f64 + 0.5),
            text: labels[i].chars().take(12).collect(),
        });
    }
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_in_plain_words() {
        assert_eq!(tool_words("search_products"), "Search products");
        assert_eq!(tool_words("getWarrantyStatus"), "Get warranty status");
        assert_eq!(tool_words("sql.query"), "Sql query");
        assert_eq!(tool_words(""), "");
    }

    #[test]
    fn numbers_in_the_panels_language() {
        assert_eq!(number(22_490_000.0, Lang::Vi), "22.490.000");
        assert_eq!(number(1234.5, Lang::Vi), "1.234,5");
        assert_eq!(number(1234.567, Lang::En), "1,234.57");
        assert_eq!(number(-0.25, Lang::Vi), "-0,25");
        assert_eq!(number(999.0, Lang::Vi), "999");
        assert_eq!(number(f64::NAN, Lang::Vi), "");
    }

    #[test]
    fn only_http_links_and_site_paths() {
        let site = Some("https://shop.example");
        assert_eq!(
            link("https://a.example/x?y=1", site).as_deref(),
            Some("https://a.example/x?y=1")
        );
        assert_eq!(
            link("/rooms/12", site).as_deref(),
            Some("https://shop.example/rooms/12")
        );
        for bad in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "data:text/html,x",
            "//evil.example",
            "rooms/12",
            "https://",
            "https:///x",
            "https://a.example/ x",
            "vbscript:x",
            "",
        ] {
            assert_eq!(link(bad, site), None, "{bad}");
        }
        assert_eq!(link("/rooms/12", None), None);
    }

    #[test]
    fn bars_scale_to_the_largest_value() {
        let labels = vec!["T1".to_string(), "T2".to_string()];
        let shapes = chart(ChartKind::Bar, &labels, &[vec![50.0, 100.0]]);
        let heights: Vec<f64> = shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Rect { h, .. } => Some(*h),
                _ => None,
            })
            .collect();
        assert_eq!(heights.len(), 2);
        assert!((heights[1] - 2.0 * heights[0]).abs() < 1e-9);
        assert!(shapes.iter().any(|s| *s == Shape::Label { x: SIDE + (WIDTH - 2.0 * SIDE) / 4.0, text: "T1".into() }));
    }

    #[test]
    fn lines_and_pies() {
        let labels: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let shapes = chart(ChartKind::Line, &labels, &[vec![1.0, 2.0, 3.0], vec![3.0]]);
        let lines = shapes.iter().filter(|s| matches!(s, Shape::Line { .. })).count();
        assert_eq!(lines, 2);
        let pie = chart(ChartKind::Pie, &labels, &[vec![1.0, 0.0, 3.0]]);
        assert_eq!(pie.len(), 2, "a zero slice is not drawn");
        let whole = chart(ChartKind::Pie, &labels, &[vec![5.0]]);
        assert!(matches!(&whole[0], Shape::Slice { d, .. } if d.contains('a')));
        assert!(chart(ChartKind::Pie, &labels, &[vec![]]).is_empty());
        assert!(chart(ChartKind::Bar, &[], &[vec![1.0]]).is_empty());
    }

    #[test]
    fn huge_charts_are_capped() {
        let labels: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let series = vec![vec![1.0; 1000]; 20];
        let bars = chart(ChartKind::Bar, &labels, &series)
            .iter()
            .filter(|s| matches!(s, Shape::Rect { .. }))
            .count();
        assert_eq!(bars, MAX_LABELS * MAX_SERIES);
    }
}
