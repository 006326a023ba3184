//! Issue 27 items 5 and 6 through the real Worker: `guarded`'s `guardrail_with_context`
//! setting (the guardrail sees the conversation's summary before a follow-up), and `/v1`'s
//! unknown model answered as OpenAI answers it.

use concierge_e2e::api::{create_conversation, send, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

use super::guarded::{guarded_site, put_pages};

/// The guardrail request's user message for the follow-up "Còn trẻ em thì sao?" after one
/// dental answer, on a guarded site whose settings add `extra`.
fn follow_up_seen(extra: Value) -> (String, Value) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    put_pages(worker, &site);
    let mut guarded = json!({"assistant_id": "dental-duckduckgo",
        "allowed_models": ["qwen2.5:3b-instruct"], "search": {"provider": "local"}});
    for (key, value) in extra.as_object().cloned().unwrap_or_default() {
        guarded[key] = value;
    }
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"guarded": guarded})),
    );
    assert_eq!(status, 200, "{body}");
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text(
        "Người lớn niềng răng thường mất 18 đến 24 tháng.",
    ));
    upstream.push(Reply::text("Khách hỏi thời gian niềng răng cho người lớn."));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Người lớn niềng răng mất bao lâu?",
    );
    assert_eq!(terminal(&events).0, "completed");
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text("Trẻ em thường niềng 12 đến 18 tháng."));
    upstream.push(Reply::text("Thêm trẻ em."));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Còn trẻ em thì sao?",
    );
    assert_eq!(terminal(&events).0, "completed");
    let requests = upstream.chat_requests();
    let guardrail = &requests[3].body["messages"];
    assert!(
        guardrail[0]["content"]
            .as_str()
            .is_some_and(|s| s.contains("YES hoặc NO")),
        "the follow-up's guardrail: {guardrail}"
    );
    let seen = guardrail[1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (seen, site_view(worker, &site))
}

fn site_view(worker: &Worker, site: &TestSite) -> Value {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("JSON")
}

#[test]
fn guardrail_with_context_lets_the_guardrail_see_the_summary_before_a_follow_up() {
    let (seen, view) = follow_up_seen(json!({}));
    assert_eq!(seen, "Còn trẻ em thì sao?", "off by default, as the seed");
    assert!(view.to_string().contains("\"guarded\""), "{view}");
    assert!(
        !view.to_string().contains("guardrail_with_context"),
        "{view}"
    );

    let (seen, view) = follow_up_seen(json!({"guardrail_with_context": true}));
    assert_eq!(
        seen,
        "Tóm tắt cuộc trò chuyện trước:\nKhách hỏi thời gian niềng răng cho người lớn.\n\n\
         Câu hỏi hiện tại: Còn trẻ em thì sao?"
    );
    assert!(
        view.to_string().contains("\"guardrail_with_context\":true"),
        "{view}"
    );
}

#[test]
fn an_unknown_model_is_openais_404_naming_it() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = guarded_site(worker, &upstream, json!({"provider": "local"}));
    let bearer = format!("Bearer {}", site.secret_key);
    let check = |status: u16, body: &str| {
        assert_eq!(status, 404, "{body}");
        let error: Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(
            error,
            json!({"error": {
                "message": "The model 'gpt-4' does not exist or you do not have access to it.",
                "type": "invalid_request_error", "param": null, "code": "model_not_found"}})
        );
    };
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/v1/chat/completions"))
            .set("authorization", &bearer)
            .send_json(
                json!({"model": "gpt-4", "messages": [{"role": "user", "content": "Chào"}]}),
            ),
    );
    check(status, &body);
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/v1/models/gpt-4"))
            .set("authorization", &bearer)
            .call(),
    );
    check(status, &body);
    assert!(upstream.chat_requests().is_empty(), "no model was called");
}
