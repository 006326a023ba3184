//! The per-call budget of `execute_aggregation` (issue 24, defect 3) never changes an
//! answer: an evaluation within the budget gives the reference evaluator's rows or a
//! budget refusal, and the seed's questions pass at the 50,000-row cap. Over budget, the
//! tool error names the bound and what to change.
#![allow(clippy::unwrap_used)]

use concierge_core::flows::analyst::budget::{Budget, Exceeded, MAX_BYTES, MAX_WORK};
use concierge_core::flows::analyst::eval::{evaluate, evaluate_within};
use concierge_core::flows::analyst::pipeline::{Owned, validate};
use proptest::prelude::*;
use serde_json::{Value, json};

include!("corpus/analyst_demo.rs");

const OWNED: [Owned<'static>; 2] = [
    Owned {
        id: "c1",
        name: "don_hang",
    },
    Owned {
        id: "c2",
        name: "luong_nhan_vien",
    },
];

fn within(pipeline: &Value, rows: Vec<Value>, budget: &mut Budget) -> Result<Vec<Value>, String> {
    let checked = validate(pipeline, &OWNED)?;
    let foreign = [
        ("c1".to_string(), rows.clone()),
        ("c2".into(), demo_salaries(15)),
    ];
    let lookup = |id: &str| -> &[Value] {
        foreign
            .iter()
            .find(|(j, _)| j == id)
            .map_or(&[], |(_, r)| r.as_slice())
    };
    evaluate_within(&checked.stages, rows, &lookup, budget)
}

fn reference(pipeline: &Value, rows: Vec<Value>) -> Vec<Value> {
    let checked = validate(pipeline, &OWNED).unwrap();
    let foreign = rows.clone();
    let lookup = |id: &str| {
        if id == "c1" {
            foreign.clone()
        } else {
            demo_salaries(15)
        }
    };
    evaluate(&checked.stages, rows, &lookup).unwrap()
}

/// Ordinary stages over the orders' fields, as a model writes them.
fn stage() -> impl Strategy<Value = Value> {
    let field = prop::sample::select(vec![
        "ngay",
        "nen_tang",
        "san_pham",
        "so_luong",
        "doanh_thu",
        "khong_co",
    ]);
    prop_oneof![
        (field.clone(), 0i64..6).prop_map(|(f, n)| json!({"$match": {f: {"$gte": n}}})),
        field
            .clone()
            .prop_map(|f| json!({"$match": {f: {"$in": ["Shopee", "Tiki", 3]}}})),
        (field.clone(), field.clone()).prop_map(|(g, s)| json!({"$group": {"_id": format!("${g}"),
            "t": {"$sum": format!("${s}")}, "a": {"$avg": format!("${s}")}, "lo": {"$min": format!("${s}")},
            "hi": {"$max": format!("${s}")}, "n": {"$count": {}}, "xs": {"$push": format!("${s}")}}})),
        (field.clone(), prop::bool::ANY)
            .prop_map(|(f, up)| json!({"$sort": {f: if up { 1 } else { -1 }}})),
        (1u64..2000).prop_map(|n| json!({"$limit": n})),
        (field.clone(), field.clone()).prop_map(|(a, b)| json!({"$project": {a: 1,
            "x": {"$concat": [format!("${b}"), "-", format!("${a}")]},
            "y": {"$cond": {"if": {"$gt": [format!("${a}"), 2]}, "then": {"$multiply": [format!("${b}"), 2]}, "else": null}}}})),
        (field.clone(), field.clone()).prop_map(|(a, b)| json!({"$lookup": {"from": "don_hang",
            "localField": a, "foreignField": b, "as": "j"}})),
        field.prop_map(|f| json!({"$unwind": format!("${f}")})),
        Just(json!({"$unwind": "$j"})),
        Just(json!({"$count": "n"})),
    ]
}

fn is_budget_refusal(message: &str) -> bool {
    message == Exceeded::Work.to_string() || message == Exceeded::Bytes.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Within the budget, the answer is the reference evaluator's; over it, a refusal.
    #[test]
    fn the_budget_never_changes_an_answer(
        pipeline in prop::collection::vec(stage(), 0..6),
        n in 0usize..200,
    ) {
        let pipeline = Value::Array(pipeline);
        let rows = demo_orders(n);
        match within(&pipeline, rows.clone(), &mut Budget::default()) {
            Ok(out) => prop_assert_eq!(out, reference(&pipeline, rows)),
            Err(e) => prop_assert!(is_budget_refusal(&e), "{}", e),
        }
    }

    /// A smaller budget refuses earlier but never answers differently.
    #[test]
    fn any_budget_answers_right_or_refuses(
        pipeline in prop::collection::vec(stage(), 1..5),
        work in 1u64..200_000,
        bytes in 1u64..4_000_000,
    ) {
        let pipeline = Value::Array(pipeline);
        let rows = demo_orders(200);
        let mut budget = Budget::new(work, bytes);
        match within(&pipeline, rows.clone(), &mut budget) {
            Ok(out) => {
                prop_assert!(budget.work_used() <= work && budget.bytes_used() <= bytes);
                prop_assert_eq!(out, reference(&pipeline, rows));
            }
            Err(e) => prop_assert!(is_budget_refusal(&e), "{}", e),
        }
    }
}

#[test]
fn the_seed_questions_pass_at_the_row_cap() {
    let rows = demo_orders(50_000);
    let questions = [
        json!([{"$match": {"ngay": {"$gte": "2024-01-01", "$lte": "2024-01-31T23:59:59"}}},
               {"$group": {"_id": null, "total": {"$sum": "$doanh_thu"}}}]),
        json!([{"$group": {"_id": "$san_pham", "qty": {"$sum": "$so_luong"}}},
               {"$sort": {"qty": -1}}, {"$limit": 3}]),
        json!([{"$project": {"m": {"$month": "$ngay"}, "doanh_thu": 1}},
               {"$group": {"_id": "$m", "total": {"$sum": "$doanh_thu"}}}, {"$sort": {"_id": 1}}]),
        json!([{"$group": {"_id": {"p": "$nen_tang", "s": "$san_pham"}, "avg": {"$avg": "$doanh_thu"},
               "n": {"$count": {}}}}, {"$sort": {"avg": -1}}]),
        json!([{"$sort": {"doanh_thu": -1, "ngay": 1}}, {"$limit": 10}]),
        json!([{"$match": {"nen_tang": "Shopee"}},
               {"$lookup": {"from": "luong_nhan_vien", "localField": "nen_tang",
                            "foreignField": "phong_ban", "as": "j"}},
               {"$unwind": {"path": "$j", "preserveNullAndEmptyArrays": true}},
               {"$group": {"_id": "$san_pham", "t": {"$sum": "$doanh_thu"}}}]),
    ];
    for q in questions {
        let mut budget = Budget::default();
        let out = within(&q, rows.clone(), &mut budget);
        assert!(out.is_ok(), "{q}: {out:?}");
        assert_eq!(out.unwrap(), reference(&q, rows.clone()), "{q}");
        assert!(
            budget.work_used() <= MAX_WORK / 2,
            "{q}: {} units",
            budget.work_used()
        );
    }
}

#[test]
fn over_budget_the_tool_error_says_which_bound_and_what_to_change() {
    let rows = demo_orders(1200);
    // Time: a sort of every row with a budget below its comparisons.
    let sort = json!([{"$sort": {"doanh_thu": 1}}]);
    let err = within(&sort, rows.clone(), &mut Budget::new(5_000, MAX_BYTES)).unwrap_err();
    assert!(
        err.contains("too much work") && err.contains("$match first"),
        "{err}"
    );
    // Memory: a join on a missing key copies every row into every row.
    let join = json!([{"$lookup": {"from": "don_hang", "localField": "x", "foreignField": "y",
                       "as": "j"}}]);
    let err = within(&join, rows.clone(), &mut Budget::default()).unwrap_err();
    assert!(
        err.contains("MB of intermediate data") && err.contains("$limit"),
        "{err}"
    );
    // Growth: a 4× $concat chain stops before its string is built.
    let mut chain = vec![
        json!({"$limit": 1}),
        json!({"$project": {"s": "$san_pham"}}),
    ];
    chain
        .extend((0..13).map(|_| json!({"$project": {"s": {"$concat": ["$s", "$s", "$s", "$s"]}}})));
    let err = within(&Value::Array(chain), rows, &mut Budget::default()).unwrap_err();
    assert!(err.contains("MB of intermediate data"), "{err}");
}
