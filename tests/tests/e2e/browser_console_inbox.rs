//! The console's waiting list can be triaged (issue 45, item 3), over HTTP and in real
//! headless Chromium (`tests/browser/console_inbox.mjs`) against the real Worker: each
//! waiting row shows what the visitor wants (not the notice), who they are (a proven user
//! id, an unverified label, or anonymous) and how long they have waited, kept current; the
//! page title counts them; a desktop notification, asked for only on a click, announces a
//! new one. The dashboard leaves requests for a person out of the top questions and shows
//! the handoff figures. axe-core finds nothing critical or serious (desktop and phone).
//! Screenshots: `target/test-artifacts/console-inbox-*.png`.

use std::time::Duration;

use concierge_e2e::api::{create_conversation, eventually, send, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";
/// The verified visitor's question, asked before "Gặp nhân viên".
const VERIFIED_QUESTION: &str = "Máy tôi không lên nguồn, bảo hành thế nào?";
/// The labelled visitor asks for a person with the reason in the same message.
const LABEL_QUESTION: &str = "cho mình gặp nhân viên, đơn hàng DH-981 giao sai màu rồi";
/// The anonymous visitor's question, asked before "Gặp nhân viên".
const ANON_QUESTION: &str = "Có giao hàng COD ở Đà Nẵng không?";
/// The panel's button text.
const BUTTON: &str = "Gặp nhân viên";

/// Run one scenario of `console_inbox.mjs`; a panic with its output on failure.
fn run(scenario: &str, worker: &Worker, env: &[(&str, &str)]) {
    crate::browser_console::run_script("console_inbox", scenario, worker, env);
}

fn secret_get(worker: &Worker, site: &TestSite, path: &str) -> Value {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url(path))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("JSON")
}

fn handoff_on(worker: &Worker, site: &TestSite, wait_seconds: u32) {
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"handoff": {"enabled": true, "wait_seconds": wait_seconds}})),
    );
    assert_eq!(status, 200, "{body}");
}

/// A conversation the public key opened from the allowed origin, with `label` as its
/// (unproven) user id; its id.
fn labelled_conversation(worker: &Worker, site: &TestSite, label: &str) -> String {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.public_key)
            .set("origin", ORIGIN)
            .send_json(json!({"user_id": label})),
    );
    assert_eq!(status, 201, "{body}");
    serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string()
}

fn public_send(worker: &Worker, site: &TestSite, conversation: &str, content: &str) {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!("/conversations/{conversation}/messages")))
            .set("x-api-key", &site.public_key)
            .set("origin", ORIGIN)
            .send_json(json!({"content": content})),
    );
    assert_eq!(status, 200, "{body}");
}

fn operate(worker: &Worker, site: &TestSite, conversation: &str, body: Value) {
    let (status, text) = into_parts(
        agent()
            .post(&worker.url(&format!("/admin/conversations/{conversation}/handoff")))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    );
    assert_eq!(status, 200, "{text}");
}

fn row<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("{id} listed: {list}"))
}

#[test]
fn the_waiting_list_shows_question_visitor_and_wait_and_the_dashboard_counts_handoffs() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(
        "Dạ, em xin phép kiểm tra và trả lời quý khách ngay ạ.",
    ));
    let site = site_with_upstream(
        worker,
        "Máy Tính Minh (inbox test)",
        &upstream.base_url,
        false,
    );
    handoff_on(worker, &site, 600);
    let key = site.secret_key.as_str();

    // A proven user asks a question, then presses the button.
    let (verified, _) = create_conversation(worker, &site, json!({"user_id": "khach-0042"}));
    send(worker, key, &verified, VERIFIED_QUESTION);
    send(worker, key, &verified, BUTTON);
    // A visitor's label (the public key: not proven) asks with the reason in one message.
    let labelled = labelled_conversation(worker, &site, "Chị Hoa");
    public_send(worker, &site, &labelled, LABEL_QUESTION);
    // An anonymous visitor.
    let (anonymous, _) = create_conversation(worker, &site, json!({}));
    send(worker, key, &anonymous, ANON_QUESTION);
    send(worker, key, &anonymous, BUTTON);
    // One more is taken over, then handed back.
    let (taken, _) = create_conversation(worker, &site, json!({}));
    send(worker, key, &taken, BUTTON);
    std::thread::sleep(Duration::from_millis(300));
    operate(
        worker,
        &site,
        &taken,
        json!({"action": "take", "agent": "Lan"}),
    );
    operate(worker, &site, &taken, json!({"action": "release"}));

    // The list: the question, not the notice; who the visitor is.
    let list = secret_get(worker, &site, "/admin/handoffs");
    assert_eq!(list["waiting"], 3, "{list}");
    let v = row(&list, &verified);
    assert_eq!(v["question"], VERIFIED_QUESTION, "{v}");
    assert_eq!(v["last_message"]["kind"], "handoff", "{v}");
    assert_eq!(
        (&v["user_id"], &v["user_id_verified"]),
        (&json!("khach-0042"), &json!(true))
    );
    let l = row(&list, &labelled);
    assert_eq!(l["question"], LABEL_QUESTION, "{l}");
    assert_eq!(
        (&l["user_id"], &l["user_id_verified"]),
        (&json!("Chị Hoa"), &json!(false))
    );
    let a = row(&list, &anonymous);
    assert_eq!(a["question"], ANON_QUESTION, "{a}");
    assert_eq!(a["user_id"], Value::Null, "{a}");

    // The dashboard: the button's text is not a top question; the handoff figures.
    let stats = secret_get(worker, &site, "/admin/stats?days=7");
    let top: Vec<&str> = stats["top_questions"]
        .as_array()
        .expect("top_questions")
        .iter()
        .map(|q| q["question"].as_str().unwrap_or(""))
        .collect();
    assert!(!top.contains(&BUTTON), "{top:?}");
    assert!(!top.contains(&LABEL_QUESTION), "{top:?}");
    assert!(top.contains(&VERIFIED_QUESTION), "{top:?}");
    assert!(top.contains(&ANON_QUESTION), "{top:?}");
    let figures = &stats["handoff"];
    assert_eq!(
        (
            &figures["requested"],
            &figures["taken"],
            &figures["timed_out"]
        ),
        (&json!(4), &json!(1), &json!(0)),
        "{stats}"
    );
    let median = figures["median_take_ms"].as_f64().expect("median_take_ms");
    assert!(
        (250.0..60_000.0).contains(&median),
        "the take came ≥ 300 ms after the request: {median}"
    );

    // A wait nobody takes is counted as timed out (another site, a 10 s wait).
    let short = site_with_upstream(
        worker,
        "Timeout shop (inbox test)",
        &upstream.base_url,
        false,
    );
    handoff_on(worker, &short, 10);
    let (late, _) = create_conversation(worker, &short, json!({}));
    send(worker, &short.secret_key, &late, BUTTON);
    let figures = eventually(Duration::from_secs(40), "the wait to time out", || {
        let stats = secret_get(worker, &short, "/admin/stats?days=7");
        (stats["handoff"]["timed_out"] == 1).then(|| stats["handoff"].clone())
    });
    assert_eq!(
        (
            &figures["requested"],
            &figures["taken"],
            &figures["median_take_ms"]
        ),
        (&json!(1), &json!(0), &Value::Null),
        "{figures}"
    );

    run(
        "inbox",
        worker,
        &[
            ("SECRET_KEY", key),
            ("VERIFIED", &verified),
            ("VERIFIED_QUESTION", VERIFIED_QUESTION),
            ("LABELLED", &labelled),
            ("LABEL_QUESTION", LABEL_QUESTION),
            ("ANONYMOUS", &anonymous),
            ("ANON_QUESTION", ANON_QUESTION),
        ],
    );
}

#[test]
fn console_rough_edges_records_words_copy_buttons_and_one_new_conversation_control() {
    let worker = Worker::shared();
    let site =
        worker.create_site(json!({"name": "Phòng trọ (console test)", "template": "rental"}));
    // The templates' defaults the Assistant tab shows (secret key only).
    let defaults = secret_get(worker, &site, "/admin/template-defaults");
    assert_eq!(defaults["rental"]["row_cap"], 100, "{defaults}");
    assert_eq!(defaults["rental"]["show_role_label"], true, "{defaults}");
    assert_eq!(defaults["analyst"]["max_rows"], 50_000, "{defaults}");
    assert_eq!(defaults["guarded"]["domain_vi"], "NHA KHOA", "{defaults}");
    assert!(
        defaults["knowledge"]["agents"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "{defaults}"
    );
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/template-defaults"))
            .set("x-api-key", &site.public_key)
            .call(),
    );
    assert!(
        matches!(status, 401 | 403),
        "the public key: {status} {body}"
    );
    run("rough", worker, &[("SECRET_KEY", &site.secret_key)]);
}

/// The guarded demo (scripts/seed.sql) allows the demo origins: its public key opens a
/// conversation from the Worker's own origin (it was refused: no allowed origin).
#[test]
fn the_guarded_demo_allows_the_demo_origin() {
    let worker = Worker::shared();
    let origin = worker.url("");
    let origin = origin.trim_end_matches('/');
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", "pk_dental_demo")
            .set("origin", origin)
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", "pk_dental_demo")
            .set("origin", "https://elsewhere.example")
            .send_json(json!({})),
    );
    assert_eq!(status, 403, "another origin is still refused: {body}");
}
