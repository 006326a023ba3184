//! Issue 11 through the real Worker: templates are a type (an unbuilt template is refused,
//! never silently replaced), and visitor identity (signed user tokens, secret-key body
//! identities, conversations bound to the identity that created them).

use concierge_e2e::api::{
    create_conversation, error_code, send, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{OPERATOR_TOKEN, TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

fn admin_site(worker: &Worker, site: &TestSite) -> Value {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).expect("JSON")["site"].clone()
}

fn patch_site(worker: &Worker, site: &TestSite, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

fn message(body: &str) -> String {
    let value: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}"));
    value["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_unbuilt_template_is_refused_with_what_exists_and_the_site_keeps_running_shop() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Template shop", &upstream.base_url, false);
    let before = admin_site(worker, &site);
    assert_eq!(before["template"], "shop");

    // `analyst` stays unbuilt this session (the other templates are being built).
    {
        let name = "analyst";
        let (status, body) = patch_site(worker, &site, json!({"template": name}));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{body}"
        );
        let text = message(&body);
        assert!(
            text.contains(name) && text.contains("not built") && text.contains("shop"),
            "the message names the choice, that it is not built, and what exists: {text}"
        );
    }
    // `support` was never a template name (the product says `guarded`); unknown names too.
    for name in ["support", "nope", "Shop"] {
        let (status, body) = patch_site(worker, &site, json!({"template": name}));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{body}"
        );
        assert!(message(&body).contains("shop"), "{body}");
    }
    // Nothing changed: the site still names and runs `shop`.
    assert_eq!(admin_site(worker, &site), before);

    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/sites"))
            .set("authorization", &format!("Bearer {OPERATOR_TOKEN}"))
            .send_json(json!({"name": "Guarded", "template": "guarded"})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    assert!(message(&body).contains("guarded"), "{body}");

    let (status, body) = patch_site(worker, &site, json!({"template": "shop"}));
    assert_eq!(status, 200, "{body}");

    upstream.push(Reply::text("Dạ, bên em giao hàng toàn quốc ạ."));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Shop có giao hàng tận nơi không?",
    );
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    assert_eq!(streamed_text(&events), "Dạ, bên em giao hàng toàn quốc ạ.");
}

pub(crate) mod tokens;
mod widget;
