//! `analyst`'s cap on tool result text sent back to the model (≤ 16,000 characters, cut
//! on a row boundary with a "truncated: k of n rows" note).
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows};
use concierge_core::flows::analyst::cap::{MAX_RESULT_CHARS, cap_result};
use concierge_core::flows::analyst::tools::{DataTools, RowSource};
use concierge_core::graph::block_on;
use proptest::prelude::*;
use serde_json::{Value, json};

struct Many(usize);

impl RowSource for Many {
    fn load<'a>(&'a self, _id: &'a str) -> DataFuture<'a, DataRows> {
        let n = self.0;
        Box::pin(async move {
            Ok(DataRows {
                rows: (0..n)
                    .map(|i| json!({"khach_hang": format!("Nguyễn Văn Thành {i}"), "ghi_chu": "Đơn hàng giao nhanh ở Hà Nội", "v": i}))
                    .collect(),
                over_cap: false,
            })
        })
    }
}

fn tools_conn() -> [DataConnection; 1] {
    [DataConnection {
        id: "c1".into(),
        user_id: "alice".into(),
        name: "don_hang".into(),
        description: String::new(),
        row_count: 0,
        fields: ["khach_hang", "ghi_chu", "v"]
            .iter()
            .map(|f| DataField {
                name: (*f).into(),
                kind: "string".into(),
                examples: vec![],
            })
            .collect(),
    }]
}

#[test]
fn a_large_tool_result_is_cut_on_a_row_boundary_with_a_note() {
    let conn = tools_conn();
    let source = Many(1000);
    let tools = DataTools {
        connections: &conn,
        source: &source,
    };
    let tool = tools
        .tools()
        .into_iter()
        .find(|t| concierge_core::agent::Tool::name(t) == "execute_aggregation")
        .unwrap();
    let out = block_on(concierge_core::agent::Tool::call(
        &tool,
        json!({"connection_name": "don_hang", "pipeline": [{"$match": {"v": {"$gte": 0}}}]}),
    ))
    .unwrap();
    let text = out.to_string();
    assert!(text.chars().count() <= MAX_RESULT_CHARS, "{}", text.len());
    let kept = out["rows"].as_array().unwrap();
    assert!(kept.len() > 50 && kept.len() < 1000, "{}", kept.len());
    assert_eq!(
        out["note"],
        format!("truncated: {} of 1000 rows", kept.len())
    );
    assert_eq!(out["row_count"], 1000);
    // The first rows, whole and in order.
    for (i, row) in kept.iter().enumerate() {
        assert_eq!(row["v"], i);
        assert_eq!(row["khach_hang"], format!("Nguyễn Văn Thành {i}"));
    }
    // Small results pass unchanged.
    let small = Many(3);
    let tools = DataTools {
        connections: &conn,
        source: &small,
    };
    let tool = tools
        .tools()
        .into_iter()
        .find(|t| concierge_core::agent::Tool::name(t) == "execute_aggregation")
        .unwrap();
    let out = block_on(concierge_core::agent::Tool::call(
        &tool,
        json!({"connection_name": "don_hang", "pipeline": []}),
    ))
    .unwrap();
    assert!(out.get("note").is_none());
    assert_eq!(out["rows"].as_array().unwrap().len(), 3);
}

#[test]
fn a_single_huge_value_is_cut_at_a_character_boundary() {
    let huge = json!({"rows": [{"ghi_chu": "ệ".repeat(20_000)}], "row_count": 1});
    let out = cap_result(huge.clone(), MAX_RESULT_CHARS);
    // No row fits: the object keeps none and says so.
    assert_eq!(out["rows"], json!([]));
    assert_eq!(out["note"], "truncated: 0 of 1 rows");
    let text = cap_result(json!("ệ".repeat(20_000)), MAX_RESULT_CHARS);
    let text = text.as_str().unwrap();
    assert!(text.chars().count() <= MAX_RESULT_CHARS);
    assert!(
        text.ends_with("of 20000 characters)"),
        "{}",
        &text[text.len() - 60..]
    );
    assert!(text.starts_with("ệệ"));
}

#[test]
fn a_result_whose_rows_were_left_out_says_truncated() {
    // The query's own flag said every row came back; the cap then left rows out.
    let huge =
        json!({"rows": [{"ghi_chu": "ệ".repeat(20_000)}], "row_count": 1, "truncated": false});
    let out = cap_result(huge, MAX_RESULT_CHARS);
    assert_eq!(out["note"], "truncated: 0 of 1 rows");
    assert_eq!(out["truncated"], true, "{out}");
    let rows: Vec<Value> = (0..1000)
        .map(|i| json!({"i": i, "pad": "x".repeat(40)}))
        .collect();
    let out = cap_result(json!({"rows": rows, "truncated": false}), MAX_RESULT_CHARS);
    assert!(out["note"].as_str().unwrap().starts_with("truncated: "));
    assert_eq!(out["truncated"], true);
    // Nothing left out: the flag is the query's.
    let small = json!({"rows": [{"a": 1}], "truncated": false});
    assert_eq!(cap_result(small.clone(), MAX_RESULT_CHARS), small);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any capped result is within the limit, and when it is an object its kept rows are a
    /// prefix of the original rows with a truthful note.
    #[test]
    fn capped_results_are_within_the_limit(n in 0usize..400, width in 0usize..200, max in 200usize..20_000) {
        let rows: Vec<Value> = (0..n).map(|i| json!({"i": i, "t": "ạ".repeat(width)})).collect();
        let original = json!({"rows": rows, "row_count": n});
        let out = cap_result(original.clone(), max);
        prop_assert!(out.to_string().chars().count() <= max);
        if original.to_string().chars().count() <= max {
            prop_assert_eq!(out, original);
        } else if let Some(kept) = out["rows"].as_array() {
            prop_assert_eq!(&kept[..], &original["rows"].as_array().unwrap()[..kept.len()]);
            prop_assert_eq!(out["note"].as_str().unwrap(), format!("truncated: {} of {n} rows", kept.len()));
        }
    }
}
