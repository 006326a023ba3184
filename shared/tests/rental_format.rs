//! The `---END` format: parsing, and the streaming gates' chunk-split invariance.
#![allow(clippy::unwrap_used)]

use concierge_core::flows::rental::format::{EndGate, LabelGate, enforce_label, parse};
use proptest::prelude::*;
use serde_json::json;

#[test]
fn the_seed_example_parses() {
    let text = "[TENANT] Đây là 5 phòng mới nhất ở gò vấp, tôi thấy căn Phòng trọ Lan Anh là phù hợp nhất đó\n---END\nLIST: [{\"id\":\"123\",\"title\":\"Phòng trọ Lan Anh\",\"path\":\"/rooms/123\",\"entity\":\"room\"}]\nTABLE: null\nCHART: null";
    let parsed = parse(text);
    assert!(parsed.message.starts_with("[TENANT] Đây là 5 phòng"));
    let sections = parsed.sections.unwrap();
    assert_eq!(sections.list.unwrap()[0]["id"], "123");
    assert_eq!((sections.table, sections.chart), (None, None));
    let inline = parse("hi ---END LIST:[] TABLE:{} CHART:{\"type\":\"pie\"}");
    let sections = inline.sections.unwrap();
    assert_eq!(inline.message, "hi");
    assert_eq!(sections.list, Some(json!([])));
    assert_eq!(sections.chart, Some(json!({"type": "pie"})));
    let broken = parse("x\n---END\nLIST: [oops\nTABLE: {\"a\":1}");
    assert_eq!(broken.sections.unwrap().list, None);
    assert_eq!(parse("no delimiter").sections, None);
}

#[test]
fn labels_are_enforced() {
    assert_eq!(
        enforce_label("Xin chào", Some("[GUEST]")),
        "[GUEST] Xin chào"
    );
    assert_eq!(
        enforce_label("[TENANT] Xin chào", Some("[GUEST]")),
        "[GUEST] Xin chào"
    );
    assert_eq!(
        enforce_label("Xin [TENANT] chào", Some("[GUEST]")),
        "[GUEST] Xin [TENANT] chào"
    );
    assert_eq!(enforce_label("[LANDLORD] Xin chào", None), "Xin chào");
}

fn stream(text: &str, cuts: &[usize], label: Option<&str>) -> String {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| c % (text.len() + 1))
        .filter(|c| text.is_char_boundary(*c))
        .collect();
    points.sort_unstable();
    points.dedup();
    let (mut end, mut labels) = (EndGate::default(), LabelGate::new(label));
    let mut out = String::new();
    let mut last = 0;
    for point in points.into_iter().chain([text.len()]) {
        out += &labels.push(&end.push(&text[last..point]));
        last = point;
    }
    out += &labels.push(&end.finish());
    out += &labels.finish();
    out
}

proptest! {
    /// However the model's text is split into chunks, what streams is the labelled message
    /// and never anything after `---END`.
    #[test]
    fn streaming_is_chunk_split_invariant(
        message in "(\\[(GUEST|TENANT|LANDLORD)\\] )?[a-zA-Z -]{0,30}",
        tail in "[a-zA-Z:\\[\\]{} -]{0,30}",
        delimited in any::<bool>(),
        cuts in prop::collection::vec(0usize..80, 0..8),
    ) {
        let text = if delimited { format!("{message}\n---END\nLIST: null {tail}") } else { message.clone() };
        let expected = enforce_label(&parse(&text).message, Some("[TENANT]"));
        let shown = stream(&text, &cuts, Some("[TENANT]"));
        prop_assert_eq!(&shown, &expected);
        if delimited {
            prop_assert!(!shown.contains("---END") && !shown.contains("LIST:"));
        }
    }
}
