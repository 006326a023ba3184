//! The console's test tools in headless Chromium (issue 42, `tests/browser/console_tests.mjs`):
//! a test case made from a real conversation in one click (its checks proposed, edited,
//! saved); a run against the draft with its progress and each case's result; Publish on a site with test cases runs them against the draft and live with
//! progress, names the cases that regress in a dialog, publishes when confirmed and lists
//! the version as published over them; axe-core finds nothing critical or serious; in
//! English and in Vietnamese.

use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

const BREAK: &str = "BREAK-CASES:";

fn call(worker: &Worker, method: &str, path: &str, key: &str, body: Value) -> u16 {
    let (status, text) = into_parts(
        agent()
            .request(method, &worker.url(path))
            .set("x-api-key", key)
            .send_json(body),
    );
    assert!(status < 300, "{method} {path}: {status} {text}");
    status
}

/// A site with 4 cases that pass live, and a draft that breaks cases 2 and 4.
fn gated_site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> String {
    let site = concierge_e2e::api::site_with_upstream(worker, name, &upstream.base_url, false);
    let key = site.secret_key;
    call(
        worker,
        "PATCH",
        "/admin/site",
        &key,
        json!({"persona": "Bạn là trợ lý."}),
    );
    for n in 1..=4 {
        call(
            worker,
            "POST",
            "/admin/tests",
            &key,
            json!({"name": format!("Giao hàng {n}"),
                   "question": format!("Xin chào, shop có giao hàng CASE-0{n} không?"),
                   "checks": {"contains": [format!("CODE-0{n}")]}}),
        );
    }
    call(
        worker,
        "PATCH",
        "/admin/site/draft",
        &key,
        json!({"persona": format!("Bạn là trợ lý. {BREAK} 02 04")}),
    );
    key
}

#[test]
fn a_run_shows_its_progress_and_the_publish_dialog_names_the_regressions() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_responder(|body| {
        let messages = body["messages"].as_array()?;
        let system = messages.first()?["content"].as_str().unwrap_or("");
        let question = messages.iter().rev().find(|m| m["role"] == "user")?;
        let question = question["content"].as_str()?;
        let at = question.find("CASE-")?;
        let n = question.get(at + 5..at + 7)?;
        let broken = system
            .split(BREAK)
            .nth(1)
            .is_some_and(|list| list.split_whitespace().take(2).any(|b| b == n));
        Some(Reply::text(&if broken {
            "Dạ, em chưa rõ ạ.".to_string()
        } else {
            format!("Dạ, mã của anh là CODE-{n} ạ.")
        }))
    });
    for locale in ["en-US", "vi-VN"] {
        let key = gated_site(worker, &upstream, &format!("Gate {locale}"));
        for scenario in ["run_tests", "publish_gate"] {
            let out = crate::browser_console::run_script(
                "console_tests",
                scenario,
                worker,
                &[
                    ("SECRET_KEY", key.as_str()),
                    ("LOCALE", locale),
                    ("REGRESSED", "Giao hàng 2|Giao hàng 4"),
                    ("PASSED_DRAFT", "2"),
                    ("TOTAL", "4"),
                ],
            );
            assert!(out.contains(&format!("ok {scenario}")), "{locale}: {out}");
        }
    }
}

#[test]
fn a_test_case_is_made_from_a_conversation_in_one_click_edited_and_saved() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, đơn CASE-07 giao trong 3 ngày ạ."));
    for locale in ["en-US", "vi-VN"] {
        let site = concierge_e2e::api::site_with_upstream(
            worker,
            &format!("From {locale}"),
            &upstream.base_url,
            false,
        );
        let (id, _) = concierge_e2e::api::create_conversation(worker, &site, json!({}));
        let question = "Shop giao hàng đơn CASE-07 mất mấy ngày?";
        call(
            worker,
            "POST",
            &format!("/conversations/{id}/messages"),
            &site.secret_key,
            json!({"content": question}),
        );
        let out = crate::browser_console::run_script(
            "console_tests",
            "from_conversation",
            worker,
            &[
                ("SECRET_KEY", site.secret_key.as_str()),
                ("LOCALE", locale),
                ("QUESTION", question),
                ("CONTAINS", "CASE-07|3"),
            ],
        );
        assert!(out.contains("ok from_conversation"), "{locale}: {out}");
        // Saved as edited.
        let (status, text) = into_parts(
            agent()
                .get(&worker.url("/admin/tests"))
                .set("x-api-key", &site.secret_key)
                .call(),
        );
        assert_eq!(status, 200, "{text}");
        let list: Value = serde_json::from_str(&text).expect("JSON");
        let case = &list["cases"][0];
        assert_eq!(case["question"], question, "{case}");
        assert_eq!(
            case["checks"]["contains"],
            json!(["CASE-07", "3"]),
            "{case}"
        );
        assert_eq!(case["checks"]["not_contains"], json!(["xin lỗi"]), "{case}");
    }
}
