//! Issue 48 through the real Worker (`shop`, scripted upstream): a shop whose knowledge
//! documents describe cosmetics has questions about its products classified `shopping`
//! once the documents are indexed — the catalog vocabulary learned at indexing, stored with
//! the site and fed to the classifier at turn time, with no code change. A rule-classified
//! turn makes no classification call; what the rules leave uncertain is asked of the model
//! once (a constrained call the scripted upstream answers deterministically).

use std::time::Duration;

use concierge_e2e::api::{create_conversation, eventually, send, site_with_upstream, terminal};
use concierge_e2e::upstream::{Reply, SHOP_INTENT_MARKER, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// The cosmetics shop's knowledge documents: (id, title, content).
const DOCUMENTS: [(&str, &str, &str); 2] = [
    (
        "chong-nang",
        "Chống nắng",
        "Kem chống nắng La Roche-Posay Anthelios UVMune 400 50ml: 495.000đ. \
         Kem chống nắng Anessa Perfect UV Milk 60ml: 545.000đ.",
    ),
    (
        "cham-soc-da",
        "Chăm sóc da",
        "Nước tẩy trang Bioderma Sensibio H2O 500ml: 395.000đ, cho da nhạy cảm. \
         Serum Melano CC 20ml: 265.000đ.",
    ),
];

/// One first question in a new conversation: the completed event's data.
fn first_question(worker: &Worker, site: &TestSite, text: &str) -> Value {
    let (conversation, _) = create_conversation(worker, site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, text);
    assert_eq!(status, 200, "{text}");
    let (name, data) = terminal(&events);
    assert_eq!(name, "completed", "{text}: {data}");
    data
}

/// The classification calls the upstream received so far.
fn intent_calls(upstream: &ScriptedUpstream) -> Vec<Value> {
    upstream
        .chat_requests()
        .into_iter()
        .filter(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.starts_with(SHOP_INTENT_MARKER))
        })
        .map(|r| r.body)
        .collect()
}

#[test]
fn shop_with_a_cosmetics_catalog_classifies_its_product_questions_as_shopping() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, sản phẩm này bên em đang có ạ."));
    let site = site_with_upstream(worker, "Cosmetics shop", &upstream.base_url, false);

    // Before the catalog is known, a product name alone means nothing to the rules: the
    // model is asked once (answered `unknown` here) and the clarifying question stands.
    let before = first_question(worker, &site, "Có Anthelios UVMune không?");
    assert_eq!(
        (before["kind"].as_str(), before["intent"].as_str()),
        (Some("clarify"), Some("unknown")),
        "{before}"
    );
    let calls = intent_calls(&upstream);
    assert_eq!(calls.len(), 1, "one classification call");
    assert_eq!(
        calls[0]["messages"][1]["content"],
        "Có Anthelios UVMune không?"
    );
    assert_eq!(calls[0]["temperature"], 0.0);

    for (id, title, content) in DOCUMENTS {
        let (status, body) = into_parts(
            agent()
                .put(&worker.url(&format!("/admin/knowledge/{id}")))
                .set("x-api-key", &site.secret_key)
                .send_json(json!({"title": title, "content": content})),
        );
        assert_eq!(status, 201, "{body}");
    }
    // Indexed, and the site's catalog rewritten: the same question is now a shopping
    // question by the rules alone.
    let calls_before = intent_calls(&upstream).len();
    let data = eventually(Duration::from_secs(60), "the catalog to be learned", || {
        let data = first_question(worker, &site, "Có Anthelios UVMune không?");
        (data["intent"] == "shopping").then_some(data)
    });
    assert_eq!(data["kind"], "answer", "{data}");
    let answered_by_rules = intent_calls(&upstream).len();
    for text in [
        "Bioderma Sensibio còn không shop?",
        "co melano cc khong",
        "Do you have Anthelios?",
        "Sensibio loại nào dịu cho da nhạy cảm?",
    ] {
        let data = first_question(worker, &site, text);
        assert_eq!(
            (data["kind"].as_str(), data["intent"].as_str()),
            (Some("answer"), Some("shopping")),
            "{text}: {data}"
        );
    }
    assert_eq!(
        intent_calls(&upstream).len(),
        answered_by_rules,
        "a rule-classified turn makes no classification call"
    );
    assert!(answered_by_rules >= calls_before);

    // What the rules leave uncertain is the model's, within the turn: routed `shopping`.
    upstream.push_for(SHOP_INTENT_MARKER, Reply::text("shopping"));
    let data = first_question(worker, &site, "Người lớn tuổi dùng được không?");
    assert_eq!(
        (data["kind"].as_str(), data["intent"].as_str()),
        (Some("answer"), Some("shopping")),
        "{data}"
    );
    assert_eq!(intent_calls(&upstream).len(), answered_by_rules + 1);

    // Greetings and "alo" still get the seed's clarifying question, without any call.
    let calls = intent_calls(&upstream).len();
    for text in ["alo", "xin chào shop"] {
        let data = first_question(worker, &site, text);
        assert_eq!(data["kind"], "clarify", "{text}: {data}");
    }
    assert_eq!(intent_calls(&upstream).len(), calls);
}
