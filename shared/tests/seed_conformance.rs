//! Issue 27 (seed conformance) through the templates' public APIs, for every input shape
//! the end-to-end tests (`tests/tests/e2e/conformance_*`) do not reach:
//! - `analyst`: `count` without a field counts rows on the evaluator path too (no SQL);
//!   `truncated` is exactly "the row cap removed rows", for any row count and `$limit`;
//! - `guarded`: links are unwrapped, then validated;
//! - `knowledge`: the amended query mapping (TEMPLATES.md §3.2) for plans the seed does
//!   not show, and the seed's §9.2 stream with its one-decimal percentages.
#![allow(clippy::unwrap_used)]

use concierge_core::agent::Tool;
use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows, is_web_url};
use concierge_core::flows::analyst::tools::{DataTools, RowSource};
use concierge_core::flows::guarded::clean_url;
use concierge_core::flows::knowledge::{
    Access, KnowledgeConfig, RouterOutput, SeedStreamEncoder, ToolName, parse_router,
};
use concierge_core::graph::block_on;
use concierge_core::stream::TurnEncoder;
use concierge_core::turn::TurnEvent;
use proptest::prelude::*;
use serde_json::{Value, json};

struct Rows(Vec<Value>);

impl RowSource for Rows {
    fn load<'a>(&'a self, _id: &'a str) -> DataFuture<'a, DataRows> {
        let rows = self.0.clone();
        Box::pin(async move {
            Ok(DataRows {
                rows,
                over_cap: false,
            })
        })
    }
}

fn connection(fields: &[(&str, &str)]) -> [DataConnection; 1] {
    [DataConnection {
        id: "c1".into(),
        user_id: "alice".into(),
        name: "don_hang".into(),
        description: String::new(),
        row_count: 0,
        fields: fields
            .iter()
            .map(|(name, kind)| DataField {
                name: (*name).into(),
                kind: (*kind).into(),
                examples: vec![],
            })
            .collect(),
    }]
}

fn call(tools: &DataTools<'_>, name: &str, args: Value) -> Result<Value, String> {
    let tool = tools
        .tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap();
    block_on(tool.call(args)).map_err(|e| e.to_string())
}

#[test]
fn count_without_a_field_counts_rows_and_other_operations_need_one() {
    let conn = connection(&[
        ("nen_tang", "string"),
        ("doanh_thu", "number"),
        ("ngay", "date"),
    ]);
    let source = Rows(vec![
        json!({"nen_tang": "Shopee", "doanh_thu": 5, "ngay": "2024-01-02"}),
        json!({"nen_tang": "Shopee", "doanh_thu": null, "ngay": "2024-02-02"}),
        json!({"nen_tang": "Shopee", "ngay": "2024-02-03"}),
        json!({"nen_tang": "Tiki", "doanh_thu": 7, "ngay": "2024-01-05"}),
    ]);
    let tools = DataTools {
        connections: &conn,
        source: &source,
    };
    let shopee = call(
        &tools,
        "aggregate_data",
        json!({"connection_name": "don_hang",
        "operation": "count", "filters": {"nen_tang": {"$in": ["Shopee"]}}}),
    )
    .unwrap();
    assert_eq!(
        (&shopee["value"], &shopee["row_count"]),
        (&json!(3), &json!(3))
    );
    assert_eq!(shopee["field"], Value::Null);
    let grouped = call(
        &tools,
        "aggregate_data",
        json!({"connection_name": "don_hang",
        "operation": "count", "group_by": "nen_tang", "field": null}),
    )
    .unwrap();
    assert_eq!(
        grouped["groups"][0],
        json!({"group": "Shopee", "value": 3, "row_count": 3})
    );
    let present = call(
        &tools,
        "aggregate_data",
        json!({"connection_name": "don_hang",
        "operation": "count", "field": "doanh_thu"}),
    )
    .unwrap();
    assert_eq!(present["value"], 2);
    let periods = call(
        &tools,
        "compare_periods",
        json!({"connection_name": "don_hang",
        "operation": "count", "date_field": "ngay", "period1_from": "2024-01-01",
        "period1_to": "2024-01-31", "period2_from": "2024-02-01", "period2_to": "2024-02-29"}),
    )
    .unwrap();
    assert_eq!(
        (&periods["period1_value"], &periods["period2_value"]),
        (&json!(2), &json!(2))
    );
    for op in ["sum", "avg", "min", "max"] {
        for tool in ["aggregate_data", "compare_periods"] {
            let err = call(
                &tools,
                tool,
                json!({"connection_name": "don_hang", "operation": op,
                "date_field": "ngay", "period1_from": "2024-01-01", "period1_to": "2024-01-31",
                "period2_from": "2024-02-01", "period2_to": "2024-02-29"}),
            )
            .unwrap_err();
            assert!(err.contains("field is required"), "{tool} {op}: {err}");
        }
    }
    // An unknown field is still named as such, with or without count.
    let err = call(
        &tools,
        "aggregate_data",
        json!({"connection_name": "don_hang",
        "operation": "count", "field": "x"}),
    )
    .unwrap_err();
    assert!(
        err.starts_with("Field 'x' not found in 'don_hang'"),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// `truncated` is true exactly when the 1,000-row cap removed rows the pipeline as
    /// written would have returned (or counted).
    #[test]
    fn truncated_means_the_cap_removed_rows(
        n in prop_oneof![0usize..50, 990usize..1010, 1500usize..3200],
        limit in prop::option::of(prop_oneof![1u64..20, 995u64..1005, 1001u64..6000]),
        count in any::<bool>(),
    ) {
        let conn = connection(&[("i", "number")]);
        let source = Rows((0..n).map(|i| json!({"i": i})).collect());
        let tools = DataTools { connections: &conn, source: &source };
        let mut stages = Vec::new();
        if let Some(limit) = limit {
            stages.push(json!({"$limit": limit}));
        }
        if count {
            stages.push(json!({"$count": "n"}));
        }
        let out = call(&tools, "execute_aggregation",
            json!({"connection_name": "don_hang", "pipeline": stages})).unwrap();
        let written = limit.map_or(n, |l| n.min(l as usize));
        let cut = if count {
            // A count over a clamped `$limit` counts at most 1,000 rows.
            limit.is_some_and(|l| l > 1000 && n > 1000)
        } else {
            written > 1000
        };
        prop_assert_eq!(&out["truncated"], &json!(cut), "n {} limit {:?} count {}", n, limit, count);
        let rows = out["rows"].as_array().unwrap().len();
        prop_assert!(rows <= 1000);
        if !count {
            prop_assert_eq!(rows, written.min(1000));
        }
    }
}

#[test]
fn links_are_unwrapped_then_validated() {
    assert_eq!(clean_url("[C](https://c.example/x)"), "https://c.example/x");
    assert_eq!(clean_url("<https://d.example/y>"), "https://d.example/y");
    for link in [
        "[J](javascript:alert(1))",
        "<javascript:alert(1)>",
        "[x](ftp://a.example/)",
    ] {
        assert!(!is_web_url(clean_url(link)), "{link}");
    }
}

fn plan_of(reply: &Value) -> Vec<(String, ToolName, Option<usize>, String)> {
    let config = KnowledgeConfig::default();
    let access = Access::of(None, &config.permissions);
    let Ok(RouterOutput::Plan(plan)) =
        parse_router(&reply.to_string(), "q", &config, &access, false)
    else {
        panic!("not a plan");
    };
    plan.tasks()
        .map(|t| (t.node_id.clone(), t.tool, t.query_index, t.query.clone()))
        .collect()
}

fn task(stage: &str, agent: &str, tool: &str, message: &str) -> Value {
    json!({stage: [{"agent": agent, "tool": tool, "message": message, "status": "pending"}]})
}

#[test]
fn leftover_queries_feed_the_agents_summary_or_math_task() {
    let queries = json!([{"1": "chính sách"}, {"2": "tính chi phí"}]);
    // The tools list names math at query 2's position (seed §9.1): math is fed.
    let plan = plan_of(
        &json!({"agents": {"hr": {"queries": queries, "tools": ["rag_tool", "math_tool"]}},
        "execution_flow": {"planning": {"tasks": [task("1", "hr", "rag_tool", "Tra"),
            task("2", "hr", "summary_tool", "Tóm tắt"), task("3", "hr", "math_tool", "Tính")]}}}),
    );
    assert_eq!(plan.len(), 3);
    assert_eq!(
        plan[0],
        (
            "hr#rag".into(),
            ToolName::RagTool,
            Some(1),
            "chính sách".into()
        )
    );
    assert_eq!(plan[1].3, "Tóm tắt");
    assert_eq!(plan[2].3, "Tính\ntính chi phí");
    // Otherwise the agent's next summary/math task in execution order.
    let plan = plan_of(
        &json!({"agents": {"hr": {"queries": queries, "tools": ["rag_tool"]}},
        "execution_flow": {"planning": {"tasks": [task("3", "hr", "math_tool", "Tính"),
            task("1", "hr", "rag_tool", "Tra"), task("2", "hr", "summary_tool", "Tóm tắt")]}}}),
    );
    assert_eq!(plan.len(), 3);
    assert_eq!(
        (plan[1].0.as_str(), plan[1].3.as_str()),
        ("hr#summary", "Tóm tắt\ntính chi phí")
    );
    assert_eq!(plan[2].3, "Tính");
    // An explicit query_index on a math task wins.
    let plan = plan_of(&json!({"agents": {"hr": {"queries": queries}},
        "execution_flow": {"planning": {"tasks": [task("1", "hr", "rag_tool", "Tra"),
            {"2": [{"agent": "hr", "tool": "summary_tool", "message": "Tóm tắt"},
                   {"agent": "hr", "tool": "math_tool", "message": "Tính", "query_index": 2}]}]}}}));
    assert_eq!(plan.len(), 3);
    assert_eq!(plan[1].3, "Tóm tắt");
    assert_eq!(plan[2].3, "Tính\ntính chi phí");
    // No summary/math task to feed: the query is retrieved (a rag task in the first
    // stage the plan has).
    let plan = plan_of(&json!({"agents": {"hr": {"queries": queries}},
        "execution_flow": {"planning": {"tasks": [task("2", "hr", "rag_tool", "Tra")]}}}));
    let rag: Vec<(&str, Option<usize>, &str)> = plan
        .iter()
        .map(|t| (t.0.as_str(), t.2, t.3.as_str()))
        .collect();
    assert_eq!(
        rag,
        [
            ("hr#rag:1", Some(1), "chính sách"),
            ("hr#rag:2", Some(2), "tính chi phí")
        ]
    );
    // An agent with no task at all: one stage-1 rag task per query.
    let plan = plan_of(
        &json!({"agents": {"general": {"queries": queries}, "hr": {"queries": []}},
        "execution_flow": {"planning": {"tasks": [task("1", "hr", "summary_tool", "Tóm tắt")]}}}),
    );
    let ids: Vec<&str> = plan.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(ids, ["general#rag:1", "general#rag:2", "hr#summary"]);
}

#[test]
fn the_seed_stream_shows_one_decimal_percentages() {
    let mut encoder = SeedStreamEncoder::new();
    let mut out = String::new();
    for (i, pct) in [(1, 81.7f32), (2, 88.3), (3, 95.0)] {
        let event = TurnEvent::Progress {
            message: format!("Completed {i}/3: x"),
            percentage: Some(pct),
            stage: Some("task_completed".into()),
        };
        encoder.encode(&event, &mut out).unwrap();
    }
    let pcts: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["output"]["progress_percentage"].to_string()
        })
        .collect();
    assert_eq!(pcts, ["81.7", "88.3", "95.0"]);
}
