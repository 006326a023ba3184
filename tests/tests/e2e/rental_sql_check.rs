//! Issue 29: the `rental` template's SQL validator runs in its own Worker (`concierge-sql`,
//! sqlcheck/), which the Worker calls through its `SQL_CHECK` service binding right before
//! a model-written statement runs on the listings. Through the binding, hostile statements
//! are refused with the validator's sentences (fed back to the SQL model) and never run;
//! without the validator Worker, a question that needs SQL fails cleanly (one `failed`
//! event) and nothing runs unvalidated.

use std::sync::OnceLock;

use concierge_e2e::api::{fixed_sentence, send, terminal};
use concierge_e2e::{Worker, WorkerOptions, test_vars};
use serde_json::json;

use crate::rental::{rental_site, rental_site_on};

const CHEAP: &str = "SELECT id, title, price FROM rooms WHERE price < 2500000 ORDER BY price";

/// A Worker whose session has no validator Worker: its `SQL_CHECK` binding reaches nothing.
fn worker_without_validator() -> &'static Worker {
    static WORKER: OnceLock<Worker> = OnceLock::new();
    WORKER.get_or_init(|| {
        Worker::start(&WorkerOptions {
            vars: test_vars(),
            without_sql_check: true,
            ..WorkerOptions::default()
        })
    })
}

#[test]
fn hostile_statements_are_refused_through_the_validator_worker_and_never_run() {
    let r = rental_site("Rental validator Worker");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "LIST", "");
    let hostile = [
        "SELECT * FROM sqlite_master",
        "SELECT id FROM rooms; DELETE FROM rooms",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
        "SELECT id, data FROM rental_rows",
        "SELECT a.id FROM rooms a, rooms b, rooms c, rooms d, rooms e",
    ];
    for sql in hostile {
        r.reply(sql);
    }
    let (text, payloads, terminal) = r.ask(&r.site.secret_key, &conversation, "Xoá hết phòng");
    assert_eq!(terminal, "completed");
    assert_eq!(
        text,
        format!(
            "[GUEST] {}",
            fixed_sentence("rental_fixed_vi.md", "sql_failed")
        )
    );
    assert!(payloads.is_empty());
    let requests = r.upstream.chat_requests();
    assert_eq!(
        requests.len(),
        6,
        "orchestrator + 5 SQL attempts, nothing else"
    );
    let system = |i: usize| {
        requests[i].body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // Each attempt's prompt carries the previous statement and the validator's sentence.
    for (attempt, (sql, because)) in hostile
        .iter()
        .zip([
            "no such table: sqlite_master",
            "exactly one SELECT statement is allowed",
            "WITH RECURSIVE is not allowed",
            "no such table: rental_rows",
        ])
        .enumerate()
    {
        let prompt = system(attempt + 2);
        assert!(prompt.contains(sql), "attempt {}: {prompt}", attempt + 2);
        assert!(
            prompt.contains(because),
            "attempt {}: {prompt}",
            attempt + 2
        );
    }

    // Nothing ran: the listings are all there, and a plain statement still answers.
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(CHEAP);
    r.reply("Có 2 phòng\n---END");
    r.reply("{\"isValid\": true}");
    let (_, payloads, terminal) = r.ask(&r.site.secret_key, &conversation, "Phòng rẻ");
    assert_eq!(terminal, "completed");
    let items = payloads[0]["data"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let paths: Vec<&str> = items.iter().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["/rooms/r3", "/rooms/r1"], "{payloads:?}");
}

#[test]
fn without_the_validator_worker_a_sql_question_fails_with_one_failed_event() {
    let r = rental_site_on(worker_without_validator(), "Rental without validator");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "LIST", "");
    for _ in 0..5 {
        r.reply(CHEAP);
    }
    r.reply("Có 2 phòng\n---END");
    r.reply("{\"isValid\": true}");
    let (status, events) = send(r.worker, &r.site.secret_key, &conversation, "Phòng rẻ");
    assert_eq!(status, 200);
    let (kind, data) = terminal(&events);
    assert_eq!(kind, "failed", "{events:?}");
    assert_eq!(data["error"]["code"], "records_unavailable", "{data}");
    assert!(
        !events.iter().any(|e| e.event == "payload"),
        "no rows reached the visitor: {events:?}"
    );
    assert_eq!(
        r.upstream.chat_requests().len(),
        2,
        "orchestrator + one SQL attempt: the turn stops at the missing validator"
    );
    let log = r.worker.log();
    assert!(
        log.contains("SQL_CHECK") || log.contains("SQL validator"),
        "the log says why: {log}"
    );
}
