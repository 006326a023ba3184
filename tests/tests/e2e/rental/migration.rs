//! Issue 47: a deployment that has `rental` data in today's D1 schema keeps it once that
//! data moves into the site's objects. Users, learned Q&A and seed sessions (the shared
//! `DB`) and listings (the `LISTINGS` database), planted as an older version left them, are
//! imported by the site's first rental calls, found and used afterwards, and deleted from D1.

use concierge_e2e::api::{create_conversation, history, site_with_upstream};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

use super::Rental;

/// A session id in the shape the seed endpoint mints.
const SESSION: &str = "s_0123456789abcdef0123456789abcdef";

fn n(rows: &[Value]) -> u64 {
    rows.first()
        .and_then(|row| row["n"].as_f64())
        .map_or(99, |n| n as u64)
}

#[test]
fn rental_data_kept_in_d1_by_an_older_version_is_imported_by_the_site_objects() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Older rental site", &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"template": "rental", "language": "vi"})),
    );
    assert_eq!(status, 200, "{body}");
    let r = Rental {
        worker,
        upstream,
        site,
    };
    let id = r.site.id.clone();
    // The conversation an older version's seed session ran on.
    let (conversation, _) = create_conversation(worker, &r.site, json!({}));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis();
    worker.d1_rows(&format!(
        "INSERT INTO rental_users (site_id, user_id, role) VALUES ('{id}', 'user-123', 'TENANT')"
    ));
    worker.d1_rows(&format!(
        "INSERT INTO rental_qa (site_id, id, question, sql, request_type, mode, created_at, hits, \
         role, context_free) VALUES \
         ('{id}', 'qa-old-1', 'Phòng rẻ nhất?', 'SELECT id, title, price FROM rooms ORDER BY price LIMIT 1', \
          'QUERY', 'LIST', 1700000000000, 7, 'GUEST', 1), \
         ('{id}', 'qa-old-2', 'Phòng ở quận 1?', 'SELECT id, title FROM rooms', 'QUERY', 'TABLE', \
          1700000001000, 0, NULL, 0)"
    ));
    worker.d1_rows(&format!(
        "INSERT INTO rental_sessions (site_id, session_id, conversation_id, last_active_at) \
         VALUES ('{id}', 'site:{SESSION}', '{conversation}', {now})"
    ));
    worker.d1_rows_in(
        "LISTINGS",
        &format!(
            "INSERT INTO rental_rows (site_id, entity, id, data, updated_at) VALUES \
             ('{id}', 'room', 'old1', '{{\"title\": \"Phòng cũ Lan Anh\", \"price\": 1500000, \"district\": \"Quận 1\", \"status\": \"available\"}}', 0), \
             ('{id}', 'room', 'old2', '{{\"title\": \"Phòng cũ Bến Thành\", \"price\": 2500000, \"district\": \"Quận 1\", \"status\": \"available\"}}', 0), \
             ('{id}', 'post', 'p1', '{{\"title\": \"Bài đăng cũ\"}}', 0)"
        ),
    );

    // Listings: counted by the site's listings object, and gone from LISTINGS.
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/usage"))
            .set("x-api-key", &r.site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let usage: Value = serde_json::from_str(&body).expect("JSON");
    let listings = |table: &str| {
        usage["usage"]
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .find(|i| i["kind"] == "listings" && i["entity"] == table)
            })
            .map(|i| i["used"].clone())
    };
    assert_eq!(listings("rooms"), Some(json!(2)), "{body}");
    assert_eq!(listings("posts"), Some(json!(1)), "{body}");
    let left = worker.d1_rows_in(
        "LISTINGS",
        &format!("SELECT count(*) AS n FROM rental_rows WHERE site_id = '{id}'"),
    );
    assert_eq!(n(&left), 0, "imported, then deleted from LISTINGS");

    // Learned Q&A: listed with their hits and review fields.
    let learned = r.learned();
    assert_eq!(learned.len(), 2, "{learned:?}");
    assert_eq!(learned[0]["id"], "qa-old-2");
    assert_eq!(learned[0]["context_free"], false);
    assert_eq!(learned[0]["role"], Value::Null);
    assert_eq!(learned[1]["id"], "qa-old-1");
    assert_eq!(learned[1]["hits"], 7);
    assert_eq!(learned[1]["role"], "GUEST");
    assert_eq!(learned[1]["context_free"], true);
    assert_eq!(learned[1]["created_at"], 1_700_000_000_000u64);
    for table in ["rental_users", "rental_qa", "rental_sessions"] {
        let left = worker.d1_rows(&format!(
            "SELECT count(*) AS n FROM {table} WHERE site_id = '{id}'"
        ));
        assert_eq!(n(&left), 0, "{table}: imported, then deleted from D1");
    }

    // The session: the merchant's server continues it, on the same conversation.
    r.orchestrate("GREETING", false, "LIST", "Chào bạn");
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/ai/chat"))
            .set("x-api-key", &r.site.secret_key)
            .send_json(json!({"query": "Chào shop", "sessionId": SESSION})),
    );
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answer["sessionId"], SESSION, "the imported session goes on");
    let messages = history(worker, &r.site.secret_key, &conversation);
    assert!(
        messages.iter().any(|m| m["content"] == "Chào shop"),
        "{messages:?}"
    );

    // The user's role and the listings, in a turn: the imported tenant sees the imported
    // rooms.
    let tenant = r.conversation(json!({"user_id": "user-123"}));
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply("SELECT id, title, price FROM rooms ORDER BY price ASC");
    r.reply("Đây là hai phòng\n---END");
    r.reply("{\"isValid\": false}");
    let (text, payloads, end) = r.ask(&r.site.secret_key, &tenant, "Phòng nào còn trống?");
    assert_eq!(end, "completed");
    assert_eq!(text, "[TENANT] Đây là hai phòng");
    let items = payloads[0]["data"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let paths: Vec<&str> = items.iter().filter_map(|i| i["path"].as_str()).collect();
    assert_eq!(paths, ["/rooms/old1", "/rooms/old2"], "{payloads:?}");
}
