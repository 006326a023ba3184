//! The seed's ten correctness properties (≥ 100 cases each), the pipeline validator's
//! adversarial corpus, number formatting and data-set inference for `analyst`.
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::{DataConnection, DataFuture, DataRows};
use concierge_core::flows::analyst::data::{
    CsvReader, Typing, parse_csv, parse_date, parse_number, prepare_table,
};
use concierge_core::flows::analyst::format::{Normaliser, format_percent, format_vnd, normalise};
use concierge_core::flows::analyst::pipeline::{MAX_LIMIT, Owned, validate};
use concierge_core::flows::analyst::tools::{DataTools, OPERATIONS, RowSource, comparison};
use concierge_core::flows::analyst::{INTENTS, parse_intent};
use concierge_core::graph::block_on;
use proptest::prelude::*;
use serde_json::{Value, json};

const OWNED: [Owned<'static>; 2] = [
    Owned {
        id: "c1",
        name: "don_hang",
    },
    Owned {
        id: "c9",
        name: "khach_hang",
    },
];

/// Rows per connection id; rows carry their connection id as `_src` (provenance).
struct Rows(Vec<(String, Vec<Value>)>);

impl RowSource for Rows {
    fn load<'a>(&'a self, id: &'a str) -> DataFuture<'a, DataRows> {
        Box::pin(async move {
            Ok(DataRows {
                rows: self
                    .0
                    .iter()
                    .find(|(i, _)| i == id)
                    .map(|(_, r)| r.clone())
                    .unwrap_or_default(),
                over_cap: false,
            })
        })
    }
}

fn conn(id: &str, user: &str, name: &str) -> DataConnection {
    DataConnection {
        id: id.into(),
        user_id: user.into(),
        name: name.into(),
        description: String::new(),
        row_count: 0,
        fields: ["_src", "k", "v", "d"]
            .iter()
            .map(|f| concierge_core::boundary::DataField {
                name: (*f).into(),
                kind: "string".into(),
                examples: vec![],
            })
            .collect(),
    }
}

fn rows(src: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"_src": src, "k": format!("k{}", i % 7), "v": i as i64, "d": format!("2024-01-{:02}", i % 28 + 1), "arr": [1, 2, 3]}))
        .collect()
}

#[test]
fn adversarial_pipelines_are_refused_with_readable_errors() {
    let corpus: Vec<(Value, &str)> = vec![
        (json!([{"$out": "x"}]), "Stage $out is blocked"),
        (
            json!([{"$match": {}}, {"$merge": {"into": "x"}}]),
            "Stage $merge is blocked",
        ),
        (
            json!([{"$limit": 1}, {"$match": {}}, {"$delete": {}}]),
            "Stage $delete is blocked",
        ),
        (
            json!([{"$match": {}, "$out": "x"}]),
            "Stage $out is blocked",
        ),
        (
            json!([{"$match": {}, "$sort": {"a": 1}}]),
            "exactly one key",
        ),
        (json!([{"$OUT": "x"}]), "Stage $OUT is not allowed"),
        (json!([{" $out": "x"}]), "is not allowed"),
        (
            json!([{"$unionWith": "c2"}]),
            "Stage $unionWith is not allowed; allowed: $match",
        ),
        (
            json!([{"$facet": {"a": [{"$out": "x"}]}}]),
            "Stage $facet is not allowed",
        ),
        (json!([{"$graphLookup": {}}]), "not allowed"),
        (json!([{"$set": {"a": 1}}]), "not allowed"),
        (json!([{"$addFields": {"a": 1}}]), "not allowed"),
        (json!([{"$replaceRoot": {"newRoot": "$a"}}]), "not allowed"),
        (
            json!([{"$match": {"$where": "sleep(1000)"}}]),
            "Operator $where is not allowed",
        ),
        (
            json!([{"$group": {"_id": null, "x": {"$function": {"body": "f"}}}}]),
            "Operator $function is not allowed",
        ),
        (
            json!([{"$group": {"_id": null, "x": {"$accumulator": {}}}}]),
            "Operator $accumulator is not allowed",
        ),
        (
            json!([{"$match": {"$expr": {"$gt": ["$a", 1]}}}]),
            "Operator $expr is not allowed",
        ),
        (
            json!([{"$match": {"a": {"$or": [{"b": {"$where": "1"}}]}}}]),
            "Operator $where is not allowed",
        ),
        (
            json!([{"$lookup": {"from": "c2", "localField": "a", "foreignField": "b", "as": "j"}}]),
            "Connection 'c2' not found",
        ),
        (
            json!([{"$lookup": {"from": "luong_nhan_vien", "localField": "a", "foreignField": "b", "as": "j"}}]),
            "Connection 'luong_nhan_vien' not found",
        ),
        (
            json!([{"$lookup": {"from": "don_hang", "let": {}, "pipeline": [{"$out": "x"}], "as": "j"}}]),
            "$lookup field 'let' is not supported",
        ),
        (
            json!([{"$lookup": {"from": "don_hang", "pipeline": [{"$merge": "x"}], "as": "j", "localField": "a", "foreignField": "b"}}]),
            "$lookup field 'pipeline' is not supported",
        ),
        (json!([{"$limit": 0}]), "$limit must be a positive integer"),
        (json!([{"$limit": -5}]), "$limit must be a positive integer"),
        (
            json!([{"$limit": 2.5}]),
            "$limit must be a positive integer",
        ),
        (
            json!([{"$limit": "10"}]),
            "$limit must be a positive integer",
        ),
        (json!([{"$sort": {"a": 2}}]), "must be 1 or -1"),
        (json!([{"$count": "$x"}]), "$count takes"),
        (json!([{"$count": "a.b"}]), "$count takes"),
        (json!([{"$unwind": "a"}]), "$unwind path"),
        (json!({"$match": {}}), "must be a JSON array"),
        (json!(["$out"]), "must be an object"),
        (json!([{}]), "exactly one key"),
        (
            json!([{"$group": {"_id": {"$regex": ".*"}}}]),
            "$regex works only in $match",
        ),
        (
            json!([{"$match": {"$regex": "a"}}]),
            "$regex goes inside a field condition",
        ),
        (
            json!([{"$match": {"a": {"$options": "i"}}}]),
            "$options goes only with $regex",
        ),
        (
            json!([{"$match": {"a": {"$regex": "a".repeat(300)}}}]),
            "longer than 256 characters",
        ),
    ];
    let mut deep = json!({"a": 1});
    for _ in 0..40 {
        deep = json!({"$and": [deep]});
    }
    let mut corpus = corpus;
    corpus.push((json!([{"$match": deep}]), "nests deeper than 32"));
    corpus.push((Value::Array(vec![json!({"$limit": 1}); 21]), "at most 20"));
    for (pipeline, want) in &corpus {
        let err = validate(pipeline, &OWNED).expect_err(&pipeline.to_string());
        assert!(err.contains(want), "{pipeline}: {err}");
        assert!(!err.contains("c2 ") && !err.contains("bob"), "{err}");
    }
    // Huge $limit is clamped; the sanitizer appends the cap.
    let ok = validate(&json!([{"$limit": 5000}]), &OWNED).unwrap();
    assert_eq!(
        ok.stages,
        vec![json!({"$limit": 1000}), json!({"$limit": 1000})]
    );
    let ok = validate(&json!([]), &OWNED).unwrap();
    assert_eq!(ok.stages, vec![json!({"$limit": MAX_LIMIT})]);
    let ok = validate(&json!([{"$lookup": {"from": "khach_hang", "localField": "a", "foreignField": "b", "as": "j"}}]), &OWNED).unwrap();
    assert_eq!(ok.lookups, ["c9"]);
}

#[test]
fn vietnamese_number_formats() {
    assert_eq!(format_vnd(150_000_000.0), "150.000.000 VND");
    assert_eq!(format_vnd(1_000_000.0), "1.000.000 VND");
    assert_eq!(format_vnd(-7_750_000.0), "-7.750.000 VND");
    assert_eq!(format_vnd(999.6), "1.000 VND");
    assert_eq!(format_percent(15.5), "15,5%");
    assert_eq!(format_percent(20.0), "20%");
    assert_eq!(format_percent(15.55), "15,6%");
    assert_eq!(format_percent(-3.04), "-3%");
    assert_eq!(
        normalise("Tổng doanh thu tháng 1/2024: 150000000 VND"),
        "Tổng doanh thu tháng 1/2024: 150.000.000 VND"
    );
    assert_eq!(
        normalise("tăng 15.5% (từ 50000000 lên 57750000 VND)."),
        "tăng 15,5% (từ 50000000 lên 57.750.000 VND)."
    );
    assert_eq!(normalise("1. Áo thun - 500 đơn"), "1. Áo thun - 500 đơn");
    assert_eq!(
        normalise("mã 2024 và 12000 đơn, 5000đ"),
        "mã 2024 và 12000 đơn, 5.000đ"
    );
    assert_eq!(normalise("150,000,000 VND"), "150.000.000 VND");
}

/// Digits glued to a word stay as written even when a chunk ends on the word (found by
/// `normaliser_is_chunk_split_invariant`: `g` | `0.0%` became `g0,0%`).
#[test]
fn a_number_glued_to_a_word_is_kept_across_chunks() {
    for (before, after) in [("mã SKU", "12.5% x"), ("g", "0.0%"), ("m", "1500000 VND")] {
        let mut n = Normaliser::new();
        let out = n.push(before) + &n.push(after) + &n.finish();
        assert_eq!(out, normalise(&format!("{before}{after}")));
    }
    let mut n = Normaliser::new();
    let out =
        n.push("tăng ") + &n.push("15.5% và ") + &n.push("2000000") + &n.push(" VND") + &n.finish();
    assert_eq!(out, "tăng 15,5% và 2.000.000 VND");
}

#[test]
fn csv_and_inference_accept_vietnamese_formats() {
    let (header, cells) = parse_csv("ngay,san_pham,doanh_thu,ti_le\n15/1/2024,\"Áo, thun\",150.000.000,\"1,5\"\n2024-02-01,Quần,2000000,2.5\n").unwrap();
    let prepared = prepare_table(header, cells).unwrap();
    let kinds: Vec<&str> = prepared.fields.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["date", "string", "number", "number"]);
    assert_eq!(
        prepared.rows[0],
        json!({"ngay": "2024-01-15", "san_pham": "Áo, thun", "doanh_thu": 150000000, "ti_le": 1.5})
    );
    assert_eq!(parse_number("1.234,5"), Some(1234.5));
    assert_eq!(parse_number("1.2.3"), None);
    assert_eq!(parse_date("31/12/2024").as_deref(), Some("2024-12-31"));
    assert_eq!(parse_date("32/1/2024"), None);
    assert!(parse_csv("a,b\n1\n").unwrap_err().contains("row 2"));
}

/// Whether this build of the core offers `$regex` (its `analyst-regex` feature).
fn regex_available() -> bool {
    validate(&json!([{"$match": {"a": {"$regex": "a"}}}]), &OWNED).is_ok()
}

fn run(tools: &DataTools<'_>, name: &str, args: Value) -> Result<Value, String> {
    block_on(tools.run(name, args)).map_err(|e| e.message().to_string())
}

fn stage() -> impl Strategy<Value = Value> {
    let name = prop::sample::select(vec![
        "$match",
        "$group",
        "$sort",
        "$limit",
        "$project",
        "$lookup",
        "$unwind",
        "$count",
        "$out",
        "$merge",
        "$delete",
        "$facet",
        "$unionWith",
        "$where",
        "$Out",
        "$regex",
        "$regexGroup",
    ]);
    let from = prop::sample::select(vec![
        "don_hang",
        "khach_hang",
        "luong_nhan_vien",
        "c2",
        "c1",
    ]);
    (name, from, 0i64..5000).prop_map(|(n, from, k)| match n {
        "$match" => json!({"$match": {"v": {"$gte": k % 50}}}),
        "$group" => {
            json!({"$group": {"_id": "$k", "s": {"$sum": "$v"}, "src": {"$first": "$_src"}}})
        }
        "$sort" => json!({"$sort": {"v": -1}}),
        "$limit" => json!({"$limit": k}),
        "$project" => json!({"$project": {"_src": 1, "v": 1, "k": 1}}),
        "$lookup" => {
            json!({"$lookup": {"from": from, "localField": "k", "foreignField": "k", "as": "j"}})
        }
        "$unwind" => json!({"$unwind": "$arr"}),
        "$count" => json!({"$count": "n"}),
        "$regex" => {
            json!({"$match": {"k": {"$regex": format!("^K[0-{}]", k % 7), "$options": "i"}}})
        }
        "$regexGroup" => json!({"$group": {"_id": {"$regex": "k"}}}),
        other => json!({ other: {} }),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    // Feature: ai-chat-agent, Property 1: For any user message, the Intent_Classifier SHALL return exactly one of: "data_query", "chat", or "unclear".
    #[test]
    fn property_1_intent_is_one_of_three(reply in ".{0,40}", label in prop::sample::select(vec!["data_query", "chat", "unclear"])) {
        prop_assert!(INTENTS.contains(&parse_intent(&reply)));
        prop_assert_eq!(parse_intent(&format!(" \"{}\". ", label.to_uppercase())), label);
        prop_assert_eq!(parse_intent(&format!("Intent: {label}")), label);
        prop_assert_eq!(parse_intent(&format!("{{\"choice\": \"{label}\"}}")), label);
    }

    // Feature: ai-chat-agent, Property 3: For any data query, all returned results SHALL only contain data from connections where connection.user_id equals the requesting user's ID.
    #[test]
    fn property_3_data_isolation(pipeline in prop::collection::vec(stage(), 0..6), n in 1usize..60) {
        let mine = [conn("c1", "a", "don_hang"), conn("c9", "a", "khach_hang")];
        let source = Rows(vec![("c1".into(), rows("c1", n)), ("c9".into(), rows("c9", n)), ("c2".into(), rows("c2", n))]);
        let tools = DataTools { connections: &mine, source: &source };
        let out = run(&tools, "execute_aggregation", json!({"connection_name": "don_hang", "pipeline": pipeline}));
        let text = match out { Ok(v) => v.to_string(), Err(e) => e };
        prop_assert!(!text.contains("\"c2\""), "{}", text);
        let out = run(&tools, "aggregate_data", json!({"connection_name": "luong_nhan_vien", "operation": "sum", "field": "v"}));
        prop_assert!(out.unwrap_err().contains("Available: don_hang, khach_hang"));
    }

    // Feature: ai-chat-agent, Property 4: For any execute_aggregation call, the pipeline SHALL NOT contain blocked stages ($out, $merge, $delete), and all $lookup targets SHALL belong to the user.
    #[test]
    fn property_4_pipeline_validation(pipeline in prop::collection::vec(stage(), 0..8)) {
        let result = validate(&Value::Array(pipeline.clone()), &OWNED);
        let bad = pipeline.iter().any(|s| {
            let key = s.as_object().unwrap().keys().next().unwrap().clone();
            let from = s.pointer("/$lookup/from").and_then(Value::as_str);
            !["$match","$group","$sort","$limit","$project","$lookup","$unwind","$count"].contains(&key.as_str())
                || s.get("$limit").and_then(Value::as_i64) == Some(0)
                || s.pointer("/$group/_id/$regex").is_some()
                // Without the core's `analyst-regex` feature `$regex` is refused.
                || (s.pointer("/$match/k/$regex").is_some() && !regex_available())
                || from.is_some_and(|f| !["don_hang","khach_hang","c1","c9"].contains(&f))
        });
        prop_assert_eq!(result.is_err(), bad);
        if let Ok(ok) = result {
            for s in &ok.stages {
                let key = s.as_object().unwrap().keys().next().unwrap();
                prop_assert!(!["$out","$merge","$delete"].contains(&key.as_str()));
            }
            prop_assert!(ok.lookups.iter().all(|l| l == "c1" || l == "c9"));
        }
    }

    // Feature: ai-chat-agent, Property 5: For any execute_aggregation call, the returned results SHALL contain at most 1000 rows.
    #[test]
    fn property_5_result_limit(n in 0usize..3000, limit in prop::option::of(1i64..6000), unwind in any::<bool>()) {
        let mine = [conn("c1", "a", "don_hang")];
        let source = Rows(vec![("c1".into(), rows("c1", n))]);
        let tools = DataTools { connections: &mine, source: &source };
        let mut pipeline = vec![];
        if unwind { pipeline.push(json!({"$unwind": "$arr"})); }
        if let Some(l) = limit { pipeline.push(json!({"$limit": l})); }
        let out = run(&tools, "execute_aggregation", json!({"connection_name": "don_hang", "pipeline": pipeline})).unwrap();
        let got = out["rows"].as_array().unwrap().len();
        prop_assert!(got <= 1000);
        prop_assert_eq!(out["row_count"].as_u64().unwrap() as usize, got);
    }

    // Feature: ai-chat-agent, Property 6: For any aggregate_data call with operation O, O SHALL be one of: "sum", "count", "avg", "min", "max".
    #[test]
    fn property_6_operation_validity(op in "[a-zA-Z]{0,6}|sum|count|avg|min|max|SUM") {
        let mine = [conn("c1", "a", "don_hang")];
        let source = Rows(vec![("c1".into(), rows("c1", 10))]);
        let tools = DataTools { connections: &mine, source: &source };
        let out = run(&tools, "aggregate_data", json!({"connection_name": "don_hang", "operation": op, "field": "v"}));
        prop_assert_eq!(out.is_ok(), OPERATIONS.contains(&op.as_str()));
        if let Err(e) = out { prop_assert!(e.contains("sum, count, avg, min, max")); }
        else { let sum: i64 = (0..10).sum(); if op == "sum" { prop_assert_eq!(out.unwrap()["value"].clone(), json!(sum)); } }
    }

    // Feature: ai-chat-agent, Property 7: For any compare_periods call, the result SHALL include period1_value, period2_value, difference, and percentage_change where percentage_change = (period2 - period1) / period1 * 100.
    #[test]
    fn property_7_period_comparison(a in -1_000_000i64..1_000_000, b in -1_000_000i64..1_000_000) {
        let fields: Vec<(&str, Value)> = comparison(&json!(a), &json!(b)).into_iter().collect();
        let get = |k: &str| fields.iter().find(|(n, _)| *n == k).unwrap().1.clone();
        prop_assert_eq!(get("period1_value"), json!(a));
        prop_assert_eq!(get("period2_value"), json!(b));
        prop_assert_eq!(get("difference").as_f64().unwrap(), (b - a) as f64);
        if a == 0 { prop_assert!(get("percentage_change").is_null()); }
        else {
            let want = (b - a) as f64 / a as f64 * 100.0;
            prop_assert!((get("percentage_change").as_f64().unwrap() - want).abs() < 1e-9);
        }
    }

    // The streaming normaliser gives the same text however it is chunked.
    #[test]
    fn normaliser_is_chunk_split_invariant(text in "[0-9 .,%VNDđồng₫ab]{0,40}", cuts in prop::collection::vec(0usize..40, 0..6)) {
        let whole = normalise(&text);
        let chars: Vec<char> = text.chars().collect();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(chars.len())).collect();
        cuts.sort_unstable();
        let mut n = Normaliser::new();
        let mut out = String::new();
        let mut last = 0;
        for c in cuts {
            out.push_str(&n.push(&chars[last..c].iter().collect::<String>()));
            last = c;
        }
        out.push_str(&n.push(&chars[last..].iter().collect::<String>()));
        out.push_str(&n.finish());
        prop_assert_eq!(out, whole);
    }

    // A CSV read piece by piece and typed slice by slice (what the Worker does with an
    // upload, yielding between pieces) is the table read and typed whole: the same rows,
    // kinds, examples and errors, wherever the pieces and slices are cut (inside a quoted
    // field, between the two quotes of `""`, inside a BOM or CRLF).
    #[test]
    fn csv_read_and_typed_in_pieces_is_the_whole(
        text in "\u{feff}?(a|b|\"c,\"\"d\"\")(,(x|y|z))*\r?\n((1\\.500|2,5|-3|2024-0[1-9]-1[0-9]|1/2/2024|true|FALSE|\"q,\"\"r\"|v| |)(,(1|2024-01-02|true|w|\"\n\"|))*\r?\n){0,12}",
        cuts in prop::collection::vec(0usize..400, 0..8),
        slice in 1usize..5,
    ) {
        let whole = parse_csv(&text).and_then(|(h, c)| prepare_table(h, c));
        let chars: Vec<char> = text.chars().collect();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(chars.len())).collect();
        cuts.sort_unstable();
        cuts.push(chars.len());
        let pieced = (|| {
            let mut reader = CsvReader::new();
            let mut cells = Vec::new();
            let mut last = 0;
            for c in cuts {
                reader.feed(&chars[last..c].iter().collect::<String>())?;
                cells.extend(reader.take_rows());
                last = c;
            }
            let (header, rest) = reader.finish()?;
            cells.extend(rest);
            let mut typing = Typing::new(header)?;
            for part in cells.chunks(slice) {
                typing.note(part)?;
            }
            let mut rows = Vec::new();
            for part in cells.chunks(slice) {
                rows.extend(typing.typed(part.to_vec()));
            }
            Ok::<_, String>((typing.fields(), rows))
        })();
        match (whole, pieced) {
            (Ok(w), Ok((fields, rows))) => {
                prop_assert_eq!(w.fields, fields);
                prop_assert_eq!(w.rows, rows);
            }
            (Err(w), Err(p)) => prop_assert_eq!(w, p),
            (w, p) => prop_assert!(false, "whole {:?}, in pieces {:?}", w, p),
        }
    }
}
