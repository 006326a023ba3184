//! The validator Worker's answers (`respond`, what `worker.js` serves): an accepted
//! statement comes back re-serialised with its first table, a refused one as the
//! validator's own sentence (422), and a body that is not the request as a 400/413, all in
//! the API's error shape.
#![allow(clippy::unwrap_used)]

use concierge_core::flows::rental::schema::RentalSchema;
use concierge_core::flows::rental::sql::validate_in;
use concierge_sqlcheck::{MAX_BODY_BYTES, respond};
use serde_json::{Value, json};

fn answer(body: &str) -> (u16, Value) {
    let (status, text) = respond(body);
    (status, serde_json::from_str(&text).unwrap())
}

fn request(sql: &str) -> String {
    let catalog = RentalSchema::default().catalog(true);
    json!({"sql": sql, "catalog": catalog}).to_string()
}

fn assert_error(body: &Value, code: &str) {
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(!message.is_empty(), "{body}");
    assert_eq!(body.as_object().unwrap().len(), 1, "only `error`: {body}");
}

#[test]
fn an_accepted_statement_comes_back_re_serialised_with_its_first_table() {
    let sql = "select id, title -- the cheapest\n from rooms where price < 3000000 limit 5";
    let (status, body) = answer(&request(sql));
    assert_eq!(status, 200, "{body}");
    let catalog = RentalSchema::default().catalog(true);
    let valid = validate_in(sql, &catalog).unwrap();
    assert_eq!(body["sql"], valid.sql());
    assert!(
        !body["sql"].as_str().unwrap().contains("cheapest"),
        "{body}"
    );
    assert_eq!(body["first_table"], "rooms");
}

#[test]
fn hostile_statements_are_refused_with_the_validators_sentence() {
    let catalog = RentalSchema::default().catalog(true);
    for sql in [
        "SELECT id FROM rooms; DELETE FROM rooms",
        "SELECT * FROM sqlite_master",
        "SELECT * FROM rental_rows",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
        "SELECT load_extension('x') FROM rooms",
        "PRAGMA table_info(rooms)",
        "ATTACH DATABASE 'x' AS y",
        "SELECT a.id FROM rooms a, rooms b, rooms c, rooms d",
    ] {
        let (status, body) = answer(&request(sql));
        assert_eq!(status, 422, "{sql}: {body}");
        assert_error(&body, "invalid_sql");
        let sentence = validate_in(sql, &catalog).unwrap_err().0;
        assert_eq!(body["error"]["message"], sentence.as_str(), "{sql}");
    }
}

#[test]
fn a_table_outside_the_catalog_is_refused() {
    let body = json!({"sql": "SELECT id FROM posts", "catalog": [
        {"name": "rooms", "columns": ["id", "title"], "max_rows": 3000}
    ]});
    let (status, body) = answer(&body.to_string());
    assert_eq!(status, 422, "{body}");
    assert_error(&body, "invalid_sql");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no such table: posts"),
        "{body}"
    );
}

#[test]
fn a_body_that_is_not_the_request_is_a_400_in_the_error_shape() {
    for body in [
        "",
        "not json",
        "{\"sql\": \"SELECT 1\"}",
        "{\"catalog\": []}",
        "{\"sql\": 7, \"catalog\": []}",
        "{\"sql\": \"SELECT 1\", \"catalog\": [], \"extra\": true}",
        "{\"sql\": \"SELECT 1\", \"catalog\": [{\"name\": \"rooms\"}]}",
        "[]",
    ] {
        let (status, answer) = answer(body);
        assert_eq!(status, 400, "{body:?}: {answer}");
        assert_error(&answer, "invalid_request");
    }
    let tables: Vec<Value> = (0..100)
        .map(|i| json!({"name": format!("t{i}"), "columns": null, "max_rows": 1}))
        .collect();
    let (status, answer) = answer(&json!({"sql": "SELECT 1", "catalog": tables}).to_string());
    assert_eq!(status, 400, "{answer}");
    assert_error(&answer, "invalid_request");
}

#[test]
fn a_body_over_the_cap_is_a_413() {
    let sql = "x".repeat(MAX_BODY_BYTES);
    let (status, body) = answer(&request(&sql));
    assert_eq!(status, 413, "{body}");
    assert_error(&body, "request_too_large");
}
