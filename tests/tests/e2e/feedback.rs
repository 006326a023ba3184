//! Feedback on answers: `POST /conversations/{id}/messages/{message_id}/feedback` under the
//! conversation routes' rules, one vote per message per voter (re-voting replaces it), the
//! caller's vote in history, and `GET /admin/feedback` for the merchant.

use concierge_e2e::api::{create_conversation, error_code, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

use crate::scripted_turns::stage;

const ORIGIN: &str = "https://shop.example";

/// A call with the site's public key from its allowed origin.
fn public(request: ureq::Request, site: &TestSite) -> ureq::Request {
    request
        .set("x-api-key", &site.public_key)
        .set("origin", ORIGIN)
}

fn vote(worker: &Worker, request: ureq::Request, body: Value) -> (u16, Value) {
    let _ = worker;
    let (status, text) = into_parts(request.send_json(body));
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn feedback_url(worker: &Worker, conversation: &str, message: &str) -> String {
    worker.url(&format!(
        "/conversations/{conversation}/messages/{message}/feedback"
    ))
}

/// An anonymous visitor's conversation with one scripted answer: (id, answer id, visitor
/// message id).
pub(crate) fn answered(worker: &Worker, site: &TestSite) -> (String, String, String) {
    let (status, text) =
        into_parts(public(agent().post(&worker.url("/conversations")), site).send_json(json!({})));
    assert_eq!(status, 201, "{text}");
    let conversation = serde_json::from_str::<Value>(&text).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    let script = json!({"steps": [{"type": "chunk", "text": "Dạ, cửa hàng mở cửa đến 21 giờ."}]});
    assert_eq!(
        stage(worker, &site.secret_key, &conversation, &script).0,
        204
    );
    let response = public(
        agent().post(&worker.url(&format!("/conversations/{conversation}/messages"))),
        site,
    )
    .send_json(json!({"content": "Mấy giờ đóng cửa?"}))
    .expect("turn");
    let events = read_events(response.into_reader());
    let started: Value = serde_json::from_str(&events[0].data).expect("started");
    let completed: Value =
        serde_json::from_str(&events.last().expect("completed").data).expect("JSON");
    let answer = completed["message_id"]
        .as_str()
        .expect("message id")
        .to_string();
    assert_eq!(started["message_id"], answer.as_str());
    let history = history(
        worker,
        public(
            agent().get(&worker.url(&format!("/conversations/{conversation}/history"))),
            site,
        ),
    );
    let user = history
        .iter()
        .find(|m| m["role"] == "user")
        .expect("visitor message")["id"]
        .as_str()
        .expect("id")
        .to_string();
    (conversation, answer, user)
}

fn history(_worker: &Worker, request: ureq::Request) -> Vec<Value> {
    let (status, text) = into_parts(request.call());
    assert_eq!(status, 200, "{text}");
    serde_json::from_str::<Value>(&text).expect("JSON")["messages"]
        .as_array()
        .expect("messages")
        .clone()
}

#[test]
fn a_visitor_votes_once_per_answer_and_sees_the_vote_in_history_and_the_merchant_reads_it() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Feedback", &upstream.base_url, false);
    let (conversation, answer, _) = answered(worker, &site);
    let url = feedback_url(worker, &conversation, &answer);

    let (status, body) = vote(
        worker,
        public(agent().post(&url), &site),
        json!({"rating": "up"}),
    );
    assert_eq!(
        (status, body),
        (200, json!({"feedback": {"rating": "up", "comment": null}}))
    );
    // Voting again replaces the vote.
    let (status, body) = vote(
        worker,
        public(agent().post(&url), &site),
        json!({"rating": "down", "comment": "  Sai giờ rồi  "}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["feedback"],
        json!({"rating": "down", "comment": "Sai giờ rồi"})
    );
    let rows = worker.site_rows(
        &site,
        &format!(
            "SELECT rating, comment, voter FROM message_feedback WHERE message_id = '{answer}'"
        ),
    );
    assert_eq!(
        rows,
        [json!({"rating": -1, "comment": "Sai giờ rồi", "voter": "anonymous"})]
    );

    // History shows the caller's own vote; the site's server has not voted.
    let path = format!("/conversations/{conversation}/history");
    let mine = history(worker, public(agent().get(&worker.url(&path)), &site));
    let reply = mine
        .iter()
        .find(|m| m["id"] == answer.as_str())
        .expect("answer");
    assert_eq!(
        reply["feedback"],
        json!({"rating": "down", "comment": "Sai giờ rồi"})
    );
    assert!(
        mine.iter()
            .filter(|m| m["id"] != answer.as_str())
            .all(|m| m.get("feedback").is_none())
    );
    let site_view = history(
        worker,
        agent()
            .get(&worker.url(&path))
            .set("x-api-key", &site.secret_key),
    );
    assert!(site_view.iter().all(|m| m.get("feedback").is_none()));

    // The merchant reads it with the secret key, with the answer voted on.
    let (status, text) = into_parts(
        agent()
            .get(&worker.url("/admin/feedback"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{text}");
    let listed: Value = serde_json::from_str(&text).expect("JSON");
    let listed = listed["feedback"].as_array().expect("feedback");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["message_id"], answer.as_str());
    assert_eq!(listed[0]["conversation_id"], conversation.as_str());
    assert_eq!(listed[0]["rating"], "down");
    assert_eq!(listed[0]["voter"], "anonymous");
    assert_eq!(listed[0]["answer"], "Dạ, cửa hàng mở cửa đến 21 giờ.");
    // Not with the public key, and not another site's.
    let (status, _) = into_parts(public(agent().get(&worker.url("/admin/feedback")), &site).call());
    assert!(matches!(status, 401 | 403), "{status}");
    let other = site_with_upstream(worker, "Other shop", &upstream.base_url, false);
    let (_, text) = into_parts(
        agent()
            .get(&worker.url("/admin/feedback"))
            .set("x-api-key", &other.secret_key)
            .call(),
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("JSON")["feedback"],
        json!([])
    );
}

#[test]
fn feedback_follows_the_conversation_rules_and_is_validated() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Feedback rules", &upstream.base_url, false);
    let other = site_with_upstream(worker, "Feedback other", &upstream.base_url, false);
    let (conversation, answer, user) = answered(worker, &site);
    let up = json!({"rating": "up"});

    let cases: Vec<(ureq::Request, Value, u16, &str)> = vec![
        // Only answers of this conversation.
        (
            public(
                agent().post(&feedback_url(worker, &conversation, &user)),
                &site,
            ),
            up.clone(),
            404,
            "not_found",
        ),
        (
            public(
                agent().post(&feedback_url(worker, &conversation, "m_nope")),
                &site,
            ),
            up.clone(),
            404,
            "not_found",
        ),
        // Another site's key does not reach the conversation.
        (
            agent()
                .post(&feedback_url(worker, &conversation, &answer))
                .set("x-api-key", &other.secret_key),
            up.clone(),
            404,
            "not_found",
        ),
        (
            public(
                agent().post(&feedback_url(worker, &conversation, &answer)),
                &site,
            ),
            json!({"rating": "meh"}),
            400,
            "bad_request",
        ),
        (
            public(
                agent().post(&feedback_url(worker, &conversation, &answer)),
                &site,
            ),
            json!({"rating": "down", "comment": "x".repeat(1001)}),
            400,
            "bad_request",
        ),
        (
            agent().post(&feedback_url(worker, &conversation, &answer)),
            up.clone(),
            401,
            "unauthorized",
        ),
    ];
    for (request, body, status, code) in cases {
        let (got, text) = into_parts(request.send_json(body.clone()));
        assert_eq!(
            (got, error_code(&text).as_str()),
            (status, code),
            "{body}: {text}"
        );
    }
    // An identified conversation: an anonymous visitor cannot vote on it.
    let (identified, greeting) = create_conversation(worker, &site, json!({"user_id": "alice"}));
    let greeting = greeting["id"].as_str().expect("greeting id");
    let (status, text) = into_parts(
        public(
            agent().post(&feedback_url(worker, &identified, greeting)),
            &site,
        )
        .send_json(up.clone()),
    );
    assert_eq!((status, error_code(&text).as_str()), (404, "not_found"));
    let rows = worker.site_rows(&site, &format!(
        "SELECT COUNT(*) AS n FROM message_feedback WHERE conversation_id IN ('{conversation}', '{identified}')"
    ));
    assert_eq!(rows, [json!({"n": 0})], "nothing stored");
}
