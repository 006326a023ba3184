//! The rental merchant admin (listings, roles, learned Q&A) and the seed endpoint
//! `POST /ai/chat` with its sessions.

use concierge_e2e::{agent, into_parts};
use serde_json::{Value, json};

use super::{Q1_SQL, Rental, rental_site};

fn call(r: &Rental, method: &str, path: &str, body: Option<Value>) -> (u16, String) {
    let request = agent()
        .request(method, &r.worker.url(path))
        .set("x-api-key", &r.site.secret_key);
    into_parts(match body {
        Some(body) => request.send_json(body),
        None => request.call(),
    })
}

#[test]
fn listings_roles_and_learned_qa_are_managed_with_the_secret_key() {
    let r = rental_site("Rental admin");
    // Upserts are checked against the schema; nothing is written on a bad row.
    let bad = json!({"rows": [{"id": "x1", "title": "ok"}, {"id": "x2", "secret": "no"}]});
    let (status, body) = call(&r, "PUT", "/admin/rental/room", Some(bad));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("rows[1].secret"), "{body}");
    let (status, body) = call(
        &r,
        "PUT",
        "/admin/rental/room",
        Some(json!({"rows": [{"id": "a/b"}]})),
    );
    assert_eq!(status, 400, "{body}");
    let (status, _) = call(
        &r,
        "PUT",
        "/admin/rental/castle",
        Some(json!({"rows": [{"id": "c"}]})),
    );
    assert_eq!(status, 404);
    // The public key cannot manage listings.
    let (status, _) = into_parts(
        agent()
            .put(&r.worker.url("/admin/rental/room"))
            .set("x-api-key", &r.site.public_key)
            .set("origin", "https://shop.example")
            .send_json(json!({"rows": [{"id": "z"}]})),
    );
    assert!(status == 401 || status == 403, "{status}");
    assert_eq!(call(&r, "DELETE", "/admin/rental/room/r3", None).0, 204);
    assert_eq!(call(&r, "DELETE", "/admin/rental/room/r3", None).0, 404);

    // A role uploaded for a known user labels that user's answers.
    let users = json!({"users": [{"user_id": "landlord-7", "role": "LANDLORD"}]});
    assert_eq!(call(&r, "PUT", "/admin/rental/users", Some(users)).0, 200);
    let (status, _) = call(
        &r,
        "PUT",
        "/admin/rental/users",
        Some(json!({"users": [{"user_id": "u", "role": "ADMIN"}]})),
    );
    assert_eq!(status, 400);
    let landlord = r.conversation(json!({"user_id": "landlord-7"}));
    r.orchestrate("GREETING", false, "LIST", "Chào chủ trọ");
    let (text, _, _) = r.ask(&r.site.secret_key, &landlord, "Chào");
    assert_eq!(text, "[LANDLORD] Chào chủ trọ");

    // Learn a Q&A, inspect it, purge it: the next identical question generates SQL again.
    let conversation = r.conversation(json!({}));
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(Q1_SQL);
    r.reply("Hai phòng");
    r.reply("{\"isValid\": true}");
    r.ask(&r.site.secret_key, &conversation, "Phòng giá rẻ ở quận 1?");
    let learned = r.learned();
    assert_eq!(learned.len(), 1);
    assert_eq!(learned[0]["question"], "Phòng giá rẻ ở quận 1?");
    let id = learned[0]["id"].as_str().expect("id").to_string();
    assert_eq!(
        call(&r, "DELETE", &format!("/admin/rental/qa/{id}"), None).0,
        204
    );
    assert_eq!(
        call(&r, "DELETE", &format!("/admin/rental/qa/{id}"), None).0,
        404
    );
    assert!(r.learned().is_empty());
    let before = r.markers().len();
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(Q1_SQL);
    r.reply("Hai phòng");
    r.reply("{\"isValid\": true}");
    r.ask(&r.site.secret_key, &conversation, "Phòng giá rẻ ở quận 1?");
    assert_eq!(
        r.markers().len() - before,
        4,
        "the SQL model is called again after a purge"
    );
}

#[test]
fn the_seed_endpoint_answers_a_chat_response_on_a_session() {
    let r = rental_site("Rental seed endpoint");
    let ask_on = |query: &str, session: Option<&str>| -> Value {
        let mut body = json!({"query": query});
        if let Some(session) = session {
            body["sessionId"] = json!(session);
        }
        let (status, body) = into_parts(
            agent()
                .post(&r.worker.url("/ai/chat"))
                .set("x-api-key", &r.site.public_key)
                .set("origin", "https://shop.example")
                .send_json(body),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).expect("JSON")
    };
    let ask = |query: &str| ask_on(query, None);
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(Q1_SQL);
    r.reply("[GUEST] Đây là 2 phòng giá rẻ ở quận 1...\n---END\nLIST: [{\"id\":\"r1\"}]\nTABLE: null\nCHART: null");
    r.reply("{\"isValid\": true}");
    let first = ask("Tìm phòng trọ giá rẻ ở quận 1");
    assert_eq!(first["kind"], "DATA");
    assert_eq!(
        first["message"],
        "[GUEST] Đây là 2 phòng giá rẻ ở quận 1..."
    );
    assert_eq!(first["payload"]["mode"], "LIST");
    assert_eq!(first["payload"]["list"]["items"][0]["path"], "/rooms/r1");
    let session = first["sessionId"].as_str().expect("sessionId").to_string();
    // Minted by the server (never derived from the caller's address).
    assert!(
        session.starts_with("s_") && session.len() == 34,
        "{session}"
    );
    assert!(
        first["timestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{first}"
    );

    r.orchestrate("CLARIFICATION", false, "LIST", "Bạn muốn khoảng giá nào?");
    let second = ask_on("Còn phòng nào khác không?", Some(&session));
    assert_eq!(second["kind"], "CONTROL");
    assert_eq!(second["sessionId"], session.as_str());
    assert_eq!(second["payload"], json!({"reason": "CLARIFICATION"}));
    // Same session, same conversation: the orchestrator saw the first exchange.
    let requests = r.upstream.chat_requests();
    let last = requests.last().expect("request").body.to_string();
    assert!(last.contains("Tìm phòng trọ giá rẻ ở quận 1"), "{last}");

    // A chart keeps the seed's fields (a QuickChart URL built, never fetched) plus `spec`.
    r.orchestrate("QUERY", true, "CHART", "");
    r.reply(
        "SELECT district, avg(price) AS avg_price FROM rooms GROUP BY district ORDER BY district",
    );
    r.reply("Giá trung bình theo quận");
    r.reply("{\"isValid\": true}");
    let third = ask("Thống kê giá trung bình theo quận");
    let chart = &third["payload"]["chart"];
    assert_eq!(third["payload"]["mode"], "CHART");
    assert_eq!(
        (&chart["mimeType"], &chart["width"], &chart["height"]),
        (&json!("image/png"), &json!(500), &json!(300))
    );
    let url = chart["url"].as_str().unwrap_or_default();
    assert!(
        url.starts_with("https://quickchart.io/chart?c=") && url.ends_with("&w=500&h=300"),
        "{url}"
    );
    super::assert_seed_chart(chart, &["Gò Vấp", "Quận 1"], &[1800000.0, 2750000.0]);

    let (status, _) = into_parts(
        agent()
            .post(&r.worker.url("/ai/chat"))
            .set("x-api-key", &r.site.public_key)
            .set("origin", "https://shop.example")
            .send_json(json!({"query": "  "})),
    );
    assert_eq!(status, 400);

    // The payload schema is published by the Worker's static assets.
    let (status, body) = into_parts(
        agent()
            .get(&r.worker.url("/schemas/rental-payload.json"))
            .call(),
    );
    assert_eq!(status, 200);
    let served: Value = serde_json::from_str(&body).expect("schema JSON");
    assert_eq!(served["$id"], "/schemas/rental-payload.json");
}

/// Idle seed sessions end in their site's own object: its alarm, set for the oldest
/// session's end, deletes them with their conversations (nothing scans every site).
#[test]
fn the_site_object_deletes_idle_seed_sessions_with_their_conversations() {
    let r = rental_site("Rental idle sessions");
    r.orchestrate("GREETING", false, "LIST", "Chào bạn");
    let (status, body) = into_parts(
        agent()
            .post(&r.worker.url("/ai/chat"))
            .set("x-api-key", &r.site.secret_key)
            .send_json(json!({"query": "Chào"})),
    );
    assert_eq!(status, 200, "{body}");
    let sessions = r
        .worker
        .site_rows(&r.site, "SELECT conversation_id FROM rental_sessions");
    assert_eq!(sessions.len(), 1);
    let conversation = sessions[0]["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    // Sessions of the site, the conversation and its messages (the copy in its object).
    let left = || {
        let n = |v: &Value| v.as_f64().map_or(99, |n| n as u64);
        let sessions = r
            .worker
            .site_rows(&r.site, "SELECT count(*) AS n FROM rental_sessions");
        let sql = format!(
            "SELECT (SELECT count(*) FROM conversations WHERE id = '{conversation}') AS conversations, \
             (SELECT count(*) FROM messages WHERE conversation_id = '{conversation}') AS messages"
        );
        let row = r.worker.site_rows(&r.site, &sql).remove(0);
        (
            n(&sessions[0]["n"]),
            n(&row["conversations"]),
            n(&row["messages"]),
        )
    };
    // A fresh session stays (its end is 30 minutes away); one idle for over 30 minutes does
    // not, and its conversation and messages go with it.
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(left(), (1, 1, 3), "greeting, question, answer");
    r.worker
        .site_rows(&r.site, "UPDATE rental_sessions SET last_active_at = 0");
    concierge_e2e::api::eventually(
        std::time::Duration::from_secs(20),
        "the idle session deleted",
        || (left() == (0, 0, 0)).then_some(()),
    );
}

/// `n` rooms with ids `cap-{from}` … `cap-{from + n - 1}`.
fn rooms(from: usize, n: usize) -> Value {
    let rows: Vec<Value> = (from..from + n)
        .map(|i| json!({"id": format!("cap-{i}"), "title": format!("Phòng {i}"), "price": 1_000_000 + i}))
        .collect();
    json!({ "rows": rows })
}

/// The SQL cost model assumes a site holds at most 5,000 listings of each kind: the admin
/// API keeps it true, all or nothing, and says so.
#[test]
fn a_site_holds_at_most_5000_listings_of_each_kind() {
    let r = rental_site("Rental listing cap");
    // The site starts with 3 rooms; 4,000 more make 4,003.
    for batch in 0..4 {
        let (status, body) = call(
            &r,
            "PUT",
            "/admin/rental/room",
            Some(rooms(batch * 1000, 1000)),
        );
        assert_eq!(status, 200, "batch {batch}: {body}");
    }
    // 998 more would make 5,001: refused whole, with a sentence naming the bound.
    let (status, body) = call(&r, "PUT", "/admin/rental/room", Some(rooms(4000, 998)));
    assert_eq!(status, 409, "{body}");
    let error: Value = serde_json::from_str(&body).expect("a JSON error");
    assert_eq!(error["error"]["code"], "limit_reached", "{body}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("5000") && message.contains("rooms"),
        "{message}"
    );
    // Nothing of the refused batch was written: exactly 997 still fit (5,000 in all).
    assert_eq!(
        call(&r, "DELETE", "/admin/rental/room/cap-4000", None).0,
        404
    );
    let (status, body) = call(&r, "PUT", "/admin/rental/room", Some(rooms(4000, 997)));
    assert_eq!(status, 200, "{body}");
    // At the bound, updating listings it holds still works; a new one does not.
    let (status, body) = call(&r, "PUT", "/admin/rental/room", Some(rooms(0, 1000)));
    assert_eq!(status, 200, "updates at the bound: {body}");
    assert_eq!(
        call(&r, "PUT", "/admin/rental/room", Some(rooms(4997, 1))).0,
        409
    );
    // Deleting one makes room for one; other kinds of listings have their own bound.
    assert_eq!(call(&r, "DELETE", "/admin/rental/room/cap-0", None).0, 204);
    assert_eq!(
        call(&r, "PUT", "/admin/rental/room", Some(rooms(4997, 1))).0,
        200
    );
    let post = json!({"rows": [{"id": "p-cap", "title": "Tin đăng"}]});
    let (status, body) = call(&r, "PUT", "/admin/rental/post", Some(post));
    assert_eq!(status, 200, "{body}");
}
