//! The merchant console (`/console`, `tests/browser/console.mjs`) in real headless Chromium
//! against the real Worker under `wrangler dev`, with a scripted LLM upstream: a merchant
//! signs in with the secret key, changes the greeting and sees it in the inline panel,
//! adds a document and sees retrieval find it, reads a conversation and its feedback,
//! checks the install snippet, uses the phone-width read-only views, and rotates the keys.
//! Screenshots land in `target/test-artifacts/console-*.png`.

use std::process::Command;

use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root, scratch_dir};
use serde_json::{Value, json};

use crate::browser::BROWSER;

const GREETING: &str = "Xin chào từ bảng điều khiển, em giúp gì được ạ?";
const DOC_ID: &str = "chinh-sach-doi-tra";
const DOC_TITLE: &str = "Chính sách đổi trả ZEPHYR";
const DOC_CONTENT: &str =
    "Chính sách đổi trả: sản phẩm lỗi được đổi mới trong 30 ngày, mã chính sách ZEPHYR-30.";
const ASK_DOC: &str = "Giá đổi trả sản phẩm lỗi thế nào, mua rồi có được đổi không?";
const LLM_KEY: &str = "upstream-key-set-from-the-console";
const VOTE_COMMENT: &str = "Thiếu giờ mở cửa cuối tuần";

/// Run one scenario of `console.mjs`; its stdout, or a panic with its output.
pub(crate) fn run(scenario: &str, worker: &Worker, env: &[(&str, &str)]) -> String {
    run_script("console", scenario, worker, env)
}

/// Run one scenario of the console's browser script `tests/browser/{script}.mjs` against
/// `worker`'s console (one browser at a time); its stdout, or a panic with its output.
pub(crate) fn run_script(
    script: &str,
    scenario: &str,
    worker: &Worker,
    env: &[(&str, &str)],
) -> String {
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir(&format!("chromium-{}", script.replace('_', "-")));
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            ". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/{script}.mjs \"$@\""
        ))
        .arg("node")
        .arg(scenario)
        .arg(worker.url("/console"))
        .arg(&artifacts)
        .arg(&profile)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        output.status.success() && stdout.contains(&format!("ok {scenario}")),
        "{script} scenario {scenario} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// A shop site whose LLM (chat and embeddings) is `upstream`, usable from the shop's origin.
fn site(worker: &Worker, upstream: &ScriptedUpstream) -> TestSite {
    worker.create_site(json!({
        "name": "An Phát PC (console test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": ["https://shop.example"],
    }))
}

fn status_with(key: &str, worker: &Worker, path: &str) -> (u16, String) {
    into_parts(agent().get(&worker.url(path)).set("x-api-key", key).call())
}

#[test]
fn a_merchant_configures_feeds_tries_reviews_installs_and_rotates_from_the_console() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(
        "Dạ, sản phẩm lỗi được đổi mới trong 30 ngày ạ.",
    ));
    let site = site(worker, &upstream);

    // A visitor's conversation, voted down with a comment.
    let (conversation, answer, _) = crate::feedback::answered(worker, &site);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!(
                "/conversations/{conversation}/messages/{answer}/feedback"
            )))
            .set("x-api-key", &site.public_key)
            .set("origin", "https://shop.example")
            .send_json(json!({"rating": "down", "comment": VOTE_COMMENT})),
    );
    assert_eq!(status, 200, "{body}");

    // The page the Worker serves: no key in it, a strict policy, never framed.
    let response = agent()
        .get(&worker.url("/console"))
        .call()
        .expect("console");
    let policy = response
        .header("content-security-policy")
        .unwrap_or_default()
        .to_string();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "console CSP: {policy}");
    }
    assert_eq!(response.header("cache-control"), Some("no-store"));
    let html = response.into_string().expect("html");
    assert!(html.contains("Concierge console"), "{html}");
    let key_shaped = ["sk_", "pk_"].iter().any(|prefix| {
        html.match_indices(prefix).any(|(at, _)| {
            html[at + 3..]
                .chars()
                .take(8)
                .all(|c| c.is_ascii_hexdigit())
        })
    });
    assert!(
        !key_shaped && !html.contains(&site.secret_key) && !html.contains(&site.public_key),
        "no key in the page"
    );

    // The static file behind it is not reachable without the policy either.
    let response = match ureq::AgentBuilder::new()
        .redirects(0)
        .build()
        .get(&worker.url("/console.html"))
        .call()
    {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(err) => panic!("GET /console.html: {err}"),
    };
    let served = response.status() == 200;
    let policy = response
        .header("content-security-policy")
        .unwrap_or_default()
        .to_string();
    assert!(
        !served || policy.contains("frame-ancestors 'none'"),
        "/console.html served without the console's policy ({policy:?})"
    );

    // The conversation list the console reads.
    let (status, body) = status_with(&site.secret_key, worker, "/admin/conversations");
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).expect("JSON");
    let row = list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .find(|c| c["id"] == conversation.as_str())
        .expect("the conversation is listed")
        .clone();
    assert_eq!(row["down_votes"], 1.0, "{row}");
    assert_eq!(row["last_role"], "assistant", "{row}");
    assert_eq!(row["first_question"], "Mấy giờ đóng cửa?", "{row}");
    assert_eq!(
        status_with(&site.public_key, worker, "/admin/conversations").0,
        403,
        "the public key cannot list conversations"
    );

    let stdout = run(
        "console",
        worker,
        &[
            ("SECRET_KEY", &site.secret_key),
            ("PUBLIC_KEY", &site.public_key),
            ("GREETING", GREETING),
            ("LLM_KEY", LLM_KEY),
            ("DOC_ID", DOC_ID),
            ("DOC_TITLE", DOC_TITLE),
            ("DOC_CONTENT", DOC_CONTENT),
            ("ASK_DOC", ASK_DOC),
            ("CONVERSATION", &conversation),
            ("VOTE_COMMENT", VOTE_COMMENT),
        ],
    );

    // The key set in the console is the one the site's model calls carry.
    let requests = upstream.chat_requests();
    assert!(
        requests
            .iter()
            .any(|r| r.authorization.as_deref() == Some(&format!("Bearer {LLM_KEY}"))),
        "the upstream got the key stored from the console"
    );

    // The question asked in the inline panel reached the model with the document in it.
    let prompts: Vec<String> = upstream
        .chat_requests()
        .iter()
        .map(|r| r.body["messages"].to_string())
        .collect();
    assert!(
        prompts
            .iter()
            .any(|p| p.contains(ASK_DOC) && p.contains("ZEPHYR-30")),
        "the panel's question was answered with the document retrieved: {prompts:?}"
    );

    // The rotation the browser did: the old keys are refused, the new ones work, and the
    // site now shows the new public key for the snippet.
    let rotated = stdout
        .lines()
        .find_map(|l| l.strip_prefix("rotated "))
        .expect("the new keys");
    let (new_public, new_secret) = rotated.split_once(' ').expect("two keys");
    assert_eq!(status_with(&site.secret_key, worker, "/admin/site").0, 401);
    let (status, body) = status_with(new_secret, worker, "/admin/site");
    assert_eq!(status, 200, "{body}");
    let view: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(view["site"]["config"]["public_key"], new_public);
    assert!(
        !body.contains(new_secret),
        "the secret is never shown again"
    );

    // The document routes the console uses: one document with its text, re-index one.
    let (status, body) = status_with(new_secret, worker, &format!("/admin/knowledge/{DOC_ID}"));
    assert_eq!(status, 200, "{body}");
    let document: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(document["document"]["content"], DOC_CONTENT);
    assert_eq!(
        status_with(new_secret, worker, "/admin/knowledge/no-such-doc").0,
        404
    );
    let reindex = |id: &str| {
        into_parts(
            agent()
                .post(&worker.url(&format!("/admin/index?id={id}")))
                .set("x-api-key", new_secret)
                .send_bytes(&[]),
        )
    };
    let (status, body) = reindex(DOC_ID);
    assert_eq!((status, body.as_str()), (202, r#"{"queued":1}"#));
    assert_eq!(reindex("no-such-doc").0, 404);
}

#[test]
fn a_merchant_uploads_a_csv_data_set_and_sees_its_inferred_columns() {
    let worker = Worker::shared();
    let site =
        worker.create_site(json!({"name": "Shop số liệu (console test)", "template": "analyst"}));
    let csv = "ngay,nen_tang,san_pham,so_luong,doanh_thu\n\
               05/01/2024,Shopee,Áo thun,300,60.000.000\n\
               15/1/2024,Lazada,Quần jean,350,50.000.000\n\
               2024-02-02,Tiki,Giày sneaker,200,57.750.000\n";
    run(
        "dataset",
        worker,
        &[
            ("SECRET_KEY", &site.secret_key),
            ("CSV_NAME", "don_hang"),
            ("CSV_USER", "alice"),
            ("CSV_BODY", csv),
            (
                "EXPECT_COLUMNS",
                "ngay:date,nen_tang:string,san_pham:string,so_luong:number,doanh_thu:number",
            ),
            // The Storage card: the 3 rows against the default cap of 1,000,000 rows,
            // grouped the English way, then the Vietnamese way.
            ("EXPECT_ROWS", "3"),
            ("EXPECT_ROW_CAP_EN", "1,000,000"),
            ("EXPECT_ROW_CAP_VI", "1.000.000"),
        ],
    );
    // The browser deleted it again.
    let (status, body) = status_with(&site.secret_key, worker, "/admin/data");
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("don_hang"), "{body}");
}
