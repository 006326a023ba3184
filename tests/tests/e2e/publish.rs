//! Draft and live (issue 42): a merchant's draft change is invisible to the widget until
//! published; the secret key (`X-Concierge-Draft: 1`) and the console's Try it (a draft
//! key, the panel's public key for the draft) run the draft; publishing makes it live as a new version; the versions are listed and
//! an earlier one restored brings its behaviour back; a public key can neither publish
//! nor select the draft; a version that is not kept is a 404.

use concierge_e2e::api::error_code;
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

const SHOP: &str = "https://shop.example";
const LIVE: &str = "LIVE-PERSONA-MARK";
const DRAFT: &str = "DRAFT-PERSONA-MARK";

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}"))
}

/// A request with `key` (and, for a public key, the shop's origin) and `headers`.
fn call(
    worker: &Worker,
    method: &str,
    path: &str,
    key: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, String) {
    let mut request = agent()
        .request(method, &worker.url(path))
        .set("x-api-key", key);
    if key.starts_with("pk_") {
        request = request.set("origin", SHOP);
    }
    for (name, value) in headers {
        request = request.set(name, value);
    }
    into_parts(match body {
        Some(body) => request.send_json(body),
        None => request.call(),
    })
}

/// A 403 `forbidden` JSON error.
fn forbidden((status, body): (u16, String)) {
    assert_eq!(
        (status, error_code(&body).as_str()),
        (403, "forbidden"),
        "{body}"
    );
}

/// One turn (a new conversation, one message) with `key` and `headers`: the system
/// prompts and every other message text the upstream received for it, joined.
fn turn_prompts(
    worker: &Worker,
    upstream: &ScriptedUpstream,
    key: &str,
    headers: &[(&str, &str)],
) -> String {
    let (status, body) = call(
        worker,
        "POST",
        "/conversations",
        key,
        headers,
        Some(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let id = json_of(&body)["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    let before = upstream.chat_requests().len();
    let mut request = agent()
        .post(&worker.url(&format!("/conversations/{id}/messages")))
        .set("x-api-key", key);
    if key.starts_with("pk_") {
        request = request.set("origin", SHOP);
    }
    for (name, value) in headers {
        request = request.set(name, value);
    }
    let response = request
        .send_json(json!({"content": "Xin chào, shop có giao hàng không?"}))
        .expect("turn");
    assert_eq!(response.status(), 200);
    let events = read_events(response.into_reader());
    assert!(
        events.iter().any(|e| e.event == "completed"),
        "completed: {events:?}"
    );
    let requests = upstream.chat_requests();
    assert!(requests.len() > before, "the model was asked");
    requests[before..]
        .iter()
        .map(|r| r.body["messages"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the turn ran the live persona (`LIVE`) and not the draft's, or the reverse.
fn ran(prompts: &str, mark: &str) {
    let other = if mark == LIVE { DRAFT } else { LIVE };
    assert!(prompts.contains(mark), "{mark} not in {prompts}");
    assert!(!prompts.contains(other), "{other} in {prompts}");
}

fn widget_title(worker: &Worker, key: &str, headers: &[(&str, &str)]) -> Value {
    let (status, body) = call(worker, "GET", "/widget/config", key, headers, None);
    assert_eq!(status, 200, "{body}");
    json_of(&body)["title"].clone()
}

#[test]
fn a_draft_is_invisible_to_visitors_until_published_and_an_earlier_version_restores() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, shop có giao hàng toàn quốc ạ."));
    let site = concierge_e2e::api::site_with_upstream(worker, "Publish", &upstream.base_url, false);
    let secret = site.secret_key.as_str();
    let public = site.public_key.as_str();

    // A direct change is live at once (as before drafts), recorded as version 2.
    let (status, body) = call(
        worker,
        "PATCH",
        "/admin/site",
        secret,
        &[],
        Some(json!({"persona": format!("Bạn là {LIVE}."), "title": "Live title"})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["site"]["version"], 2, "{body}");

    // The merchant edits the draft: the live configuration is unchanged.
    let (status, body) = call(
        worker,
        "PATCH",
        "/admin/site/draft",
        secret,
        &[],
        Some(json!({"persona": format!("Bạn là {DRAFT}."), "title": "Draft title"})),
    );
    assert_eq!(status, 200, "{body}");
    let draft = json_of(&body);
    assert_eq!(draft["draft_pending"], true, "{body}");
    assert_eq!(draft["live_version"], 2, "{body}");
    assert_eq!(draft["site"]["config"]["title"], "Draft title", "{body}");
    let (status, body) = call(worker, "GET", "/admin/site", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let live = json_of(&body);
    assert_eq!(live["site"]["config"]["title"], "Live title", "{body}");
    assert_eq!(live["site"]["draft_pending"], true, "{body}");

    // Visitors (the widget: public key, allowed origin) get the live configuration.
    ran(&turn_prompts(worker, &upstream, public, &[]), LIVE);
    assert_eq!(widget_title(worker, public, &[]), "Live title");

    // A public key cannot select the draft, whatever it sends; nor obtain a draft key,
    // nor publish, list or restore versions.
    for value in ["1", "true", "pk_draft_1_x_00"] {
        forbidden(call(
            worker,
            "POST",
            "/conversations",
            public,
            &[("x-concierge-draft", value)],
            Some(json!({})),
        ));
        forbidden(call(
            worker,
            "GET",
            "/widget/config",
            public,
            &[("x-concierge-draft", value)],
            None,
        ));
    }
    forbidden(call(
        worker,
        "POST",
        "/admin/site/draft/key",
        public,
        &[],
        None,
    ));
    forbidden(call(
        worker,
        "POST",
        "/admin/publish",
        public,
        &[],
        Some(json!({})),
    ));
    forbidden(call(worker, "GET", "/admin/versions", public, &[], None));
    forbidden(call(
        worker,
        "POST",
        "/admin/versions/1/restore",
        public,
        &[],
        Some(json!({})),
    ));
    let (status, body) = call(worker, "POST", "/admin/publish", "pk_nope", &[], None);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (401, "unauthorized"),
        "{body}"
    );

    // The secret key runs the draft when it asks for it.
    ran(
        &turn_prompts(worker, &upstream, secret, &[("x-concierge-draft", "1")]),
        DRAFT,
    );
    ran(&turn_prompts(worker, &upstream, secret, &[]), LIVE);

    // Try it: the console obtains a draft key with the secret key; the panel uses it as
    // its public key (from an allowed origin) and runs the draft.
    let (status, body) = call(worker, "POST", "/admin/site/draft/key", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let draft_key = json_of(&body)["draft_key"]
        .as_str()
        .expect("draft key")
        .to_string();
    assert!(draft_key.starts_with("pk_draft_"), "{draft_key}");
    ran(&turn_prompts(worker, &upstream, &draft_key, &[]), DRAFT);
    assert_eq!(widget_title(worker, &draft_key, &[]), "Draft title");
    // Like a public key, only from an allowed origin.
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &draft_key)
            .set("origin", "https://elsewhere.example")
            .send_json(json!({})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (403, "forbidden"),
        "{body}"
    );
    // Tampered, expired, or moved to another site: refused.
    let other = concierge_e2e::api::site_with_upstream(worker, "Other", &upstream.base_url, false);
    let mut tampered = draft_key.clone();
    let last = if tampered.ends_with('0') { "1" } else { "0" };
    tampered.replace_range(tampered.len() - 1.., last);
    let tag = draft_key.rsplit('_').next().expect("tag");
    let expired = format!("pk_draft_1_{}_{tag}", site.id);
    let moved = draft_key.replace(&site.id, &other.id);
    for key in [&tampered, &expired, &moved] {
        let (status, body) = call(worker, "POST", "/conversations", key, &[], Some(json!({})));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (401, "unauthorized"),
            "{key}: {body}"
        );
    }
    // Still, visitors see the live configuration.
    ran(&turn_prompts(worker, &upstream, public, &[]), LIVE);
    assert_eq!(widget_title(worker, public, &[]), "Live title");

    // A direct change while a draft is pending goes live and into the draft too.
    let (status, body) = call(
        worker,
        "PATCH",
        "/admin/site",
        secret,
        &[],
        Some(json!({"starter_prompts": ["Giao hàng?"]})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["site"]["version"], 3, "{body}");
    let (status, body) = call(worker, "GET", "/admin/site/draft", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let draft = json_of(&body);
    assert_eq!(
        draft["site"]["config"]["starter_prompts"],
        json!(["Giao hàng?"])
    );
    assert_eq!(draft["site"]["config"]["title"], "Draft title", "{body}");

    // Publish: the draft goes live, as version 4; nothing is left to publish.
    let (status, body) = call(
        worker,
        "POST",
        "/admin/publish",
        secret,
        &[],
        Some(json!({"note": "Giọng mới"})),
    );
    assert_eq!(status, 200, "{body}");
    let published = json_of(&body);
    assert_eq!(published["version"], 4, "{body}");
    assert_eq!(
        published["site"]["config"]["title"], "Draft title",
        "{body}"
    );
    assert_eq!(published["site"]["draft_pending"], false, "{body}");
    ran(&turn_prompts(worker, &upstream, public, &[]), DRAFT);
    assert_eq!(widget_title(worker, public, &[]), "Draft title");
    let (status, body) = call(worker, "POST", "/admin/publish", secret, &[], None);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (409, "conflict"),
        "{body}"
    );

    // The versions, newest first.
    let (status, body) = call(worker, "GET", "/admin/versions", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let list = json_of(&body);
    assert_eq!(list["live_version"], 4, "{body}");
    let versions = list["versions"].as_array().expect("versions");
    let summary: Vec<(u64, &str, bool)> = versions
        .iter()
        .map(|v| {
            (
                v["version"].as_u64().expect("version"),
                v["source"].as_str().expect("source"),
                v["live"].as_bool().expect("live"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (4, "published", true),
            (3, "edited", false),
            (2, "edited", false),
            (1, "created", false)
        ]
    );
    assert_eq!(versions[0]["note"], "Giọng mới", "{body}");
    let (status, body) = call(worker, "GET", "/admin/versions/3", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let three = json_of(&body);
    assert_eq!(three["site"]["config"]["title"], "Live title", "{body}");
    assert!(!body.contains("public_key\":\"pk_"), "no keys: {body}");

    // Restore version 3: its behaviour is back, recorded as version 5.
    let (status, body) = call(
        worker,
        "POST",
        "/admin/versions/3/restore",
        secret,
        &[],
        Some(json!({})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["version"], 5, "{body}");
    ran(&turn_prompts(worker, &upstream, public, &[]), LIVE);
    assert_eq!(widget_title(worker, public, &[]), "Live title");
    let (status, body) = call(worker, "GET", "/admin/versions", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let newest = json_of(&body)["versions"][0].clone();
    assert_eq!(
        (
            &newest["version"],
            &newest["source"],
            &newest["restored_from"],
            &newest["live"]
        ),
        (&json!(5), &json!("restored"), &json!(3), &json!(true)),
        "{body}"
    );
    // The keys still work after all of it (they are never part of a version).
    assert_eq!(
        call(worker, "GET", "/widget/config", public, &[], None).0,
        200
    );

    // Restoring the live version, and versions that are not kept.
    let (status, body) = call(
        worker,
        "POST",
        "/admin/versions/5/restore",
        secret,
        &[],
        Some(json!({})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (409, "conflict"),
        "{body}"
    );
    for path in [
        "/admin/versions/99/restore",
        "/admin/versions/0/restore",
        "/admin/versions/abc/restore",
    ] {
        let (status, body) = call(worker, "POST", path, secret, &[], Some(json!({})));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (404, "not_found"),
            "{path}: {body}"
        );
    }
    let (status, body) = call(worker, "GET", "/admin/versions/99", secret, &[], None);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (404, "not_found"),
        "{body}"
    );
    // Another site's versions are not this one's.
    let (status, body) = call(
        worker,
        "POST",
        "/admin/versions/3/restore",
        &other.secret_key,
        &[],
        Some(json!({})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (404, "not_found"),
        "{body}"
    );

    // Dropping a draft: the draft is the live configuration again.
    let (status, body) = call(
        worker,
        "PATCH",
        "/admin/site/draft",
        secret,
        &[],
        Some(json!({"title": "Scrap"})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["draft_pending"], true, "{body}");
    let (status, body) = call(worker, "DELETE", "/admin/site/draft", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let dropped = json_of(&body);
    assert_eq!(dropped["draft_pending"], false, "{body}");
    assert_eq!(dropped["site"]["config"]["title"], "Live title", "{body}");

    // Rotating the keys voids the draft keys.
    let (status, body) = call(worker, "POST", "/admin/site/draft/key", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let draft_key = json_of(&body)["draft_key"]
        .as_str()
        .expect("key")
        .to_string();
    assert_eq!(widget_title(worker, &draft_key, &[]), "Live title");
    let (status, body) = call(worker, "POST", "/admin/site/rotate-keys", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(worker, "GET", "/widget/config", &draft_key, &[], None);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (401, "unauthorized"),
        "{body}"
    );
}

/// `POST /admin/tests` with `key` and `body`.
fn create_case(worker: &Worker, key: &str, body: Value) -> (u16, String) {
    call(worker, "POST", "/admin/tests", key, &[], Some(body))
}

#[test]
fn test_cases_are_checked_kept_per_site_up_to_100_listed_and_deleted() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = concierge_e2e::api::site_with_upstream(worker, "Cases", &upstream.base_url, false);
    let other =
        concierge_e2e::api::site_with_upstream(worker, "Cases 2", &upstream.base_url, false);
    let secret = site.secret_key.as_str();

    let (status, body) = create_case(
        worker,
        secret,
        json!({
            "name": " Giao hàng ",
            "question": " Shop giao hàng mất mấy ngày? ",
            "conversation": [{"role": "user", "content": "Chào shop"}, {"role": "assistant", "content": "Dạ chào anh"}],
            "user": {"user_id": "khach-1", "role": "GUEST"},
            "checks": {"contains_any": ["2 ngày", "3 ngày"], "not_contains": ["không biết"],
                       "language": "vi", "max_latency_ms": 5000, "rubric": "Trả lời lịch sự."}
        }),
    );
    assert_eq!(status, 201, "{body}");
    let created = json_of(&body)["case"].clone();
    let id = created["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("tc_"), "{id}");
    assert_eq!(created["question"], "Shop giao hàng mất mấy ngày?");
    assert_eq!(created["name"], "Giao hàng");
    assert_eq!(
        created["checks"]["contains_any"],
        json!(["2 ngày", "3 ngày"])
    );

    // Checked: a 400 naming the field; the public key may not.
    for (case, part) in [
        (json!({"question": "q", "checks": {}}), "at least one check"),
        (
            json!({"question": "q", "checks": {"language": "fr"}}),
            "checks.language",
        ),
        (
            json!({"question": "q", "checks": {"payload": "map"}}),
            "checks.payload",
        ),
        (
            json!({"question": "", "checks": {"sources_cited": true}}),
            "`question`",
        ),
        (
            json!({"question": "q", "checks": {"sources_cited": true}, "extra": 1}),
            "unknown field `extra`",
        ),
        (
            json!({"question": "q", "checks": {"contains": ["x"]}, "user": {"user_id": ""}}),
            "`user`",
        ),
    ] {
        let (status, body) = create_case(worker, secret, case.clone());
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{case}: {body}"
        );
        assert!(body.contains(part), "{part} not in {body}");
    }
    forbidden(create_case(
        worker,
        &site.public_key,
        json!({"question": "q", "checks": {"contains": ["x"]}}),
    ));
    forbidden(call(
        worker,
        "GET",
        "/admin/tests",
        &site.public_key,
        &[],
        None,
    ));

    // Up to 100 per site; another site's are its own.
    for n in 1..100 {
        let (status, body) = create_case(
            worker,
            secret,
            json!({"question": format!("Câu hỏi {n}"), "checks": {"contains": ["x"]}}),
        );
        assert_eq!(status, 201, "case {n}: {body}");
    }
    let (status, body) = create_case(
        worker,
        secret,
        json!({"question": "one too many", "checks": {"contains": ["x"]}}),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (409, "limit_reached"),
        "{body}"
    );
    let (status, body) = call(worker, "GET", "/admin/tests", secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let listed = json_of(&body);
    assert_eq!(
        (&listed["count"], &listed["max"]),
        (&json!(100), &json!(100))
    );
    assert_eq!(listed["cases"][0], created, "oldest first, as created");
    let (status, body) = call(worker, "GET", "/admin/tests", &other.secret_key, &[], None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["count"], 0, "{body}");
    let path = format!("/admin/tests/{id}");
    let (status, body) = call(worker, "DELETE", &path, &other.secret_key, &[], None);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (404, "not_found"),
        "{body}"
    );

    // Deleted: a place frees up; deleting again is a 404.
    let (status, body) = call(worker, "DELETE", &path, secret, &[], None);
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(worker, "DELETE", &path, secret, &[], None);
    assert_eq!(
        (status, error_code(&body).as_str()),
        (404, "not_found"),
        "{body}"
    );
    let (status, body) = create_case(
        worker,
        secret,
        json!({"question": "in its place", "checks": {"sources_cited": false}}),
    );
    assert_eq!(status, 201, "{body}");
}
