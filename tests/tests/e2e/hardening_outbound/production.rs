//! The outbound rule without `DEV_MODE` (a second Worker with production vars): a
//! `csv_url`, like a site's LLM endpoint, must be https to a public host with no
//! credentials. The attack — importing from a loopback-only service and reading
//! it back — is refused before anything is fetched, whatever way the address is written.

use std::sync::OnceLock;

use concierge_e2e::api::error_code;
use concierge_e2e::upstream::{Page, ScriptedWeb};
use concierge_e2e::{OPERATOR_TOKEN, Worker, WorkerOptions, agent, into_parts};
use serde_json::json;

use super::{get_data, import, message};

fn production() -> &'static Worker {
    static PRODUCTION: OnceLock<Worker> = OnceLock::new();
    PRODUCTION.get_or_init(|| {
        Worker::start(&WorkerOptions {
            vars: vec![
                ("OPERATOR_TOKEN".into(), OPERATOR_TOKEN.into()),
                ("RETRIEVAL_BACKEND".into(), "local".into()),
            ],
            ..WorkerOptions::default()
        })
    })
}

#[test]
fn production_refuses_csv_urls_to_loopback_private_or_plain_http_and_fetches_nothing() {
    let worker = production();
    let internal = ScriptedWeb::start();
    internal.page(
        "/secret.csv",
        Page::Body("name,value\nadmin_password,hunter2\n".into()),
    );
    let port = internal.port;
    let site = worker.create_site(json!({"name": "Production import"}));
    let refused = [
        format!("http://127.0.0.1:{port}/secret.csv"),
        format!("https://127.0.0.1:{port}/secret.csv"),
        format!("https://localhost:{port}/secret.csv"),
        format!("https://app.localhost:{port}/secret.csv"),
        format!("https://localhost.:{port}/secret.csv"),
        format!("https://[::1]:{port}/secret.csv"),
        format!("https://[::ffff:127.0.0.1]:{port}/secret.csv"),
        format!("https://[::ffff:7f00:1]:{port}/secret.csv"),
        format!("https://2130706433:{port}/secret.csv"),
        format!("https://0x7f.1:{port}/secret.csv"),
        format!("https://0.0.0.0:{port}/secret.csv"),
        "https://10.0.0.8/data.csv".into(),
        "https://172.20.1.1/data.csv".into(),
        "https://192.168.1.10/data.csv".into(),
        "https://100.64.0.1/data.csv".into(),
        "https://169.254.169.254/latest/meta-data/".into(),
        "https://[fd00::1]/data.csv".into(),
        "https://[fe80::1]/data.csv".into(),
        "https://metadata.google.internal/computeMetadata/v1/".into(),
        "https://intranet/data.csv".into(),
        "http://data.merchant.example/data.csv".into(),
        "https://user:pass@data.merchant.example/data.csv".into(),
        "ftp://data.merchant.example/data.csv".into(),
        "file:///etc/passwd".into(),
    ];
    for url in &refused {
        let (status, body) = import(worker, &site, "x", url);
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{url} must be refused: {body}"
        );
        assert!(message(&body).contains("csv_url"), "{url}: {body}");
    }
    assert!(
        internal.requests().is_empty(),
        "the loopback service was called: {:?}",
        internal.requests()
    );
    let (status, body) = get_data(worker, &site, "x");
    assert_eq!(status, 404, "nothing was stored: {body}");
}

#[test]
fn production_site_llm_endpoints_follow_the_same_rule() {
    let worker = production();
    for base_url in [
        "https://127.0.0.1:11434/v1",
        "https://10.0.0.8/v1",
        "https://169.254.169.254/v1",
        "https://[::ffff:10.0.0.8]/v1",
        "https://llm.internal/v1",
    ] {
        let (status, body) = into_parts(
            agent()
                .post(&worker.url("/admin/sites"))
                .set("authorization", &format!("Bearer {OPERATOR_TOKEN}"))
                .send_json(json!({"name": "Private llm", "llm": {"base_url": base_url}})),
        );
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{base_url} must be refused: {body}"
        );
    }
    // A public https endpoint is still accepted.
    worker.create_site(
        json!({"name": "Public llm", "llm": {"base_url": "https://llm.merchant.example/v1"}}),
    );
}
