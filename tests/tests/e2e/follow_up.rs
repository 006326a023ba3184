//! Issue 45 over HTTP, against the real Worker under `wrangler dev`: the visitor's
//! follow-up when nobody is free (`POST /conversations/{id}/follow-up`: contact validated,
//! stored in the site's object, one open per conversation, listed and marked done by the
//! site's console, `GET /admin/follow-ups`, `POST /admin/follow-ups/{id}/done`; another
//! site's key reaches none of it), and the page a visitor asks for a person from in the
//! console's waiting list (named by the panel's `Referer`, checked, display only).

use concierge_e2e::api::{create_conversation, error_code, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";

/// `POST /conversations/{id}/follow-up` with the site's public key from its allowed
/// origin, as the panel sends it.
fn leave(worker: &Worker, site: &TestSite, conversation: &str, body: Value) -> (u16, Value) {
    let (status, text) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/follow-up")))
            .set("x-api-key", &site.public_key)
            .set("origin", ORIGIN)
            .send_json(body),
    );
    let json = serde_json::from_str(&text).unwrap_or_else(|_| json!({"raw": text}));
    (status, json)
}

fn admin(worker: &Worker, key: &str, method: &str, path: &str) -> (u16, Value) {
    let request = agent()
        .request(method, &worker.url(path))
        .set("x-api-key", key);
    let result = if method == "POST" {
        request.send_json(json!({}))
    } else {
        request.call()
    };
    let (status, text) = into_parts(result);
    let json = serde_json::from_str(&text).unwrap_or_else(|_| json!({"raw": text}));
    (status, json)
}

fn code(body: &Value) -> String {
    error_code(&body.to_string())
}

#[test]
fn a_follow_up_is_validated_stored_listed_replaced_and_marked_done_by_its_site_only() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Follow-up shop", &upstream.base_url, false);
    let other = site_with_upstream(worker, "Other shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    // Not a phone number or an e-mail address: 400 with its own code, nothing stored.
    for contact in ["gọi em nhé", "090123", "an@shop", "javascript:alert(1)", ""] {
        let (status, body) = leave(
            worker,
            &site,
            &conversation,
            json!({"contact": contact, "question": "Card RTX 4060 còn hàng không?"}),
        );
        assert_eq!(
            (status, code(&body)),
            (400, "invalid_contact".into()),
            "{contact}: {body}"
        );
    }
    let (status, body) = leave(
        worker,
        &site,
        &conversation,
        json!({"contact": "0901 234 567", "question": "   "}),
    );
    assert_eq!((status, code(&body)), (400, "bad_request".into()), "{body}");
    let long = "x".repeat(1001);
    let (status, _) = leave(
        worker,
        &site,
        &conversation,
        json!({"contact": "0901 234 567", "question": long}),
    );
    assert_eq!(status, 400);
    let (status, body) = leave(
        worker,
        &site,
        &conversation,
        json!({"contact": "0901 234 567", "question": "q", "extra": 1}),
    );
    assert_eq!(status, 400, "unknown fields are refused: {body}");
    let (_, listed) = admin(worker, &site.secret_key, "GET", "/admin/follow-ups");
    assert_eq!(listed["open"], 0, "{listed}");

    // A Vietnamese mobile number, kept in its international form.
    let (status, body) = leave(
        worker,
        &site,
        &conversation,
        json!({"contact": "0901 234 567", "question": "Card RTX 4060 còn hàng không?"}),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["replaced"], false);
    let follow_up = &body["follow_up"];
    assert_eq!(follow_up["contact"], "+84901234567");
    assert_eq!(follow_up["kind"], "phone");
    assert_eq!(follow_up["conversation_id"], conversation.as_str());
    assert!(follow_up["done_at"].is_null());
    let id = follow_up["id"].as_str().expect("id").to_string();

    // Listed in the site's console.
    let (status, listed) = admin(worker, &site.secret_key, "GET", "/admin/follow-ups");
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["open"], 1);
    let items = listed["follow_ups"].as_array().expect("follow_ups");
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], id.as_str());
    assert_eq!(items[0]["question"], "Card RTX 4060 còn hàng không?");

    // One open follow-up per conversation: another replaces it (same id).
    let (status, body) = leave(
        worker,
        &site,
        &conversation,
        json!({"contact": " lan.nguyen@shop.example ", "question": "Gọi em sau 5 giờ nhé"}),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["replaced"], true);
    assert_eq!(body["follow_up"]["id"], id.as_str());
    assert_eq!(body["follow_up"]["contact"], "lan.nguyen@shop.example");
    assert_eq!(body["follow_up"]["kind"], "email");
    let (_, listed) = admin(worker, &site.secret_key, "GET", "/admin/follow-ups");
    assert_eq!(listed["open"], 1);
    assert_eq!(listed["follow_ups"][0]["question"], "Gọi em sau 5 giờ nhé");

    // Another site's keys reach none of it.
    let (status, body) = leave(
        worker,
        &other,
        &conversation,
        json!({"contact": "+44 20 7946 0958", "question": "x"}),
    );
    assert_eq!(status, 404, "another site's public key: {body}");
    let (status, theirs) = admin(worker, &other.secret_key, "GET", "/admin/follow-ups");
    assert_eq!(status, 200);
    assert_eq!(theirs["open"], 0, "{theirs}");
    assert_eq!(theirs["follow_ups"], json!([]));
    let done_path = format!("/admin/follow-ups/{id}/done");
    let (status, body) = admin(worker, &other.secret_key, "POST", &done_path);
    assert_eq!((status, code(&body)), (404, "not_found".into()), "{body}");
    let (status, _) = admin(worker, &site.public_key, "GET", "/admin/follow-ups");
    assert_eq!(status, 403, "the public key cannot list");
    let (_, listed) = admin(worker, &site.secret_key, "GET", "/admin/follow-ups");
    assert!(
        listed["follow_ups"][0]["done_at"].is_null(),
        "not done by the other site"
    );

    // Marked done by the site: no longer open, still listed, done once.
    let (status, body) = admin(worker, &site.secret_key, "POST", &done_path);
    assert_eq!(status, 200, "{body}");
    let done_at = body["follow_up"]["done_at"].as_u64().expect("done_at");
    let (_, again) = admin(worker, &site.secret_key, "POST", &done_path);
    assert_eq!(again["follow_up"]["done_at"].as_u64(), Some(done_at));
    let (_, listed) = admin(worker, &site.secret_key, "GET", "/admin/follow-ups");
    assert_eq!(listed["open"], 0);
    assert_eq!(listed["follow_ups"][0]["done_at"].as_u64(), Some(done_at));
    let (status, _) = admin(
        worker,
        &site.secret_key,
        "POST",
        "/admin/follow-ups/nope/done",
    );
    assert_eq!(status, 404);

    // A done one leaves room for a new one in the same conversation; an unknown
    // conversation has none.
    let (status, body) = leave(
        worker,
        &site,
        &conversation,
        json!({"contact": "+1 (415) 555-0100", "question": "Again"}),
    );
    assert_eq!(
        (status, body["replaced"].clone()),
        (201, json!(false)),
        "{body}"
    );
    assert_ne!(body["follow_up"]["id"], id.as_str());
    let (status, _) = leave(
        worker,
        &site,
        "no-such-conversation",
        json!({"contact": "0901234567", "question": "x"}),
    );
    assert_eq!(status, 404);
}

/// A visitor's message from the panel, whose URL names `page` (as the loader sets it).
fn send_from_page(worker: &Worker, site: &TestSite, conversation: &str, page: &str, text: &str) {
    let referer = format!(
        "{}?site_key={}&page={}",
        worker.url("/chat"),
        site.public_key,
        urlencode(page)
    );
    let response = agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", &site.public_key)
        .set("origin", ORIGIN)
        .set("referer", &referer)
        .send_json(json!({"content": text}))
        .expect("message");
    let events = read_events(response.into_reader());
    assert_eq!(events.last().expect("events").event, "completed");
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn the_waiting_list_names_the_page_a_visitor_asked_from_checked_and_display_only() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Page shop", &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"handoff": {"enabled": true, "wait_seconds": 600}})),
    );
    assert_eq!(status, 200, "{body}");
    let (on_page, _) = create_conversation(worker, &site, json!({}));
    let (bad_page, _) = create_conversation(worker, &site, json!({}));
    send_from_page(
        worker,
        &site,
        &on_page,
        "/san-pham/rtx-4060?mau=den&q=<b>x</b>",
        "Cho mình gặp nhân viên với",
    );
    send_from_page(
        worker,
        &site,
        &bad_page,
        "javascript:alert(1)",
        "Cho mình gặp nhân viên với",
    );
    let (status, listed) = admin(worker, &site.secret_key, "GET", "/admin/handoffs");
    assert_eq!(status, 200, "{listed}");
    let rows = listed["conversations"].as_array().expect("conversations");
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).expect("listed").clone();
    // As the visitor's page said it (text: the console sets it as text).
    assert_eq!(
        row(&on_page)["page"],
        "/san-pham/rtx-4060?mau=den&q=<b>x</b>"
    );
    assert!(
        row(&bad_page)["page"].is_null(),
        "not a site path: not kept"
    );
}
