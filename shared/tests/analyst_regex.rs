//! `analyst`'s `$regex`: validator, evaluator, linear time, adversarial corpus.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use concierge_core::flows::analyst::eval::{evaluate, matches};
use concierge_core::flows::analyst::pipeline::{Owned, validate};
use concierge_core::flows::analyst::regex::MAX_PATTERN_CHARS;
use proptest::prelude::*;
use serde_json::{Value, json};

const OWNED: [Owned<'static>; 1] = [Owned {
    id: "c1",
    name: "don_hang",
}];

fn rows() -> Vec<Value> {
    vec![
        json!({"san_pham": "Áo thun", "nen_tang": "Shopee", "v": 1}),
        json!({"san_pham": "áo khoác", "nen_tang": "Lazada", "v": 2}),
        json!({"san_pham": "Quần jean", "nen_tang": "Tiki", "v": 3}),
        json!({"san_pham": 42, "nen_tang": "Shopee", "v": 4}),
        json!({"san_pham": ["Giày", "Áo len"], "nen_tang": "Shopee", "v": 5}),
        json!({"nen_tang": "Tiki\nHCM", "v": 6}),
    ]
}

fn run(pipeline: Value) -> Vec<i64> {
    let checked = validate(&pipeline, &OWNED).unwrap_or_else(|e| panic!("{pipeline}: {e}"));
    evaluate(&checked.stages, rows(), &|_| Vec::new())
        .unwrap()
        .iter()
        .map(|r| r["v"].as_i64().unwrap())
        .collect()
}

#[test]
fn regex_matches_strings_like_mongo() {
    // Unanchored search, case-sensitive by default.
    assert_eq!(
        run(json!([{"$match": {"san_pham": {"$regex": "o t"}}}])),
        [1]
    );
    // `i`: Unicode case folding (Á/á).
    assert_eq!(
        run(json!([{"$match": {"san_pham": {"$regex": "^áo", "$options": "i"}}}])),
        [1, 2, 5]
    );
    // Arrays match through any string element; numbers and missing fields never match.
    assert_eq!(
        run(json!([{"$match": {"san_pham": {"$regex": "len$"}}}])),
        [5]
    );
    assert_eq!(
        run(json!([{"$match": {"san_pham": {"$regex": "42"}}}])),
        Vec::<i64>::new()
    );
    // `$not` negates (rows without the field pass, as in Mongo).
    assert_eq!(
        run(json!([{"$match": {"san_pham": {"$not": {"$regex": "^[ÁáQ]"}}}}])),
        [4, 6]
    );
    // `m` and `s`.
    assert_eq!(
        run(json!([{"$match": {"nen_tang": {"$regex": "^HCM$", "$options": "m"}}}])),
        [6]
    );
    assert_eq!(
        run(json!([{"$match": {"nen_tang": {"$regex": "Tiki.HCM", "$options": "s"}}}])),
        [6]
    );
    assert_eq!(
        run(json!([{"$match": {"nen_tang": {"$regex": "Tiki.HCM"}}}])),
        Vec::<i64>::new()
    );
    // `x`: whitespace and comments in the pattern are ignored.
    assert_eq!(
        run(
            json!([{"$match": {"nen_tang": {"$regex": "^ Sho pee # the platform", "$options": "x"}}}])
        ),
        [1, 4, 5]
    );
    // Combined with other operators and inside $or.
    assert_eq!(
        run(json!([{"$match": {"$or": [{"nen_tang": {"$regex": "^Laz"}}, {"v": {"$gte": 6}}]}}])),
        [2, 6]
    );
    assert!(matches(
        &json!({"a": "Xin chào"}),
        &json!({"a": {"$regex": "CHÀO", "$options": "i"}})
    ));
}

#[test]
fn regex_adversarial_corpus_is_refused_with_readable_errors() {
    let long = "a".repeat(MAX_PATTERN_CHARS + 1);
    let corpus: Vec<(Value, &str)> = vec![
        (
            json!([{"$group": {"_id": {"$regex": "a"}}}]),
            "$regex works only in $match",
        ),
        (
            json!([{"$project": {"x": {"$regex": "a"}}}]),
            "$regex works only in $match",
        ),
        (
            json!([{"$match": {"$regex": "a"}}]),
            "$regex goes inside a field condition",
        ),
        (
            json!([{"$match": {"$and": [{"$options": "i"}]}}]),
            "$regex goes inside a field condition",
        ),
        (
            json!([{"$match": {"a": {"$options": "i"}}}]),
            "$options goes only with $regex",
        ),
        (
            json!([{"$match": {"a": {"$regex": 5}}}]),
            "$regex takes a pattern string",
        ),
        (
            json!([{"$match": {"a": {"$regex": "a", "$options": "g"}}}]),
            "$options letter 'g' is not supported",
        ),
        (
            json!([{"$match": {"a": {"$regex": "a", "$options": ["i"]}}}]),
            "$options takes a string",
        ),
        (
            json!([{"$match": {"a": {"$regex": long}}}]),
            "longer than 256 characters",
        ),
        (
            json!([{"$match": {"a": {"$regex": "("}}}]),
            "$regex pattern is invalid",
        ),
        // Backreferences and look-around need backtracking: not offered.
        (
            json!([{"$match": {"a": {"$regex": "(a)\\1"}}}]),
            "$regex pattern is invalid",
        ),
        (
            json!([{"$match": {"a": {"$regex": "(?=a)b"}}}]),
            "$regex pattern is invalid",
        ),
        (
            json!([{"$match": {"a": {"$regex": "(?<=a)b"}}}]),
            "$regex pattern is invalid",
        ),
        // A small pattern with a huge automaton.
        (
            json!([{"$match": {"a": {"$regex": "((\\w{100}){100}){100}"}}}]),
            "too complex",
        ),
        (
            json!([{"$match": {"a": {"$not": {"$regex": "[z-a]"}}}}]),
            "$regex pattern is invalid",
        ),
        (
            json!([{"$match": {"a": {"$regex": "a", "$where": "1"}}}]),
            "Operator $where is not allowed",
        ),
    ];
    for (pipeline, want) in &corpus {
        let err = validate(pipeline, &OWNED).expect_err(&pipeline.to_string());
        assert!(err.contains(want), "{pipeline}: {err}");
    }
}

#[test]
fn a_catastrophic_backtracking_pattern_runs_in_linear_time() {
    // `(a+)+$` over "aaa…ab" takes exponential time on a backtracking engine.
    let text = format!("{}b", "a".repeat(20_000));
    let docs: Vec<Value> = (0..50).map(|i| json!({"a": text, "v": i})).collect();
    let pipeline = json!([{"$match": {"a": {"$regex": "(a+)+$"}}}, {"$count": "n"}]);
    let checked = validate(&pipeline, &OWNED).unwrap();
    let start = Instant::now();
    let out = evaluate(&checked.stages, docs, &|_| Vec::new()).unwrap();
    // 1 MB of text in all; a generous bound for a busy machine (a backtracking engine
    // would not finish at all).
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    assert!(out.is_empty() || out[0]["n"] == 0, "{out:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The regex engine agrees with a plain substring search on literal patterns, and with
    /// Rust's own `str` methods on anchored ones.
    #[test]
    fn regex_agrees_with_plain_search_on_literals(text in "[a-cÁá ]{0,12}", needle in "[a-c]{1,3}") {
        let doc = json!({"a": text});
        prop_assert_eq!(matches(&doc, &json!({"a": {"$regex": needle}})), text.contains(&needle));
        prop_assert_eq!(matches(&doc, &json!({"a": {"$regex": format!("^{needle}")}})), text.starts_with(&needle));
        prop_assert_eq!(matches(&doc, &json!({"a": {"$regex": format!("{needle}$")}})), text.ends_with(&needle));
    }
}
