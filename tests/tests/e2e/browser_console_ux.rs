//! The merchant console's review and testing tools (issue 26, items 10–15) in real
//! headless Chromium (`tests/browser/console_ux.mjs`) against the real Worker: the Overview
//! dashboard drawn as charts, the console in Vietnamese and English, conversations drawn
//! as the visitor saw them with search, filters and export, the records entity from the
//! schema, and Try it as a chosen user on an analyst site. axe-core audits every tab
//! (desktop and phone). The console hands the panel's renderer the panel's words in its order
//! (`tests/browser/console_words.mjs`). Screenshots land in `target/test-artifacts/console-ux-*.png`.

use std::process::Command;

use concierge_e2e::api::{fixed_sentence, send, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root};
use serde_json::{Value, json};

use crate::scripted_turns::stage;

/// Run one scenario of `console_ux.mjs`; its stdout, or a panic with its output.
fn run(scenario: &str, worker: &Worker, env: &[(&str, &str)]) -> String {
    crate::browser_console::run_script("console_ux", scenario, worker, env)
}

/// A shop site whose model always fails (so a turn without a staged script is left
/// unanswered).
fn failing_site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> TestSite {
    upstream.set_default(Reply::Status(500));
    site_with_upstream(worker, name, &upstream.base_url, false)
}

/// A new conversation (secret key); its id.
pub(crate) fn conversation(worker: &Worker, site: &TestSite) -> String {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string()
}

/// A conversation where `question` is answered by the scripted `steps`; its id and the
/// answer's message id.
pub(crate) fn scripted(
    worker: &Worker,
    site: &TestSite,
    question: &str,
    steps: Value,
) -> (String, String) {
    let id = conversation(worker, site);
    assert_eq!(
        stage(worker, &site.secret_key, &id, &json!({ "steps": steps })).0,
        204
    );
    let (status, events) = send(worker, &site.secret_key, &id, question);
    assert_eq!(status, 200);
    let completed: Value =
        serde_json::from_str(&events.last().expect("completed").data).expect("JSON");
    let answer = completed["message_id"].as_str().expect("message id");
    (id, answer.to_string())
}

/// A conversation whose `question` got no answer (the model failed).
pub(crate) fn unanswered(worker: &Worker, site: &TestSite, question: &str) -> String {
    let id = conversation(worker, site);
    let _ = send(worker, &site.secret_key, &id, question);
    let (status, body) = into_parts(
        agent()
            .get(&worker.url(&format!("/conversations/{id}/history")))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let history: Value = serde_json::from_str(&body).expect("JSON");
    let last = history["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned();
    assert_eq!(
        last.map(|m| m["role"].clone()),
        Some(json!("user")),
        "left unanswered: {body}"
    );
    id
}

/// The site's own vote down (secret key) on an answer.
pub(crate) fn vote_down(worker: &Worker, site: &TestSite, conversation: &str, answer: &str) {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!(
                "/conversations/{conversation}/messages/{answer}/feedback"
            )))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"rating": "down", "comment": "Thiếu giá"})),
    );
    assert_eq!(status, 200, "{body}");
}

fn chunk(text: &str) -> Value {
    json!({"type": "chunk", "text": text})
}

#[test]
fn the_overview_tab_draws_the_sites_activity_as_charts_and_every_tab_passes_axe() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = failing_site(worker, &upstream, "Console overview");
    let top = "Chính sách đổi trả thế nào?";
    scripted(worker, &site, top, json!([chunk("Dạ, đổi trong 30 ngày.")]));
    let (id, answer) = scripted(worker, &site, top, json!([chunk("Dạ, 30 ngày ạ.")]));
    vote_down(worker, &site, &id, &answer);
    scripted(
        worker,
        &site,
        "Mấy giờ đóng cửa?",
        json!([chunk("21 giờ.")]),
    );
    unanswered(worker, &site, "Có giao hàng không?");
    conversation(worker, &site); // opened, nothing asked
    run(
        "overview",
        worker,
        &[
            ("SECRET_KEY", &site.secret_key),
            ("TOP_QUESTION", top),
            ("DOWN_VOTES", "1"),
            ("UNANSWERED", "1"),
        ],
    );
}

#[test]
fn the_console_follows_a_vietnamese_browser_switches_to_english_and_remembers_it() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Console ngôn ngữ", "template": "shop"}));
    run("language", worker, &[("SECRET_KEY", &site.secret_key)]);
}

#[test]
fn conversations_show_what_the_visitor_saw_only_when_asked_filtered_and_exported() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = failing_site(worker, &upstream, "Console review");
    let question = "Cho em xem các mẫu PC gaming RTX 4060";
    let (rich, _) = scripted(
        worker,
        &site,
        question,
        json!([
            chunk("Dạ, đây là các mẫu **RTX 4060** bên em:\n\n- PC Gaming A\n- PC Gaming B\n\n| Mẫu | Giá |\n|---|---:|\n| PC Gaming A | 20.990.000 |\n| PC Gaming B | 24.490.000 |\n"),
            {"type": "payload", "kind": "table", "data": {"columns": [
                {"key": "name", "label": "Sản phẩm", "type": "string"},
                {"key": "price", "label": "Giá", "type": "number"}],
                "rows": [{"name": "PC Gaming A", "price": 20_990_000}, {"name": "PC Gaming B", "price": 24_490_000}]}},
            {"type": "payload", "kind": "chart", "data": {"chart": "bar", "title": "Giá", "labels": ["A", "B"],
                "series": [{"name": "Giá", "values": [20_990_000, 24_490_000]}], "alt": "Giá hai mẫu"}},
            {"type": "payload", "kind": "list", "data": {"total": 2, "items": [
                {"id": "a", "title": "PC Gaming A", "path": "https://shop.example/pc-a", "entity": "product"},
                {"id": "b", "title": "PC Gaming B", "path": "https://shop.example/pc-b", "entity": "product"}]}},
            {"type": "payload", "kind": "sources", "data": [
                {"title": "Bảng giá tháng 11", "url": "https://shop.example/bang-gia"}]},
        ]),
    );
    let (voted, answer) = scripted(
        worker,
        &site,
        "Bảo hành bao lâu?",
        json!([chunk("Dạ, 24 tháng.")]),
    );
    vote_down(worker, &site, &voted, &answer);
    let silent = unanswered(worker, &site, "Có giao hàng không?");
    let greeting_only = conversation(worker, &site);
    run(
        "conversations",
        worker,
        &[
            ("SECRET_KEY", &site.secret_key),
            ("RICH", &rich),
            ("RICH_QUESTION", question),
            ("VOTED", &voted),
            ("UNANSWERED_ID", &silent),
            ("GREETING_ONLY", &greeting_only),
        ],
    );
}

#[test]
fn records_default_to_the_rental_schemas_first_entity() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Console phòng trọ", "template": "rental"}));
    // The upload under the default entity is accepted (`{"upserted":1}` on screen; the
    // old default `rooms` answered "No such resource.").
    run("records", worker, &[("SECRET_KEY", &site.secret_key)]);
}

const CLASSIFIER: &str = "Bạn là một classifier phân loại ý định người dùng.";
const AGENT: &str = "Bạn là trợ lý phân tích dữ liệu kinh doanh.";
const FORMATTER: &str = "Format kết quả phân tích dữ liệu cho người dùng.";

#[test]
fn try_it_as_a_chosen_user_reaches_that_users_data_on_an_analyst_site() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Console analyst", &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"template": "analyst"})),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = into_parts(
        agent()
            .put(&worker.url("/admin/data/don_hang?user_id=shop-owner"))
            .set("x-api-key", &site.secret_key)
            .set("content-type", "text/csv")
            .send_string(
                "ngay,nen_tang,doanh_thu\n05/02/2024,Shopee,60.000.000\n09/02/2024,Lazada,50.000.000\n",
            ),
    );
    assert_eq!(status, 200, "{body}");
    let answer = "Doanh thu kênh Shopee tháng 2/2024 là 60.000.000 đồng.";
    upstream.push_for(CLASSIFIER, Reply::text("data_query"));
    upstream.push_for(
        AGENT,
        Reply::ToolCalls(vec![
            ("s".into(), "get_data_schema".into(), "{}".into()),
            (
                "a".into(),
                "aggregate_data".into(),
                json!({"connection_name": "don_hang", "operation": "sum", "field": "doanh_thu"})
                    .to_string(),
            ),
        ]),
    );
    upstream.push_for(AGENT, Reply::text("Tổng 60000000"));
    upstream.push_for(FORMATTER, Reply::text(answer));
    let question = "Doanh thu kênh Shopee tháng 2/2024?";
    run(
        "try_as",
        worker,
        &[
            ("SECRET_KEY", &site.secret_key),
            ("USER", "shop-owner"),
            ("QUESTION", question),
            ("ANSWER", answer),
            (
                "NO_DATA",
                &fixed_sentence("analyst_fixed_vi.md", "no_connections"),
            ),
        ],
    );
    // The turn ran as the user: their data set was read by the tool.
    let rows = worker.site_rows(
        &site,
        &format!(
            "SELECT user_id FROM conversations WHERE site_id = '{}' AND user_id IS NOT NULL",
            site.id
        ),
    );
    assert!(
        rows.iter().any(|r| r["user_id"] == "shop-owner"),
        "{rows:?}"
    );
}

#[test]
fn the_consoles_words_are_the_panels_in_the_panels_order() {
    // Node only (no Worker, no browser): `tests/browser/console_words.mjs`.
    let output = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node --no-warnings tests/browser/console_words.mjs")
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("ok console words"),
        "console_words.mjs failed:\n{stdout}\n{stderr}"
    );
}
