//! Each template's settings in a site's body and config, as merchants see them: accepted
//! under the template's name, checked by the template, refused when unknown (at the top
//! level or inside a template's settings, or given twice), shown by `GET /admin/site`
//! without write-only secrets, and kept across an update of other fields.

use concierge_e2e::api::error_code;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// `PATCH /admin/site` with `body` (raw JSON text): status and body.
fn patch(worker: &Worker, site: &TestSite, body: &str) -> (u16, String) {
    into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .set("content-type", "application/json")
            .send_string(body),
    )
}

/// `GET /admin/site`'s `site`.
fn shown(worker: &Worker, site: &TestSite) -> Value {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).expect("JSON")["site"].clone()
}

/// A 400 `bad_request` whose message holds every one of `parts`.
fn refused(result: (u16, String), parts: &[&str]) {
    let (status, body) = result;
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    for part in parts {
        assert!(body.contains(part), "{part} not in {body}");
    }
}

#[test]
fn template_settings_are_checked_by_their_template_shown_without_secrets_and_kept() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({
        "name": "Settings", "template": "guarded",
        "analyst": {"max_rows": 10},
        "guarded": {"domain_en": "GARDENS", "search": {"provider": "brave", "api_key": "brave-key-123"}}
    }));
    let view = shown(worker, &site);
    assert_eq!(view["config"]["analyst"], json!({"max_rows": 10}), "{view}");
    assert_eq!(view["config"]["guarded"]["domain_en"], "GARDENS", "{view}");
    assert_eq!(
        view["config"]["guarded"]["search"]["provider"], "brave",
        "{view}"
    );
    assert_eq!(view["search_api_key_set"], true, "{view}");
    assert!(!view.to_string().contains("brave-key-123"), "{view}");
    assert!(
        view["config"]["guarded"]["search"]
            .get("api_key_sealed")
            .is_none(),
        "{view}"
    );

    // Unknown fields, at the top level (a template without settings included) and inside
    // a template's settings, and a field given twice.
    for (body, parts) in [
        (
            r#"{"nope": 1}"#,
            &["unknown field `nope`", "`rental`", "`handoff`"][..],
        ),
        (r#"{"shop": {}}"#, &["unknown field `shop`"][..]),
        (
            r#"{"rental": {"bogus": 1}}"#,
            &["unknown field `bogus`", "`row_cap`"][..],
        ),
        (
            r#"{"rental": null, "rental": {}}"#,
            &["duplicate field `rental`"][..],
        ),
        (
            r#"{"title": "a", "title": "b"}"#,
            &["duplicate field `title`"][..],
        ),
        (r#"{"analyst": {"max_rows": "ten"}}"#, &["invalid type"][..]),
    ] {
        refused(patch(worker, &site, body), parts);
    }
    // Each template's own checks.
    refused(
        patch(worker, &site, r#"{"rental": {"row_cap": 0}}"#),
        &["`rental.row_cap` must be 1 to 500."],
    );
    refused(
        patch(worker, &site, r#"{"analyst": {"max_rows": 0}}"#),
        &["`analyst.max_rows` must be 1 to 50000."],
    );
    refused(
        patch(
            worker,
            &site,
            r#"{"guarded": {"search": {"provider": "tavily"}}}"#,
        ),
        &["`guarded.search.api_key` is required for"],
    );
    // Nothing refused was stored.
    assert_eq!(shown(worker, &site), view);

    // Another field's update keeps every template's settings (and the sealed key).
    let (status, body) = patch(
        worker,
        &site,
        r#"{"title": "New title", "rental": {"row_cap": 7}}"#,
    );
    assert_eq!(status, 200, "{body}");
    let after = shown(worker, &site);
    assert_eq!(after["config"]["title"], "New title", "{after}");
    assert_eq!(after["config"]["rental"], json!({"row_cap": 7}), "{after}");
    assert_eq!(
        after["config"]["analyst"], view["config"]["analyst"],
        "{after}"
    );
    assert_eq!(
        after["config"]["guarded"], view["config"]["guarded"],
        "{after}"
    );
    assert_eq!(after["search_api_key_set"], true, "{after}");
    // `null` leaves a template's settings as they are; a template's settings are replaced whole.
    let (status, body) = patch(
        worker,
        &site,
        r#"{"rental": null, "analyst": {"formatter_llm": false}}"#,
    );
    assert_eq!(status, 200, "{body}");
    let last = shown(worker, &site);
    assert_eq!(last["config"]["rental"], json!({"row_cap": 7}), "{last}");
    assert_eq!(
        last["config"]["analyst"],
        json!({"formatter_llm": false}),
        "{last}"
    );
}
