//! Issue 14 through the real Worker: the `rental` template (seed 002) with a scripted
//! upstream — LIST/TABLE/CHART answers built from the site's listings, clarification,
//! greeting, a model ignoring `---END`, the SQL retry loop, canonical reuse, the
//! validator's verdict, tenant vs guest labels; every stream ends with exactly one
//! terminal event, and every payload matches the published schema
//! (`www/schemas/rental-payload.json`).

use concierge_e2e::api::{
    create_conversation, fixed_sentence, history, send, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

mod admin;
mod bench;
mod migration;
mod reply;
mod schema;

/// First lines of the four agents' prompts (what each upstream request starts with).
fn marker(file: &str) -> String {
    let text = std::fs::read_to_string(concierge_e2e::repo_root().join("prompts").join(file))
        .expect("prompt");
    text.lines().next().unwrap_or_default().to_string()
}

pub(crate) struct Rental {
    pub(crate) worker: &'static Worker,
    pub(crate) upstream: ScriptedUpstream,
    pub(crate) site: TestSite,
}

pub(crate) fn rental_site(name: &str) -> Rental {
    rental_site_on(Worker::shared(), name)
}

/// A rental site with three rooms on `worker`.
pub(crate) fn rental_site_on(worker: &'static Worker, name: &str) -> Rental {
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"template": "rental", "language": "vi"})),
    );
    assert_eq!(status, 200, "{body}");
    let rooms = json!({"rows": [
        {"id": "r1", "title": "Phòng trọ Lan Anh", "price": 2000000, "area_m2": 18, "district": "Quận 1", "city": "TP.HCM", "status": "available", "created_at": "2026-10-01"},
        {"id": "r2", "title": "Phòng Bến Thành", "price": 3500000, "area_m2": 25, "district": "Quận 1", "city": "TP.HCM", "status": "available", "created_at": "2026-10-05"},
        {"id": "r3", "title": "Phòng Gò Vấp", "price": 1800000, "area_m2": 15, "district": "Gò Vấp", "city": "TP.HCM", "status": "rented", "created_at": "2026-09-20"}
    ]});
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/rental/room"))
            .set("x-api-key", &site.secret_key)
            .send_json(rooms),
    );
    assert_eq!((status, body.as_str()), (200, "{\"upserted\":3}"));
    Rental {
        worker,
        upstream,
        site,
    }
}

impl Rental {
    pub(crate) fn conversation(&self, body: Value) -> String {
        create_conversation(self.worker, &self.site, body).0
    }

    pub(crate) fn reply(&self, text: &str) -> &Self {
        self.upstream.push(Reply::text(text));
        self
    }

    pub(crate) fn orchestrate(&self, kind: &str, ready: bool, mode: &str, message: &str) -> &Self {
        let reply = json!({"message": message, "requestType": kind, "readyForSql": ready,
            "intentModeHint": mode, "entityHint": "room"});
        self.reply(&reply.to_string())
    }

    /// One turn: the chunks' text, the payload events, and the terminal event.
    pub(crate) fn ask(
        &self,
        key: &str,
        conversation: &str,
        question: &str,
    ) -> (String, Vec<Value>, String) {
        let (status, events) = send(self.worker, key, conversation, question);
        assert_eq!(status, 200);
        let (terminal, _) = terminal(&events);
        let payloads = payloads(&events);
        for payload in &payloads {
            schema::assert_valid(payload);
        }
        (streamed_text(&events), payloads, terminal)
    }

    pub(crate) fn markers(&self) -> Vec<String> {
        self.upstream
            .chat_requests()
            .iter()
            .map(|r| {
                let content = r.body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default();
                content.lines().next().unwrap_or_default().to_string()
            })
            .collect()
    }

    pub(crate) fn learned(&self) -> Vec<Value> {
        let (status, body) = into_parts(
            agent()
                .get(&self.worker.url("/admin/rental/qa"))
                .set("x-api-key", &self.site.secret_key)
                .call(),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).expect("JSON")["qa"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

fn payloads(events: &[ReceivedEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.event == "payload")
        .map(|e| serde_json::from_str(&e.data).expect("payload JSON"))
        .collect()
}

pub(crate) const Q1_SQL: &str =
    "SELECT id, title, price FROM rooms WHERE district = 'Quận 1' ORDER BY price ASC";

#[test]
fn a_list_answer_with_links_then_a_canonical_hit_without_the_sql_model() {
    let r = rental_site("Rental list");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "LIST", "Để mình tìm nhé");
    r.reply(Q1_SQL);
    r.reply("Đây là 2 phòng giá rẻ ở quận 1, căn Phòng trọ Lan Anh là rẻ nhất đó\n---END\nLIST: [{\"id\":\"r1\",\"path\":\"https://evil.example\"},{\"id\":\"r2\"}]\nTABLE: null\nCHART: null");
    r.reply("{\"isValid\": true, \"reason\": \"ok\"}");
    let (text, payloads, terminal) =
        r.ask(&r.site.secret_key, &conversation, "Phòng giá rẻ ở quận 1?");
    assert_eq!(terminal, "completed");
    assert_eq!(
        text,
        "[GUEST] Đây là 2 phòng giá rẻ ở quận 1, căn Phòng trọ Lan Anh là rẻ nhất đó"
    );
    assert_eq!(payloads.len(), 1);
    assert_eq!(payloads[0]["kind"], "list");
    let items = payloads[0]["data"]["items"].as_array().expect("items");
    let paths: Vec<&str> = items
        .iter()
        .map(|i| i["path"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(paths, ["/rooms/r1", "/rooms/r2"]);
    assert_eq!(items[0]["title"], "Phòng trọ Lan Anh");
    let expected: Vec<String> = [
        "rental_orchestrator.md",
        "rental_sql.md",
        "rental_response.md",
        "rental_validator.md",
    ]
    .iter()
    .map(|f| marker(f))
    .collect();
    assert_eq!(r.markers(), expected);
    let learned = r.learned();
    assert_eq!(learned.len(), 1);
    assert_eq!(learned[0]["sql"], Q1_SQL);

    // The same question again: the learned SQL is reused; the SQL model is not called
    // (its script would be consumed and the markers would show it).
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply("Vẫn là 2 phòng ở quận 1 nhé");
    let (text, payloads, terminal) =
        r.ask(&r.site.secret_key, &conversation, "Phòng giá rẻ ở quận 1?");
    assert_eq!(terminal, "completed");
    assert_eq!(text, "[GUEST] Vẫn là 2 phòng ở quận 1 nhé");
    assert_eq!(payloads[0]["data"]["total"], 2);
    let calls = r.markers();
    assert_eq!(
        calls[4..],
        [
            marker("rental_orchestrator.md"),
            marker("rental_response.md")
        ]
    );
    let messages = history(r.worker, &r.site.secret_key, &conversation);
    let reply = messages.last().expect("reply");
    assert_eq!(reply["metadata"]["canonical"], "hard");
    assert_eq!(reply["metadata"]["sql_attempts"], 0);
    assert!(
        !reply.to_string().contains("SELECT"),
        "the SQL never reaches the visitor"
    );
    assert_eq!(r.learned()[0]["hits"], 1);
}

#[test]
fn a_table_a_chart_a_clarification_and_a_greeting() {
    let r = rental_site("Rental kinds");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "TABLE", "");
    r.reply("SELECT title, price, area_m2 FROM rooms ORDER BY price");
    r.reply("Bảng so sánh 3 phòng\n---END\nLIST: null\nTABLE: {}\nCHART: null");
    r.reply("{\"isValid\": true}");
    let (_, payloads, terminal) = r.ask(
        &r.site.secret_key,
        &conversation,
        "So sánh giá và diện tích",
    );
    assert_eq!(terminal, "completed");
    assert_eq!(payloads[0]["kind"], "table");
    assert_eq!(payloads[0]["data"]["rows"][0]["title"], "Phòng Gò Vấp");
    assert_eq!(payloads[0]["data"]["columns"][1]["type"], "number");

    r.orchestrate("QUERY", true, "CHART", "");
    r.reply(
        "SELECT district, avg(price) AS avg_price FROM rooms GROUP BY district ORDER BY district",
    );
    r.reply("Giá trung bình theo quận\n---END LIST: null TABLE: null CHART: {\"type\":\"bar\"}");
    r.reply("{\"isValid\": true}");
    let (_, payloads, _) = r.ask(
        &r.site.secret_key,
        &conversation,
        "Thống kê giá trung bình theo quận",
    );
    assert_eq!(payloads[0]["kind"], "chart");
    assert_eq!(payloads[0]["data"]["labels"], json!(["Gò Vấp", "Quận 1"]));
    assert_eq!(
        payloads[0]["data"]["series"][0]["values"],
        json!([1800000.0, 2750000.0])
    );
    // The seed's chart object on the native stream and in the history (issue 27 item 7).
    let in_history = history(r.worker, &r.site.secret_key, &conversation);
    let stored = in_history
        .iter()
        .rev()
        .flat_map(|m| m["payloads"].as_array().cloned().unwrap_or_default())
        .find(|p| p["kind"] == "chart")
        .expect("the chart is in the history");
    for chart in [&payloads[0]["data"], &stored["data"]] {
        assert_seed_chart(chart, &["Gò Vấp", "Quận 1"], &[1800000.0, 2750000.0]);
    }

    r.orchestrate("CLARIFICATION", false, "LIST", "Bạn muốn tìm ở quận nào?");
    let (text, payloads, terminal) = r.ask(&r.site.secret_key, &conversation, "Tìm phòng");
    assert_eq!(
        (text.as_str(), terminal.as_str()),
        ("[GUEST] Bạn muốn tìm ở quận nào?", "completed")
    );
    assert_eq!(
        payloads,
        vec![json!({"kind": "control", "data": {"reason": "CLARIFICATION"}})]
    );

    r.orchestrate(
        "GREETING",
        false,
        "LIST",
        "Xin chào! Mình giúp gì được cho bạn?",
    );
    let (text, payloads, _) = r.ask(&r.site.secret_key, &conversation, "Chào bạn");
    assert_eq!(text, "[GUEST] Xin chào! Mình giúp gì được cho bạn?");
    assert!(payloads.is_empty());
}

#[test]
fn failing_sql_is_retried_with_the_error_and_five_failures_say_sorry() {
    let r = rental_site("Rental retries");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply("SELECT * FROM rental_rows");
    r.reply("SELECT id, title FROM rooms WHERE nope = 1");
    r.reply("SELECT id, title FROM rooms WHERE district = 'Gò Vấp'");
    // The model ignores the format: no `---END`, the whole text is the message.
    r.reply("Có 1 phòng ở Gò Vấp cho bạn");
    r.reply("{\"isValid\": true}");
    let (text, payloads, terminal) = r.ask(&r.site.secret_key, &conversation, "Phòng ở Gò Vấp");
    assert_eq!(terminal, "completed");
    assert_eq!(text, "[GUEST] Có 1 phòng ở Gò Vấp cho bạn");
    assert_eq!(payloads[0]["data"]["items"][0]["path"], "/rooms/r3");
    let requests = r.upstream.chat_requests();
    let system = |i: usize| {
        requests[i].body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        system(2).contains("no such table: rental_rows"),
        "{}",
        system(2)
    );
    assert!(
        system(3).contains("there is no column nope"),
        "the D1 error is fed back as a sentence: {}",
        system(3)
    );
    for internal in ["offset", "SQLITE", "D1_ERROR", "json_extract"] {
        assert!(
            !system(3).contains(internal),
            "D1 internals reach the model ({internal}): {}",
            system(3)
        );
    }

    r.orchestrate("QUERY", true, "LIST", "");
    for _ in 0..5 {
        r.reply("DELETE FROM rooms");
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
    assert_eq!(
        r.upstream.chat_requests().len(),
        6 + 6,
        "orchestrator + 5 SQL attempts, nothing else"
    );
}

#[test]
fn an_invalid_verdict_learns_nothing_and_a_tenant_is_labelled_as_such() {
    let r = rental_site("Rental verdict");
    let tenant = r.conversation(json!({"user_id": "user-123", "role": "TENANT"}));
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply("SELECT id, title FROM rooms WHERE district = 'Gò Vấp'");
    r.reply("[GUEST] Đây là phòng ở quận 1");
    r.reply("{\"isValid\": false, \"reason\": \"quận 1 vs Gò Vấp\"}");
    let (text, _, end) = r.ask(&r.site.secret_key, &tenant, "Phòng ở quận 1");
    assert_eq!(end, "completed");
    assert_eq!(
        text, "[TENANT] Đây là phòng ở quận 1",
        "the model's label is replaced by code's"
    );
    assert!(r.learned().is_empty(), "nothing persisted");

    // A guest (public key, no token) on the same site.
    let (status, body) = into_parts(
        agent()
            .post(&r.worker.url("/conversations"))
            .set("x-api-key", &r.site.public_key)
            .set("origin", "https://shop.example")
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let guest = serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    r.orchestrate("GREETING", false, "LIST", "Chào bạn");
    let response = agent()
        .post(&r.worker.url(&format!("/conversations/{guest}/messages")))
        .set("x-api-key", &r.site.public_key)
        .set("origin", "https://shop.example")
        .send_json(json!({"content": "Chào"}))
        .expect("guest turn");
    let events = read_events(response.into_reader());
    assert_eq!(streamed_text(&events), "[GUEST] Chào bạn");
    assert_eq!(terminal(&events).0, "completed");
}

#[test]
fn a_model_failure_mid_answer_ends_with_one_failed_event() {
    let r = rental_site("Rental failure");
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(Q1_SQL);
    r.upstream.push(Reply::CutAfter(vec!["Đây là".into()]));
    let (status, events) = send(
        r.worker,
        &r.site.secret_key,
        &conversation,
        "Phòng rẻ quận 1",
    );
    assert_eq!(status, 200);
    let terminals = events
        .iter()
        .filter(|e| e.event == "completed" || e.event == "failed")
        .count();
    assert_eq!(terminals, 1);
    assert_eq!(terminal(&events).0, "failed");
}

/// The seed's chart fields: `mimeType`, the QuickChart `url` drawing `spec`, 500 × 300,
/// `alt`, and `spec` the Chart.js configuration of these labels and values.
pub(crate) fn assert_seed_chart(chart: &Value, labels: &[&str], values: &[f64]) {
    assert_eq!(chart["mimeType"], "image/png", "{chart}");
    assert_eq!(
        (&chart["width"], &chart["height"]),
        (&json!(500), &json!(300))
    );
    assert!(
        chart["alt"].as_str().is_some_and(|alt| !alt.is_empty()),
        "{chart}"
    );
    let spec = &chart["spec"];
    assert!(
        matches!(spec["type"].as_str(), Some("bar" | "line" | "pie")),
        "{spec}"
    );
    assert_eq!(spec["data"]["labels"], json!(labels));
    assert_eq!(spec["data"]["datasets"][0]["data"], json!(values));
    let url = chart["url"].as_str().unwrap_or_default();
    let config = url
        .strip_prefix("https://quickchart.io/chart?c=")
        .and_then(|rest| rest.strip_suffix("&w=500&h=300"))
        .unwrap_or_else(|| panic!("a QuickChart URL: {url}"));
    let decoded = urlencoding_decode(config);
    let drawn: Value = serde_json::from_str(&decoded).expect("the URL's config is JSON");
    assert_eq!(&drawn, spec);
}

/// `decodeURIComponent`.
fn urlencoding_decode(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("hex");
            out.push(u8::from_str_radix(hex, 16).expect("hex byte"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("UTF-8")
}
