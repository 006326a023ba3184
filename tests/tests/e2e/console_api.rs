//! The console's admin routes through the real Worker (issue 26, items 10, 11, 13, 15):
//! the conversation list's filter and export (only conversations with a visitor message,
//! only the caller's site, wildcards taken literally, spreadsheet formulas neutralised),
//! one conversation with its payloads, the dashboard's figures, Try it's short-lived user
//! tokens, and a knowledge settings change served fresh instead of from the answer cache.
//! Bad input is a 400 with a JSON error naming the parameter; the public key is refused.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use concierge_e2e::api::{error_code, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::browser_console_ux::{conversation, scripted, unanswered, vote_down};
use crate::knowledge::{FINAL, RAG, ROUTER, ask, knowledge_site, one_task_plan, put_document};

fn get(worker: &Worker, key: &str, path: &str) -> (u16, String) {
    into_parts(agent().get(&worker.url(path)).set("x-api-key", key).call())
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}"))
}

/// The ids `GET /admin/conversations?{query}` lists.
fn listed(worker: &Worker, site: &TestSite, query: &str) -> Vec<String> {
    let (status, body) = get(
        worker,
        &site.secret_key,
        &format!("/admin/conversations?{query}"),
    );
    assert_eq!(status, 200, "{query}: {body}");
    json_of(&body)["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn chunk(text: &str) -> Value {
    json!([{"type": "chunk", "text": text}])
}

fn failing_site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> TestSite {
    upstream.set_default(Reply::Status(500));
    site_with_upstream(worker, name, &upstream.base_url, false)
}

#[test]
fn the_conversation_list_and_export_take_only_asked_conversations_of_the_site_filtered() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = failing_site(worker, &upstream, "Console filters");
    let other = failing_site(worker, &upstream, "Console filters, other site");
    let (refund, _) = scripted(
        worker,
        &site,
        "Hoàn tiền 100% trong bao lâu?",
        chunk("Dạ, 7 ngày ạ."),
    );
    let (voted, answer) = scripted(worker, &site, "Bảo hành bao lâu?", chunk("Dạ, 24 tháng."));
    vote_down(worker, &site, &voted, &answer);
    let (formula, _) = scripted(worker, &site, "=1+1 là bao nhiêu?", chunk("Dạ, 2."));
    // A delivery question goes to the model, which fails: no answer (a question the shop
    // does not understand would get a clarifying answer instead).
    let silent = unanswered(worker, &site, "Có giao hàng không?");
    let greeting_only = conversation(worker, &site);
    let (foreign, _) = scripted(
        worker,
        &other,
        "Hoàn tiền 100% trong bao lâu?",
        chunk("Khác."),
    );

    // Only conversations with a visitor message, only this site's.
    let all = listed(worker, &site, "");
    for id in [&refund, &voted, &formula, &silent] {
        assert!(all.contains(id), "{id} listed: {all:?}");
    }
    assert!(!all.contains(&greeting_only), "nothing asked: not listed");
    assert!(!all.contains(&foreign), "another site's: never listed");

    // Search (wildcards are literal), votes, no answer, dates.
    assert_eq!(
        listed(worker, &site, "q=ho%C3%A0n%20ti%E1%BB%81n"),
        [refund.as_str()]
    );
    assert_eq!(listed(worker, &site, "q=100%25"), [refund.as_str()]);
    assert_eq!(
        listed(worker, &site, "q=%25"),
        [refund.as_str()],
        "`%` is literal"
    );
    assert!(listed(worker, &site, "q=_").is_empty(), "`_` is literal");
    assert_eq!(listed(worker, &site, "votes=down"), [voted.as_str()]);
    assert!(listed(worker, &site, "votes=up").is_empty());
    assert_eq!(listed(worker, &site, "unanswered=1"), [silent.as_str()]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(listed(worker, &site, &format!("from={}", now + 3_600_000)).is_empty());
    assert!(listed(worker, &site, &format!("to={}", now - 3_600_000)).is_empty());
    assert_eq!(
        listed(
            worker,
            &site,
            &format!("from={}&to={}&votes=down", now - 3_600_000, now + 60_000)
        ),
        [voted.as_str()]
    );

    // Bad input: 400 with a JSON error naming the parameter.
    for (query, names) in [
        ("votes=sideways", "`votes`"),
        ("unanswered=maybe", "`unanswered`"),
        ("from=yesterday", "`from`"),
        ("to=-5", "`to`"),
        ("limit=0", "`limit`"),
    ] {
        let (status, body) = get(
            worker,
            &site.secret_key,
            &format!("/admin/conversations?{query}"),
        );
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(error_code(&body), "bad_request");
        assert!(
            json_of(&body)["error"]["message"]
                .as_str()
                .unwrap()
                .contains(names),
            "{body}"
        );
    }
    let long = "a".repeat(201);
    assert_eq!(
        get(
            worker,
            &site.secret_key,
            &format!("/admin/conversations?q={long}")
        )
        .0,
        400
    );
    // The public key reaches none of it.
    for path in [
        "/admin/conversations",
        "/admin/conversations/export",
        "/admin/stats",
    ] {
        assert_eq!(get(worker, &site.public_key, path).0, 403, "{path}");
        assert_eq!(get(worker, "", path).0, 401, "{path}");
    }

    // Export: CSV (quoted, formulas neutralised) and JSON, with the same filter.
    let response = agent()
        .get(&worker.url("/admin/conversations/export?format=csv"))
        .set("x-api-key", &site.secret_key)
        .call()
        .unwrap();
    assert!(response.content_type().starts_with("text/csv"));
    assert!(
        response
            .header("content-disposition")
            .unwrap_or_default()
            .contains("conversations.csv")
    );
    let csv = response.into_string().unwrap();
    assert!(
        csv.starts_with("\u{feff}\"conversation_id\",\"user_id\",\"seq\",\"role\""),
        "{csv}"
    );
    assert!(csv.contains("\"Hoàn tiền 100% trong bao lâu?\""), "{csv}");
    assert!(
        csv.contains("\"'=1+1 là bao nhiêu?\""),
        "a formula is neutralised: {csv}"
    );
    assert!(csv.contains("\"Thiếu giá\""), "the vote's comment: {csv}");
    assert!(
        !csv.contains(&greeting_only) && !csv.contains(&foreign),
        "{csv}"
    );
    let (status, body) = get(
        worker,
        &site.secret_key,
        "/admin/conversations/export?format=json&votes=down",
    );
    assert_eq!(status, 200, "{body}");
    let messages = json_of(&body)["messages"].as_array().unwrap().clone();
    assert!(!messages.is_empty());
    assert!(
        messages
            .iter()
            .all(|m| m["conversation_id"] == voted.as_str()),
        "{body}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "assistant" && m["down_votes"] == 1.0)
    );
    let (status, body) = get(
        worker,
        &site.secret_key,
        "/admin/conversations/export?format=xml",
    );
    assert_eq!((status, error_code(&body).as_str()), (400, "bad_request"));

    // One conversation, for the review: its payloads; another site's is not found.
    let (status, body) = get(
        worker,
        &site.secret_key,
        &format!("/admin/conversations/{refund}"),
    );
    assert_eq!(status, 200, "{body}");
    let view = json_of(&body);
    assert_eq!(
        view["messages"][1]["content"],
        "Hoàn tiền 100% trong bao lâu?"
    );
    assert_eq!(
        get(
            worker,
            &site.secret_key,
            &format!("/admin/conversations/{foreign}")
        )
        .0,
        404
    );
    assert_eq!(
        get(worker, &site.secret_key, "/admin/conversations/no-such-id").0,
        404
    );
}

/// `PATCH /admin/site` with `body`; must succeed.
fn patch_site(worker: &Worker, site: &TestSite, body: Value) {
    let (status, text) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    );
    assert_eq!(status, 200, "{text}");
}

/// The `conversation_id`s of `GET /admin/conversations/export?format=json&{query}`.
fn exported(worker: &Worker, site: &TestSite, query: &str) -> Vec<String> {
    let (status, body) = get(
        worker,
        &site.secret_key,
        &format!("/admin/conversations/export?format=json&{query}"),
    );
    assert_eq!(status, 200, "{query}: {body}");
    let mut ids: Vec<String> = json_of(&body)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["conversation_id"].as_str().unwrap().to_string())
        .collect();
    ids.dedup();
    ids
}

#[test]
fn conversations_are_filtered_by_the_template_that_answered_them() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = failing_site(worker, &upstream, "Console template filter");
    let (shop, _) = scripted(worker, &site, "Có PC gaming không?", chunk("Dạ có."));
    let (legacy, _) = scripted(worker, &site, "Mấy giờ mở cửa?", chunk("Dạ, 8 giờ."));
    // The site changes template: conversations started before keep the old one.
    patch_site(worker, &site, json!({"template": "analyst"}));
    let analyst = conversation(worker, &site);
    let _ = concierge_e2e::api::send(worker, &site.secret_key, &analyst, "Doanh thu tháng này?");
    // A conversation stored before templates were recorded (no template).
    worker.site_rows(
        &site,
        &format!("UPDATE conversations SET template = NULL WHERE id = '{legacy}'"),
    );

    let all = listed(worker, &site, "");
    for id in [&shop, &legacy, &analyst] {
        assert!(all.contains(id), "{id} listed without a filter: {all:?}");
    }
    assert_eq!(listed(worker, &site, "template=shop"), [shop.as_str()]);
    assert_eq!(
        listed(worker, &site, "template=analyst"),
        [analyst.as_str()]
    );
    assert!(listed(worker, &site, "template=guarded").is_empty());
    assert_eq!(listed(worker, &site, "template=unknown"), [legacy.as_str()]);
    assert_eq!(
        listed(worker, &site, "template=shop&q=gaming"),
        [shop.as_str()]
    );
    assert!(listed(worker, &site, "template=analyst&q=gaming").is_empty());
    // The list says which template answered each conversation.
    let (_, body) = get(worker, &site.secret_key, "/admin/conversations");
    for c in json_of(&body)["conversations"].as_array().unwrap() {
        let want = if c["id"] == shop.as_str() {
            json!("shop")
        } else if c["id"] == analyst.as_str() {
            json!("analyst")
        } else {
            Value::Null
        };
        assert_eq!(c["template"], want, "{c}");
    }
    // The export takes the same filter.
    assert_eq!(exported(worker, &site, "template=shop"), [shop.as_str()]);
    assert_eq!(
        exported(worker, &site, "template=unknown"),
        [legacy.as_str()]
    );
    // Not a template: 400 naming the parameter, on the list and the export.
    for path in [
        "/admin/conversations?template=support",
        "/admin/conversations/export?template=SHOP",
        "/admin/conversations?template=shop%27--",
    ] {
        let (status, body) = get(worker, &site.secret_key, path);
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(error_code(&body), "bad_request");
        assert!(
            json_of(&body)["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`template`"),
            "{body}"
        );
    }
}

#[test]
fn stats_count_one_sites_days_answers_votes_and_top_questions() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = failing_site(worker, &upstream, "Console stats");
    let other = failing_site(worker, &upstream, "Console stats, other site");
    let top = "Giờ mở cửa?";
    scripted(worker, &site, top, chunk("8 giờ."));
    let (id, answer) = scripted(worker, &site, "  giờ mở cửa? ", chunk("8 giờ ạ."));
    vote_down(worker, &site, &id, &answer);
    unanswered(worker, &site, "Có giao hàng không?");
    conversation(worker, &site);
    for _ in 0..3 {
        scripted(worker, &other, "Câu hỏi của trang khác", chunk("Khác."));
    }

    let (status, body) = get(worker, &site.secret_key, "/admin/stats?days=7&tz=420");
    assert_eq!(status, 200, "{body}");
    let stats = json_of(&body);
    let per_day = stats["per_day"].as_array().unwrap();
    let sum = |field: &str| {
        per_day
            .iter()
            .map(|d| d[field].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(sum("conversations"), 3.0, "{body}");
    assert_eq!(sum("messages"), 3.0, "{body}");
    assert_eq!(stats["answered"], 2.0, "{body}");
    assert_eq!(stats["unanswered"], 1.0, "{body}");
    assert_eq!(stats["down_votes"], 1.0, "{body}");
    assert_eq!(stats["up_votes"], 0.0, "{body}");
    assert_eq!(stats["top_questions"][0]["count"], 2.0, "{body}");
    assert!(
        stats["top_questions"][0]["question"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case(top),
        "{body}"
    );
    assert!(
        !body.contains("Câu hỏi của trang khác"),
        "another site's questions: {body}"
    );

    for (query, names) in [
        ("days=0", "`days`"),
        ("days=91", "`days`"),
        ("tz=9999", "`tz`"),
    ] {
        let (status, body) = get(worker, &site.secret_key, &format!("/admin/stats?{query}"));
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.contains(names), "{body}");
    }
}

/// The claims of a user token, after checking its signature under `secret`.
fn verified_claims(token: &str, secret: &str) -> Value {
    let (payload, signature) = token.split_once('.').expect("two parts");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(payload.as_bytes());
    mac.verify_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap())
        .expect("signed with the site's user-token secret");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

#[test]
fn try_tokens_are_short_lived_signed_for_the_chosen_user_and_never_show_the_secret() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Console try tokens", "template": "analyst",
        "allowed_origins": ["https://shop.example"]}));
    let mint = |key: &str, body: Value| {
        into_parts(
            agent()
                .post(&worker.url("/admin/try-token"))
                .set("x-api-key", key)
                .send_json(body),
        )
    };
    // No user-token secret yet: a clear conflict, not a token.
    let (status, body) = mint(&site.secret_key, json!({"user_id": "shop-owner"}));
    assert_eq!(
        (status, error_code(&body).as_str()),
        (409, "conflict"),
        "{body}"
    );
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/user-token-secret"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 201, "{body}");
    let secret = json_of(&body)["user_token_secret"]
        .as_str()
        .unwrap()
        .to_string();

    let (status, body) = mint(
        &site.secret_key,
        json!({"user_id": "shop-owner", "role": "OWNER", "permissions": ["internal"]}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        !body.contains(&secret),
        "the secret never leaves the Worker"
    );
    let answer = json_of(&body);
    let token = answer["user_token"].as_str().unwrap();
    let claims = verified_claims(token, &secret);
    assert_eq!(claims["sub"], "shop-owner");
    assert_eq!(claims["role"], "OWNER");
    assert_eq!(claims["permissions"], json!(["internal"]));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let exp = claims["exp"].as_u64().unwrap();
    assert!(
        exp > now && exp <= now + 15 * 60 + 5,
        "short-lived: {exp} vs {now}"
    );

    // The panel's credentials (public key, origin, token) speak for that user.
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.public_key)
            .set("origin", "https://shop.example")
            .set("x-user-token", token)
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}");
    let id = json_of(&body)["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, body) = get(
        worker,
        &site.secret_key,
        &format!("/admin/conversations/{id}"),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["user_id"], "shop-owner");

    // Bad input, and the public key.
    for body in [
        json!({"user_id": ""}),
        json!({"user_id": "x".repeat(129)}),
        json!({"user_id": "u", "permissions": vec!["p"; 33]}),
        json!({"user_id": "u", "secret": "give it"}),
        json!({}),
    ] {
        let (status, text) = mint(&site.secret_key, body.clone());
        assert_eq!(
            (status, error_code(&text).as_str()),
            (400, "bad_request"),
            "{body}: {text}"
        );
    }
    assert_eq!(mint(&site.public_key, json!({"user_id": "u"})).0, 403);
}

#[test]
fn a_knowledge_settings_change_is_answered_afresh_not_from_the_cache() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream, json!({}));
    put_document(
        worker,
        &site,
        "leave",
        "Nghỉ phép năm: 12 ngày mỗi năm, báo trước 3 ngày.",
        "public",
        "hr",
        "2026-01-01T00:00:00Z",
    );
    crate::knowledge::wait_indexed(worker, &site, 1);
    let question = "nghỉ phép năm được mấy ngày";
    let plan = one_task_plan("hr", "rag_tool", question);
    upstream.push_for(ROUTER, Reply::text(&plan));
    upstream.push_for(RAG, Reply::text("12 ngày."));
    upstream.push_for(FINAL, Reply::text("Câu trả lời theo cài đặt cũ."));
    let (_, events) = ask(worker, &site, None, question);
    assert_eq!(
        crate::knowledge::streamed(&events),
        "Câu trả lời theo cài đặt cũ."
    );
    // Asked again: the cache answers, without the model.
    let before = upstream.chat_requests().len();
    let (_, events) = ask(worker, &site, None, question);
    assert_eq!(
        crate::knowledge::streamed(&events),
        "Câu trả lời theo cài đặt cũ."
    );
    assert_eq!(
        upstream.chat_requests().len(),
        before,
        "served from the cache"
    );

    // The merchant changes a knowledge setting: the next answer is computed under it.
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"knowledge": {"workflow": {"min_relevance_score": 0.0, "max_follow_up_questions": 1}}})),
    );
    assert_eq!(status, 200, "{body}");
    upstream.push_for(ROUTER, Reply::text(&plan));
    upstream.push_for(RAG, Reply::text("12 ngày, theo cài đặt mới."));
    upstream.push_for(FINAL, Reply::text("Câu trả lời theo cài đặt mới."));
    let before = upstream.chat_requests().len();
    std::thread::sleep(Duration::from_millis(50));
    let (_, events) = ask(worker, &site, None, question);
    assert!(
        upstream.chat_requests().len() > before,
        "the model was asked again after the settings change"
    );
    assert_eq!(
        crate::knowledge::streamed(&events),
        "Câu trả lời theo cài đặt mới.",
        "not the answer cached under the old settings"
    );
}

/// Issue 47's item 6: an export larger than one request could once hold (it stopped at
/// 500 conversations and 20,000 messages) is streamed whole, a page at a time: every
/// conversation, newest first, each one's messages in order, none twice, as CSV and as
/// JSON; `limit` takes the newest conversations only.
#[test]
fn an_export_of_every_conversation_is_streamed_whole() {
    const CONVERSATIONS: usize = 600;
    const MESSAGES: usize = 36;
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Export everything", &upstream.base_url, false);
    // Planted in the site's copy of its conversations, which the console reads.
    let numbers = |n: usize| {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {})",
            n - 1
        )
    };
    worker.site_rows(
        &site,
        &format!(
            "{} INSERT INTO conversations (id, site_id, created_at, updated_at) \
             SELECT printf('conv_%04d', i), '{}', 1700000000000 + i * 1000, \
             1800000000000 - i FROM n",
            numbers(CONVERSATIONS),
            site.id
        ),
    );
    worker.site_rows(
        &site,
        &format!(
            "{} INSERT INTO messages (id, site_id, conversation_id, seq, role, kind, content, \
             created_at) SELECT printf('msg_%06d', i), '{}', printf('conv_%04d', i / {MESSAGES}), \
             i % {MESSAGES} + 1, CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END, 'text', \
             printf('Câu số %d', i), 1700000000000 + i FROM n",
            numbers(CONVERSATIONS * MESSAGES),
            site.id
        ),
    );
    let newest_first: Vec<String> = (0..CONVERSATIONS)
        .rev()
        .map(|i| format!("conv_{i:04}"))
        .collect();

    let (status, csv) = get(
        worker,
        &site.secret_key,
        "/admin/conversations/export?format=csv",
    );
    assert_eq!(status, 200, "{csv}");
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines.len(),
        1 + CONVERSATIONS * MESSAGES,
        "a header and every message"
    );
    assert!(
        lines[0].starts_with("\u{feff}\"conversation_id\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("\"conv_0599\",\"\",\"1\",\"user\""),
        "{}",
        lines[1]
    );

    let (status, body) = get(
        worker,
        &site.secret_key,
        "/admin/conversations/export?format=json",
    );
    assert_eq!(status, 200, "{}", &body[..body.len().min(300)]);
    let messages = json_of(&body)["messages"]
        .as_array()
        .cloned()
        .expect("messages");
    assert_eq!(messages.len(), CONVERSATIONS * MESSAGES);
    let mut order: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let id = message["conversation_id"].as_str().expect("id").to_string();
        if order.last() != Some(&id) {
            order.push(id);
        }
        assert_eq!(message["seq"], (i % MESSAGES + 1) as f64, "{message}");
        assert!(
            message.get("conversation_created_at").is_none(),
            "{message}"
        );
    }
    assert_eq!(order, newest_first, "every conversation once, newest first");

    let (status, body) = get(
        worker,
        &site.secret_key,
        "/admin/conversations/export?format=json&limit=5",
    );
    assert_eq!(status, 200, "{body}");
    let mut ids: Vec<String> = json_of(&body)["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["conversation_id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids.len(), 5 * MESSAGES);
    ids.dedup();
    assert_eq!(ids, newest_first[..5]);
}
