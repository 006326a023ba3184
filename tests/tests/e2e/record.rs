//! Issue 47, items 1, 2 and 7: the conversation object is the record of its conversation
//! (its own SQLite), the site's object holds a copy of the site's conversations (what the
//! console and every site-wide read use), and the shared D1 is no longer written.
//!
//! - A conversation the shared D1 held before (rows written in the D1 schema an older
//!   version used) is imported by the site's object on its first use, and by the
//!   conversation's object from there: the model gets its history, the seq goes on, its
//!   vote and summary stay, the console lists it, and the site's copy holds old and new
//!   while the D1 rows are left as they were.
//! - Every write reaches the site's copy once the request that made it is answered: a
//!   vote, a turn's messages.

use concierge_e2e::api::{history, send, site_with_upstream, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

fn rows(worker: &Worker, sql: &str) -> Vec<Value> {
    worker.d1_rows(sql)
}

#[test]
fn a_conversation_stored_in_d1_by_an_older_version_is_imported_by_its_object() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, bên em giao trong 2 ngày ạ."));
    let site = site_with_upstream(worker, "Record import shop", &upstream.base_url, false);
    // An id no object has seen: as a conversation an older version stored in D1 only.
    let conversation = format!("{:032x}", rand_u128());
    let (s, c) = (&site.id, &conversation);
    let now = 1_760_000_000_000u64;
    worker.d1_rows(&format!(
        "INSERT INTO conversations (id, site_id, user_id, language, created_at, updated_at, template) \
         VALUES ('{c}', '{s}', NULL, 'vi', {now}, {now}, 'shop'); \
         INSERT INTO messages (id, site_id, conversation_id, seq, role, kind, content, metadata, \
         embedding_status, created_at) VALUES \
         ('{c}m1', '{s}', '{c}', 1, 'assistant', 'greeting', 'Xin chào!', '{{}}', 'skipped', {now}), \
         ('{c}m2', '{s}', '{c}', 2, 'user', 'text', 'Shop có bán tai nghe Sony không?', '{{}}', 'pending', {}), \
         ('{c}m3', '{s}', '{c}', 3, 'assistant', 'text', 'Dạ có, tai nghe Sony WH-1000XM5 ạ.', '{{}}', 'pending', {}); \
         INSERT INTO summaries (conversation_id, site_id, content, upto_seq, updated_at) \
         VALUES ('{c}', '{s}', 'Khách hỏi tai nghe Sony.', 3, {now}); \
         INSERT INTO message_feedback (site_id, conversation_id, message_id, voter, rating, comment, created_at, updated_at) \
         VALUES ('{s}', '{c}', '{c}m3', 'site', 1, 'đúng ý', {now}, {now});",
        now + 1,
        now + 2,
    ));

    let (status, events) = send(worker, &site.secret_key, c, "Giao hàng mất mấy ngày?");
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");

    // The model was asked with the imported history.
    let asked = upstream.chat_requests();
    let last = asked.last().expect("a chat request").body.to_string();
    assert!(last.contains("Shop có bán tai nghe Sony không?"), "{last}");
    assert!(last.contains("WH-1000XM5"), "{last}");

    // The conversation goes on from seq 3; old and new are in the history.
    let stored = history(worker, &site.secret_key, c);
    let contents: Vec<&str> = stored
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        contents,
        [
            "Xin chào!",
            "Shop có bán tai nghe Sony không?",
            "Dạ có, tai nghe Sony WH-1000XM5 ạ.",
            "Giao hàng mất mấy ngày?",
            "Dạ, bên em giao trong 2 ngày ạ.",
        ],
        "{stored:?}"
    );
    let seq_sql = format!("SELECT seq FROM messages WHERE conversation_id = '{c}' ORDER BY seq");
    let seqs_of =
        |rows: Vec<Value>| -> Vec<u64> { rows.iter().filter_map(|r| r["seq"].as_u64()).collect() };
    assert_eq!(
        seqs_of(worker.site_rows(&site, &seq_sql)),
        [1, 2, 3, 4, 5],
        "the site's copy holds old and new"
    );
    assert_eq!(
        seqs_of(rows(worker, &seq_sql)),
        [1, 2, 3],
        "the shared D1 is no longer written"
    );

    // The vote and the summary stayed (in the site's copy, as in the record).
    let votes = worker.site_rows(
        &site,
        &format!("SELECT rating, comment FROM message_feedback WHERE conversation_id = '{c}'"),
    );
    assert_eq!(votes, [json!({"rating": 1, "comment": "đúng ý"})]);
    let summary = worker.site_rows(
        &site,
        &format!("SELECT content FROM summaries WHERE conversation_id = '{c}'"),
    );
    assert_eq!(summary, [json!({"content": "Khách hỏi tai nghe Sony."})]);

    // The console lists it, with its first question (a site-wide read of the copy).
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/conversations"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(c.as_str()), "{body}");
    assert!(body.contains("Shop có bán tai nghe Sony không?"), "{body}");
}

#[test]
fn a_vote_reaches_the_sites_copy_before_it_is_answered() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, shop mở cửa từ 8 giờ sáng ạ."));
    let site = site_with_upstream(worker, "Record vote shop", &upstream.base_url, false);
    let (conversation, _) = concierge_e2e::api::create_conversation(worker, &site, json!({}));
    let (status, events) = send(worker, &site.secret_key, &conversation, "Mấy giờ mở cửa?");
    assert_eq!(status, 200);
    let (kind, completed) = terminal(&events);
    assert_eq!(kind, "completed", "{events:?}");
    let reply = completed["message_id"].as_str().expect("the reply's id");
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!(
                "/conversations/{conversation}/messages/{reply}/feedback"
            )))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"rating": "down", "comment": "chưa rõ giờ đóng cửa"})),
    );
    assert!((200..300).contains(&status), "{status} {body}");
    let votes = worker.site_rows(
        &site,
        &format!(
            "SELECT rating, comment FROM message_feedback WHERE conversation_id = '{conversation}'"
        ),
    );
    assert_eq!(
        votes,
        [json!({"rating": -1, "comment": "chưa rõ giờ đóng cửa"})]
    );
}

fn rand_u128() -> u128 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    nanos ^ (u128::from(std::process::id()) << 64)
}
