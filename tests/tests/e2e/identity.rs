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
fn an_unknown_template_is_refused_naming_every_template_and_the_site_keeps_running_shop() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Template shop", &upstream.base_url, false);
    let before = admin_site(worker, &site);
    assert_eq!(before["template"], "shop");

    // Every template is built now: unknown names are refused with the ones that exist.
    for name in ["support", "nope", "Shop", "Analyst", ""] {
        let (status, body) = patch_site(worker, &site, json!({"template": name}));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{body}"
        );
        let text = message(&body);
        for built in ["shop", "analyst", "rental", "knowledge", "guarded"] {
            assert!(
                text.contains(built),
                "{name}: the message names {built}: {text}"
            );
        }
    }
    // Nothing changed: the site still names and runs `shop`.
    assert_eq!(admin_site(worker, &site), before);

    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/sites"))
            .set("authorization", &format!("Bearer {OPERATOR_TOKEN}"))
            .send_json(json!({"name": "Support", "template": "support"})),
    );
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    assert!(message(&body).contains("analyst"), "{body}");

    // `analyst` can be chosen (and left again).
    let (status, body) = patch_site(worker, &site, json!({"template": "analyst"}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(admin_site(worker, &site)["template"], "analyst");

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
