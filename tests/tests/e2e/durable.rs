//! Durable conversations (issue 28) through the real Worker and its conversation Durable
//! Objects under `wrangler dev`, against a scripted upstream (`ScriptedUpstream`: exact
//! text and timing): a stream cut mid-answer and resumed with `Last-Event-ID` gets exactly
//! the rest; the AI SDK's resume replays a running turn; two posts at once are answered one
//! after the other; watchers of `…/events` see another client's answer live; an object reset
//! mid-turn ends the poster's stream with exactly one terminal `failed` and keeps the
//! visitor's message; a fifth waiting post is refused with `retry-after`.

use std::io::{BufReader, Read};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use concierge_e2e::api::{
    create_conversation, history, site_with_upstream, streamed_text, terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{ReceivedEvent, Worker, agent, into_parts, read_events, read_events_until};
use serde_json::{Value, json};

use super::durable_clients::{
    ANSWER, QUESTION, assert_visitor_message, chunks, id_of, post, question, resume, slow,
    until_terminal, watch,
};

#[test]
fn a_native_stream_cut_mid_answer_resumes_with_exactly_the_rest() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(ANSWER, Duration::from_millis(120)));
    let site = site_with_upstream(worker, "Durable resume shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    // The client reads the start of the answer, then its connection drops.
    let response = post(worker, &site.secret_key, &conversation, QUESTION);
    let mut reader = BufReader::new(response.into_reader());
    let seen = read_events_until(&mut reader, |events| chunks(events) >= 3);
    drop(reader);
    assert_eq!(seen[0].event, "started", "{seen:?}");
    let ids: Vec<u64> = seen.iter().map(id_of).collect();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "ids follow each other: {ids:?}"
    );
    let last = *ids.last().expect("ids");

    // The turn goes on without the client; resuming after the last id it saw gives
    // exactly the rest, once, then the terminal event, then the end.
    let (status, rest) = resume(worker, &site.secret_key, &conversation, last);
    assert_eq!(status, 200);
    let (name, done) = terminal(&rest);
    assert_eq!(name, "completed", "{rest:?}");
    let rest_ids: Vec<u64> = rest.iter().map(id_of).collect();
    assert_eq!(
        rest_ids[0],
        last + 1,
        "the rest starts right after the last id seen: {rest_ids:?}"
    );
    assert!(
        rest_ids.windows(2).all(|w| w[1] == w[0] + 1),
        "no event twice, none missing: {rest_ids:?}"
    );
    assert!(rest.iter().all(|e| e.event != "started"), "{rest:?}");
    let text = format!("{}{}", streamed_text(&seen), streamed_text(&rest));
    assert_eq!(text, ANSWER);

    // Stored once, complete.
    let stored = history(worker, &site.secret_key, &conversation);
    let last_message = stored.last().expect("messages");
    assert_eq!(last_message["content"], ANSWER);
    assert_eq!(last_message["id"], done["message_id"]);

    // The client has seen the end: nothing more to resume.
    let (status, after_end) = resume(
        worker,
        &site.secret_key,
        &conversation,
        id_of(rest.last().expect("terminal")),
    );
    assert_eq!((status, after_end.len()), (204, 0));
}

#[test]
fn the_ai_sdk_resume_replays_the_running_turn_from_its_start() {
    use super::ai_sdk::script::{ORIGIN, client};
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(ANSWER, Duration::from_millis(120)));
    let site = site_with_upstream(worker, "Durable AI SDK shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    // The poster's stream (native) starts; its page reloads mid-answer and `useChat({resume:
    // true})` asks for the chat's stream.
    let response = post(worker, &site.secret_key, &conversation, QUESTION);
    let mut reader = BufReader::new(response.into_reader());
    let seen = read_events_until(&mut reader, |events| chunks(events) >= 2);
    drop(reader);
    let started: Value = serde_json::from_str(&seen[0].data).expect("started JSON");
    let out = client(json!({
        "mode": "reconnect",
        "read": true,
        "url": worker.url("/api/chat"),
        "headers": {"x-api-key": site.public_key, "origin": ORIGIN},
        "chatId": conversation,
    }));
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(out["header"], "v1", "{out}");
    assert_eq!(
        out["text"], ANSWER,
        "the whole answer, from its start: {out}"
    );
    assert_eq!(out["messageId"], started["message_id"], "{out}");
    assert_eq!(out["errors"], json!([]), "{out}");
    assert_eq!(
        out["types"]
            .as_array()
            .and_then(|t| t.last())
            .and_then(Value::as_str),
        Some("finish"),
        "{out}"
    );
}

#[test]
fn two_posts_at_once_are_answered_one_after_the_other() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let first_answer = "Dạ, cấu hình thứ nhất gồm i5 và RTX 4060 ạ.";
    let second_answer = "Dạ, cấu hình thứ hai gồm Ryzen 5 và RX 7600 ạ.";
    upstream.push(slow(first_answer, Duration::from_millis(80)));
    upstream.push(slow(second_answer, Duration::from_millis(80)));
    let site = site_with_upstream(worker, "Durable order shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    let questions = [question(21), question(22)];
    let posts: Vec<_> = questions
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, question)| {
            let (url, key) = (
                worker.url(&format!("/conversations/{conversation}/messages")),
                site.secret_key.clone(),
            );
            thread::spawn(move || {
                // The second leaves a moment after the first: both are in flight at once.
                thread::sleep(Duration::from_millis(150 * i as u64));
                let response = agent()
                    .post(&url)
                    .set("x-api-key", &key)
                    .send_json(json!({"content": question}))
                    .expect("answered");
                assert_eq!(response.status(), 200);
                read_events(response.into_reader())
            })
        })
        .collect();
    let streams: Vec<Vec<ReceivedEvent>> =
        posts.into_iter().map(|p| p.join().expect("post")).collect();

    // Each stream is one whole answer (no interleaving), and the second started only once
    // the first had ended.
    for (events, answer) in streams.iter().zip([first_answer, second_answer]) {
        let (name, _) = terminal(events);
        assert_eq!(name, "completed", "{events:?}");
        assert_eq!(streamed_text(events), answer);
    }
    let first_end = streams[0].last().expect("terminal").arrived;
    let second_start = streams[1][0].arrived;
    assert!(
        second_start >= first_end,
        "the second turn starts after the first ended"
    );
    assert!(id_of(&streams[1][0]) > id_of(streams[0].last().expect("terminal")));

    // The second turn's prompt holds the first's answer; both messages are stored, each
    // answer right after its question.
    let requests = upstream.chat_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].body.to_string().contains(first_answer),
        "{:?}",
        requests[1].body
    );
    let stored: Vec<(String, String)> = history(worker, &site.secret_key, &conversation)
        .iter()
        .filter(|m| m["kind"] != "greeting")
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("user", questions[0].as_str()),
        ("assistant", first_answer),
        ("user", questions[1].as_str()),
        ("assistant", second_answer),
    ]
    .iter()
    .map(|(r, c)| (r.to_string(), c.to_string()))
    .collect();
    assert_eq!(stored, expected);
}

#[test]
fn two_watchers_see_a_third_clients_answer_live() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(ANSWER, Duration::from_millis(60)));
    let site = site_with_upstream(worker, "Durable live shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let tabs = [
        watch(worker, &site.secret_key, &conversation),
        watch(worker, &site.secret_key, &conversation),
    ];

    let response = post(worker, &site.secret_key, &conversation, QUESTION);
    let posted = read_events(response.into_reader());
    let (_, done) = terminal(&posted);
    for tab in &tabs {
        let seen = until_terminal(tab, Duration::from_secs(20));
        // On attaching, the handoff's state (a snapshot, without an id).
        assert_eq!(
            (seen[0].event.as_str(), seen[0].id.as_deref()),
            ("handoff", None),
            "{seen:?}"
        );
        // The visitor's message, then the turn as it streamed, with the poster's ids.
        assert_visitor_message(&seen, QUESTION);
        let turn: Vec<ReceivedEvent> = seen
            .iter()
            .filter(|e| e.event != "message" && e.event != "handoff")
            .cloned()
            .collect();
        let (name, data) = terminal(&turn);
        assert_eq!(name, "completed", "{seen:?}");
        assert_eq!(data["message_id"], done["message_id"]);
        assert_eq!(streamed_text(&turn), ANSWER);
        let ids: Vec<u64> = turn.iter().map(id_of).collect();
        let posted_ids: Vec<u64> = posted.iter().map(id_of).collect();
        assert_eq!(ids, posted_ids, "the same events, the same ids");
    }
}

#[test]
fn an_object_reset_mid_turn_ends_the_stream_with_one_failure_and_keeps_the_message() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.push(slow(ANSWER, Duration::from_millis(150)));
    let site = site_with_upstream(worker, "Durable reset shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    const QUESTION: &str = "Tư vấn cấu hình PC chơi game tầm 25 triệu";

    let response = post(worker, &site.secret_key, &conversation, QUESTION);
    let mut reader = BufReader::new(response.into_reader());
    let mut seen = read_events_until(&mut reader, |events| chunks(events) >= 2);
    // The object is reset mid-turn (as the platform may do at any time).
    let (status, body) = into_parts(
        agent()
            .post(&worker.url(&format!("/debug/conversations/{conversation}/abort")))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 204, "{body}");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = reader.read_to_end(&mut rest);
        let _ = tx.send(rest);
    });
    let rest = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the poster's stream ends (no hang)");
    seen.extend(read_events(rest.as_slice()));
    let (name, data) = terminal(&seen);
    assert_eq!(name, "failed", "{seen:?}");
    assert_eq!(data["error"]["code"], "turn_interrupted", "{seen:?}");

    // The visitor's message is kept, marked as not answered; no answer is stored as
    // complete.
    let stored = history(worker, &site.secret_key, &conversation);
    let asked = stored
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap_or_else(|| panic!("the visitor's message is kept: {stored:?}"));
    assert_eq!(asked["content"], QUESTION);
    assert_eq!(
        asked["metadata"]["answer_failed"], "turn_interrupted",
        "{asked}"
    );
    assert!(stored.iter().all(|m| m["content"] != ANSWER), "{stored:?}");

    // A client that resumes after what it saw gets the failure, not a hang.
    let last_chunk = seen
        .iter()
        .filter(|e| e.event.is_empty())
        .map(id_of)
        .max()
        .expect("chunks");
    let (status, resumed) = resume(worker, &site.secret_key, &conversation, last_chunk);
    assert_eq!(status, 200);
    let (name, data) = terminal(&resumed);
    assert_eq!(
        (name.as_str(), &data["error"]["code"]),
        ("failed", &json!("turn_interrupted"))
    );

    // The conversation carries on.
    upstream.push(Reply::text("Dạ, em gửi lại cấu hình ạ."));
    let response = post(worker, &site.secret_key, &conversation, &question(26));
    let events = read_events(response.into_reader());
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    assert!(
        id_of(&events[0]) > last_chunk,
        "ids never repeat after a reset"
    );
}

#[test]
fn a_fifth_waiting_post_is_refused_with_retry_after() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // The first answer takes about two seconds.
    upstream.push(slow(ANSWER, Duration::from_millis(100)));
    upstream.set_default(Reply::text("Dạ, em trả lời ngay ạ."));
    let site = site_with_upstream(worker, "Durable busy shop", &upstream.base_url, false);
    let (conversation, _) = create_conversation(worker, &site, json!({}));

    // One turn runs and four posts wait for it.
    let posts: Vec<_> = (0..5)
        .map(|i| {
            let (url, key) = (
                worker.url(&format!("/conversations/{conversation}/messages")),
                site.secret_key.clone(),
            );
            thread::sleep(Duration::from_millis(if i == 0 { 0 } else { 100 }));
            thread::spawn(move || {
                let response = agent()
                    .post(&url)
                    .set("x-api-key", &key)
                    .send_json(json!({"content": question(40 + i)}))
                    .expect("answered");
                read_events(response.into_reader())
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(800));
    let refused = agent()
        .post(&worker.url(&format!("/conversations/{conversation}/messages")))
        .set("x-api-key", &site.secret_key)
        .send_json(json!({"content": question(50)}));
    match refused {
        Err(ureq::Error::Status(429, response)) => {
            assert_eq!(response.header("retry-after"), Some("2"));
            let body: Value = response.into_json().expect("JSON");
            assert_eq!(body["error"]["code"], "conversation_busy", "{body}");
        }
        Ok(response) => panic!("the sixth post was answered: {}", response.status()),
        Err(err) => panic!("the sixth post: {err}"),
    }
    // The five are answered, each in full; the refused one is not stored.
    for post in posts {
        let events = post.join().expect("post");
        assert_eq!(terminal(&events).0, "completed", "{events:?}");
    }
    let stored = history(worker, &site.secret_key, &conversation);
    let users = stored.iter().filter(|m| m["role"] == "user").count();
    assert_eq!(users, 5, "{stored:?}");
    assert!(stored.iter().all(|m| m["content"] != question(50)));
}
