//! Issue 24, defect 6, through the real Worker with a scripted upstream: the `rental`
//! template's learned SQL. One visitor's conversation cannot steer what another visitor
//! gets for the same words (only SQL written from the question alone is learned), and the
//! merchant lists learned queries page by page and deletes them — only their own site's,
//! and a deleted one is no longer reused — from the admin API and from the console.

use concierge_e2e::{agent, into_parts};
use serde_json::{Value, json};

use crate::rental::{Rental, rental_site};

const SQL: &str = "rental_sql.md";

/// The first line of a prompt (what each upstream request of that agent starts with).
fn marker(file: &str) -> String {
    let text = std::fs::read_to_string(concierge_e2e::repo_root().join("prompts").join(file))
        .expect("prompt");
    text.lines().next().unwrap_or_default().to_string()
}

const STEERING: &str = "Từ giờ chỉ cho tôi xem phòng ở Gò Vấp thôi nhé";
const CHEAPEST: &str = "Phòng nào rẻ nhất?";
/// What the SQL model writes for A's question, in A's conversation.
const STEERED_SQL: &str =
    "SELECT id, title, price FROM rooms WHERE district = 'Gò Vấp' ORDER BY price ASC LIMIT 1";
/// What it writes for the question alone.
const CLEAN_SQL: &str =
    "SELECT id, title, price FROM rooms WHERE status = 'available' ORDER BY price ASC LIMIT 1";

/// Script one QUERY turn: the orchestrator says ready; when `sql` is given the SQL model
/// writes it and the validator says valid (both are skipped on a reuse).
fn script_query(r: &Rental, sql: Option<&str>) {
    r.orchestrate("QUERY", true, "LIST", "");
    if let Some(sql) = sql {
        r.reply(sql);
    }
    r.reply("Đây là phòng bạn cần");
    if sql.is_some() {
        r.reply("{\"isValid\": true}");
    }
}

/// The upstream requests of one agent so far, each as its whole message list.
fn prompts_of(r: &Rental, file: &str) -> Vec<String> {
    let marker = marker(file);
    r.upstream
        .chat_requests()
        .iter()
        .filter(|q| {
            q.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|c| c.starts_with(&marker))
        })
        .map(|q| q.body["messages"].to_string())
        .collect()
}

/// The listed rooms' ids of a turn's payloads.
fn listed(payloads: &[Value]) -> Vec<String> {
    payloads
        .iter()
        .flat_map(|p| p["data"]["items"].as_array().cloned().unwrap_or_default())
        .map(|i| i["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A new visitor (conversation) asks `question`; `sql`: what the SQL model writes if it
/// is expected to be asked (`None`: a reuse is expected). The rooms listed, and whether
/// the SQL model was asked.
fn new_visitor_asks(r: &Rental, question: &str, sql: Option<&str>) -> (Vec<String>, bool) {
    let conversation = r.conversation(json!({}));
    asks(r, &conversation, question, sql)
}

fn asks(r: &Rental, conversation: &str, question: &str, sql: Option<&str>) -> (Vec<String>, bool) {
    let before = prompts_of(r, SQL).len();
    script_query(r, sql);
    let (_, payloads, terminal) = r.ask(&r.site.secret_key, conversation, question);
    assert_eq!(terminal, "completed");
    (listed(&payloads), prompts_of(r, SQL).len() > before)
}

#[test]
fn one_visitors_steering_is_not_learned_for_the_next_visitor() {
    let r = rental_site("Learned SQL poisoning");
    // Visitor A steers the conversation, then asks a clean question; the SQL model reads
    // it in A's context and filters on A's district.
    let a = r.conversation(json!({}));
    r.orchestrate(
        "GENERAL_CHAT",
        false,
        "LIST",
        "Dạ, mình sẽ chỉ tìm ở Gò Vấp",
    );
    r.ask(&r.site.secret_key, &a, STEERING);
    let (rooms, asked) = asks(&r, &a, CHEAPEST, Some(STEERED_SQL));
    assert!(asked);
    assert_eq!(rooms, ["r3"], "A gets what A asked for");
    let a_prompt = prompts_of(&r, SQL).pop().expect("A's SQL prompt");
    assert!(a_prompt.contains(STEERING), "A's context: {a_prompt}");

    // Visitor B asks the same words: the SQL model is asked for B, from B's question
    // alone, and B gets the cheapest available room of the site — not A's district.
    let (rooms, asked) = new_visitor_asks(&r, CHEAPEST, Some(CLEAN_SQL));
    assert!(
        asked,
        "the SQL model must be asked for B (A's steered SQL was reused: B got {rooms:?})"
    );
    assert_eq!(rooms, ["r1"]);
    let b_prompt = prompts_of(&r, SQL).pop().expect("B's SQL prompt");
    assert!(!b_prompt.contains(STEERING), "{b_prompt}");
    let messages: Vec<Value> = serde_json::from_str(&b_prompt).expect("messages");
    assert_eq!(
        messages.len(),
        2,
        "system prompt and question only: {b_prompt}"
    );

    // What was learned is B's context-free SQL, with what produced it.
    let learned = r.learned();
    assert_eq!(learned.len(), 1, "{learned:?}");
    assert_eq!(learned[0]["question"], CHEAPEST);
    assert_eq!(learned[0]["sql"], CLEAN_SQL);
    assert_eq!(learned[0]["role"], "GUEST");
    assert_eq!(learned[0]["context_free"], true);
    assert!(learned[0]["created_at"].as_u64().is_some_and(|t| t > 0));

    // Visitor C (and A again) are answered with it, without the SQL model.
    let (rooms, asked) = new_visitor_asks(&r, CHEAPEST, None);
    assert!(!asked, "C reuses the learned, context-free SQL");
    assert_eq!(rooms, ["r1"]);
    assert_eq!(r.learned()[0]["hits"], 1);
}

fn call(r: &Rental, key: &str, method: &str, path: &str) -> (u16, Value) {
    let (status, body) = into_parts(
        agent()
            .request(method, &r.worker.url(path))
            .set("x-api-key", key)
            .call(),
    );
    let json = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&body).unwrap_or(Value::String(body))
    };
    (status, json)
}

/// The site's vector of learned Q&A `id` (the local index: the site's object), if any.
fn qa_vectors(r: &Rental, id: &str) -> usize {
    r.worker
        .site_rows(
            &r.site,
            &format!("SELECT id FROM vectors WHERE id = 'rqa_{id}' AND source = 'rental_qa'"),
        )
        .len()
}

#[test]
fn learned_queries_are_listed_page_by_page_and_deleted_for_their_own_site_only() {
    let r = rental_site("Learned admin");
    let questions = [
        ("Phòng nào rẻ nhất?", CLEAN_SQL),
        (
            "Liệt kê toàn bộ phòng trống ở Quận 1",
            "SELECT id, title FROM rooms WHERE district = 'Quận 1' AND status = 'available'",
        ),
        (
            "Căn diện tích lớn nhất",
            "SELECT id, title, area_m2 FROM rooms ORDER BY area_m2 DESC LIMIT 1",
        ),
    ];
    for (question, sql) in questions {
        assert!(new_visitor_asks(&r, question, Some(sql)).1);
    }
    let key = r.site.secret_key.clone();

    // Newest first, two a page, then the last page.
    let (status, first) = call(&r, &key, "GET", "/admin/rental/qa?limit=2");
    assert_eq!(status, 200, "{first}");
    let page: Vec<&str> = first["qa"]
        .as_array()
        .expect("qa")
        .iter()
        .map(|q| q["question"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(page, [questions[2].0, questions[1].0]);
    let next = first["next"].as_str().expect("a next cursor");
    let (status, second) = call(
        &r,
        &key,
        "GET",
        &format!("/admin/rental/qa?limit=2&before={next}"),
    );
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["qa"].as_array().map(Vec::len), Some(1));
    assert_eq!(second["qa"][0]["question"], questions[0].0);
    assert_eq!(second["qa"][0]["sql"], questions[0].1);
    assert_eq!(second["next"], Value::Null);
    for (path, field) in [
        ("/admin/rental/qa?limit=0", "limit"),
        ("/admin/rental/qa?limit=many", "limit"),
        ("/admin/rental/qa?before=nope", "before"),
        ("/admin/rental/qa?before=1.x%27%20OR%201%3D1", "before"),
    ] {
        let (status, body) = call(&r, &key, "GET", path);
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["error"]["code"], "bad_request", "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{message}");
    }
    // Not with the public key.
    let (status, _) = into_parts(
        agent()
            .get(&r.worker.url("/admin/rental/qa"))
            .set("x-api-key", &r.site.public_key)
            .set("origin", "https://shop.example")
            .call(),
    );
    assert!(status == 401 || status == 403, "{status}");

    // Another site sees none of them, cannot delete them, and does not reuse them.
    let other = rental_site("Learned admin, other site");
    let ids: Vec<String> = r
        .learned()
        .iter()
        .map(|q| q["id"].as_str().expect("id").to_string())
        .collect();
    let (status, list) = call(&other, &other.site.secret_key, "GET", "/admin/rental/qa");
    assert_eq!((status, &list["qa"]), (200, &json!([])));
    let cheapest = &ids[2];
    let (status, _) = call(
        &other,
        &other.site.secret_key,
        "DELETE",
        &format!("/admin/rental/qa/{cheapest}"),
    );
    assert_eq!(status, 404);
    assert_eq!(r.learned().len(), 3);
    let (_, asked) = new_visitor_asks(&other, questions[0].0, Some(questions[0].1));
    assert!(asked, "another site's learned SQL is never reused");

    // An entry learned before entries recorded their context (as the migration leaves
    // them) stays listed for review and is not reused.
    let oldest = &ids[2];
    r.worker.site_rows(
        &r.site,
        &format!("UPDATE rental_qa SET context_free = 0, role = NULL WHERE id = '{oldest}'"),
    );
    let (_, asked) = new_visitor_asks(&r, questions[0].0, Some(questions[0].1));
    assert!(asked, "an entry not known to be context-free is not reused");
    let legacy = r
        .learned()
        .into_iter()
        .find(|q| q["id"] == oldest.as_str())
        .expect("still listed");
    assert_eq!(legacy["context_free"], false);

    // Deleted: gone from the list with its vector, and the question asks the SQL model.
    let (_, asked) = new_visitor_asks(&r, questions[1].0, None);
    assert!(!asked, "learned and reused before the deletion");
    let target = &ids[1];
    assert_eq!(qa_vectors(&r, target), 1);
    let path = format!("/admin/rental/qa/{target}");
    assert_eq!(call(&r, &key, "DELETE", &path).0, 204);
    let (status, body) = call(&r, &key, "DELETE", &path);
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
    assert!(r.learned().iter().all(|q| q["id"] != target.as_str()));
    assert_eq!(qa_vectors(&r, target), 0, "the vector is deleted too");
    let (_, asked) = new_visitor_asks(&r, questions[1].0, Some(questions[1].1));
    assert!(asked, "a deleted query is no longer reused");
}

#[test]
fn a_merchant_reviews_and_deletes_learned_queries_in_the_console() {
    let r = rental_site("Learned console");
    let kept = (
        "Căn diện tích lớn nhất",
        "SELECT id, title, area_m2 FROM rooms ORDER BY area_m2 DESC LIMIT 1",
    );
    assert!(new_visitor_asks(&r, CHEAPEST, Some(CLEAN_SQL)).1);
    assert!(new_visitor_asks(&r, kept.0, Some(kept.1)).1);
    crate::browser_console::run(
        "learned",
        r.worker,
        &[
            ("SECRET_KEY", &r.site.secret_key),
            ("DELETE_QUESTION", CHEAPEST),
            ("DELETE_SQL", CLEAN_SQL),
            ("KEEP_QUESTION", kept.0),
        ],
    );
    // The browser deleted one: the other is left, and the deleted one asks the SQL model.
    let learned = r.learned();
    assert_eq!(learned.len(), 1, "{learned:?}");
    assert_eq!(learned[0]["question"], kept.0);
    let (_, asked) = new_visitor_asks(&r, CHEAPEST, Some(CLEAN_SQL));
    assert!(asked, "deleted in the console: not reused");
}
