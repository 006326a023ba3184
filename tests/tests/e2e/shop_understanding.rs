//! Issue 31 through the real Worker (`shop`, scripted upstream): a serial written after a
//! label ("số máy: …", "của em là …", "S/N …", "IMEI … ạ", "mã máy là …") answers the
//! serial request with the lookup, not the serial rule; an English first message naming
//! Vietnamese places holds an English conversation.
//!
//! Each conversation runs on the three ways a turn reads its history: back-to-back turns
//! with the secret key (the isolate's remembered context), the widget's way (public key,
//! an `Idempotency-Key` per message: the context is read with the message's write), and a
//! turn answered in the background (`Prefer: respond-async`).

use std::time::Duration;

use concierge_e2e::api::{
    create_conversation, eventually, fixed_sentence, history, site_with_upstream, streamed_text,
    terminal,
};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, into_parts, read_events};
use serde_json::{Value, json};

const ORIGIN: &str = "https://shop.example";

/// The site's warranty records: serial, product, warranty end (ISO).
const RECORDS: [(&str, &str, &str); 5] = [
    ("F2LXK9P0Q1", "Máy giặt LG FV1410S4P", "2027-03-05"),
    ("SN-8841-QX", "Tủ lạnh Samsung RT38", "2026-11-20"),
    ("356938035643809", "iPhone 15 Pro", "2026-09-01"),
    ("HNXQPLMT", "Laptop Asus Vivobook 15", "2027-01-31"),
    ("LG-77A9KQ", "Máy lọc nước Kangaroo KG10A3", "2028-02-14"),
];

/// How a turn reaches the Worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Secret key, no idempotency key, turns back to back: the isolate's remembered context.
    Remembered,
    /// Public key from the site's origin with an `Idempotency-Key`, as the widget sends.
    Widget,
    /// `Prefer: respond-async`: 202, answered by the queue, read from the history.
    Background,
}

struct Chat<'a> {
    worker: &'a Worker,
    site: &'a TestSite,
    conversation: String,
    path: Path,
    turns: usize,
}

impl<'a> Chat<'a> {
    fn open(worker: &'a Worker, site: &'a TestSite, path: Path) -> Self {
        let (conversation, _) = create_conversation(worker, site, json!({}));
        Self {
            worker,
            site,
            conversation,
            path,
            turns: 0,
        }
    }

    /// One visitor message; the text the visitor sees in answer.
    fn say(&mut self, text: &str) -> String {
        self.turns += 1;
        match self.path {
            Path::Remembered | Path::Widget => {
                let events = self.streamed(text);
                let (name, data) = terminal(&events);
                assert_eq!(name, "completed", "{text:?}: {data}");
                streamed_text(&events)
            }
            Path::Background => self.in_background(text),
        }
    }

    fn streamed(&self, text: &str) -> Vec<ReceivedEvent> {
        let url = self
            .worker
            .url(&format!("/conversations/{}/messages", self.conversation));
        let mut request = agent().post(&url);
        request = match self.path {
            Path::Widget => request
                .set("x-api-key", &self.site.public_key)
                .set("origin", ORIGIN)
                .set(
                    "idempotency-key",
                    &format!("widget-{}-{}", self.conversation, self.turns),
                ),
            _ => request.set("x-api-key", &self.site.secret_key),
        };
        match request.send_json(json!({"content": text})) {
            Ok(response) => read_events(response.into_reader()),
            Err(ureq::Error::Status(status, response)) => panic!(
                "{text:?}: HTTP {status}: {}",
                response.into_string().unwrap_or_default()
            ),
            Err(err) => panic!("{text:?}: {err}"),
        }
    }

    fn in_background(&self, text: &str) -> String {
        let (status, body) = into_parts(
            agent()
                .post(
                    &self
                        .worker
                        .url(&format!("/conversations/{}/messages", self.conversation)),
                )
                .set("x-api-key", &self.site.secret_key)
                .set("prefer", "respond-async")
                .send_json(json!({"content": text})),
        );
        assert_eq!(status, 202, "{text:?}: {body}");
        let accepted: Value = serde_json::from_str(&body).expect("JSON");
        let message_id = accepted["message_id"].as_str().expect("message_id");
        eventually(Duration::from_secs(60), "the background answer", || {
            history(self.worker, &self.site.secret_key, &self.conversation)
                .iter()
                .find(|m| m["id"] == message_id)
                .and_then(|m| m["content"].as_str().map(String::from))
        })
    }

    fn stored(&self) -> Vec<Value> {
        history(self.worker, &self.site.secret_key, &self.conversation)
    }
}

fn vi(key: &str) -> String {
    fixed_sentence("shop_fixed_vi.md", key)
}

fn en(key: &str) -> String {
    fixed_sentence("shop_fixed_en.md", key)
}

/// The seed's lookup answer for the stored record of `serial` (any case).
fn found_vi(serial: &str) -> String {
    let (stored, product, until) = RECORDS
        .iter()
        .find(|(s, _, _)| s.eq_ignore_ascii_case(serial))
        .expect("a record");
    // The seed writes dates as d/m/yyyy without leading zeros ("12/8/2026").
    let mut parts = until.split('-').map(|p| p.trim_start_matches('0'));
    let (year, month, day) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    vi("warranty.found")
        .replace("{product}", product)
        .replace("{serial}", stored)
        .replace("{date}", &format!("{day}/{month}/{year}"))
}

fn shop_site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> TestSite {
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    let records: Vec<Value> = RECORDS
        .iter()
        .map(|(serial, product, until)| {
            json!({"serial": serial, "product": product, "warranty_until": until})
        })
        .collect();
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/warranty"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({ "records": records })),
    );
    assert_eq!(status, 200, "{body}");
    site
}

/// A warranty request, then a labelled serial in answer to the serial request.
const ANSWERED: [(&str, &str, &str); 9] = [
    (
        "Máy giặt nhà em bị lỗi, bảo hành thế nào?",
        "số máy: F2LXK9P0Q1",
        "F2LXK9P0Q1",
    ),
    (
        "Tủ lạnh nhà mình không lạnh nữa, shop kiểm tra bảo hành giúp em",
        "của em là SN-8841-QX",
        "SN-8841-QX",
    ),
    (
        "Máy giặt nhà em bị lỗi, bảo hành thế nào?",
        "S/N f2lxk9p0q1",
        "F2LXK9P0Q1",
    ),
    (
        "dien thoai em bi sap nguon, con bao hanh khong a?",
        "IMEI 356938035643809 ạ",
        "356938035643809",
    ),
    (
        "Cho em hỏi laptop mua bên mình bị lỗi bàn phím thì bảo hành sao ạ",
        "mã máy là HNXQPLMT",
        "HNXQPLMT",
    ),
    (
        "Máy lọc nước bị rò rỉ, em muốn bảo hành",
        "Số Serial LG-77A9KQ",
        "LG-77A9KQ",
    ),
    (
        "kiểm tra bảo hành giúp em với",
        "đây ạ: lg-77a9kq",
        "LG-77A9KQ",
    ),
    (
        "Tủ lạnh bị hỏng, còn bảo hành không shop?",
        "SỐ MÁY SN-8841-QX nhé",
        "SN-8841-QX",
    ),
    (
        "Em muốn bảo hành máy giặt",
        "Mã máy: f2lxk9p0q1 ạ",
        "F2LXK9P0Q1",
    ),
];

fn labelled_serials_get_the_lookup(path: Path, name: &str) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, name);
    let (ask, remind) = (vi("warranty.ask_serial"), vi("warranty.remind_rule"));
    let mut failures = Vec::new();
    for (request, answer, serial) in ANSWERED {
        let mut chat = Chat::open(worker, &site, path);
        let asked = chat.say(request);
        if asked != ask {
            failures.push(format!(
                "{request:?} → {asked:?} (expected the serial request)"
            ));
            continue;
        }
        let seen = chat.say(answer);
        if seen != found_vi(serial) {
            let what = if seen == remind {
                "the serial rule".to_string()
            } else {
                format!("{seen:?}")
            };
            failures.push(format!(
                "{answer:?} after the serial request → {what} (expected the lookup of {serial})"
            ));
            continue;
        }
        let stored = chat.stored();
        let reply = stored.last().expect("the reply");
        assert_eq!(reply["kind"], "warranty", "{reply}");
        assert!(reply["metadata"]["product"].is_string(), "{reply}");
    }
    assert!(failures.is_empty(), "{path:?}:\n{}", failures.join("\n"));
    assert!(
        upstream.chat_requests().is_empty(),
        "the warranty branch never calls the model"
    );
}

#[test]
fn labelled_serials_answer_the_serial_request_on_remembered_turns() {
    labelled_serials_get_the_lookup(Path::Remembered, "Serial labels shop (remembered)");
}

#[test]
fn labelled_serials_answer_the_serial_request_from_the_widget() {
    labelled_serials_get_the_lookup(Path::Widget, "Serial labels shop (widget)");
}

#[test]
fn labelled_serials_answer_the_serial_request_in_the_background() {
    labelled_serials_get_the_lookup(Path::Background, "Serial labels shop (background)");
}

/// Warranty records an older version kept in the shared D1 (`warranty_records`) are found
/// after the upgrade: the site's object imports them on its first call, deletes them from
/// D1, and counts them in `GET /admin/usage`.
#[test]
fn warranty_records_kept_in_d1_by_an_older_version_are_imported_by_the_site_object() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Older warranty shop", &upstream.base_url, false);
    let values: Vec<String> = RECORDS
        .iter()
        .map(|(serial, product, until)| {
            format!("('{}', '{serial}', '{product}', '{until}')", site.id)
        })
        .collect();
    worker.d1_rows(&format!(
        "INSERT INTO warranty_records (site_id, serial, product, warranty_until) VALUES {}",
        values.join(", ")
    ));
    let mut chat = Chat::open(worker, &site, Path::Widget);
    assert_eq!(
        chat.say("Máy giặt nhà em bị lỗi, bảo hành thế nào?"),
        vi("warranty.ask_serial")
    );
    assert_eq!(chat.say("số máy: f2lxk9p0q1"), found_vi("F2LXK9P0Q1"));
    let rows = worker.d1_rows(&format!(
        "SELECT COUNT(*) AS n FROM warranty_records WHERE site_id = '{}'",
        site.id
    ));
    assert_eq!(rows[0]["n"], 0, "imported, then deleted from the shared D1");
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/usage"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let usage: Value = serde_json::from_str(&body).expect("JSON");
    let warranty = usage["usage"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["kind"] == "warranty_records"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(warranty["used"], RECORDS.len(), "{body}");
}

/// After the rule reminder a serial is still awaited: a labelled serial then is looked
/// up, and an unknown one gets the seed's "not in our system" answer, not the rule again.
#[test]
fn a_labelled_serial_after_the_rule_reminder_is_looked_up() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Serial after reminder shop");
    for path in [Path::Remembered, Path::Widget] {
        let mut chat = Chat::open(worker, &site, path);
        assert_eq!(
            chat.say("Máy giặt nhà em bị lỗi, bảo hành thế nào?"),
            vi("warranty.ask_serial"),
            "{path:?}"
        );
        assert_eq!(
            chat.say("em không nhớ nữa"),
            vi("warranty.remind_rule"),
            "{path:?}"
        );
        assert_eq!(
            chat.say("à có rồi, của em là SN-8841-QX"),
            found_vi("SN-8841-QX"),
            "{path:?}"
        );
        // The lookup ends the wait; a new request asks again, and an unknown serial
        // after a label is looked up and not found.
        assert_eq!(
            chat.say("Còn cái máy giặt nữa, kiểm tra bảo hành giúp em"),
            vi("warranty.ask_serial"),
            "{path:?}"
        );
        assert_eq!(
            chat.say("số máy: ZQ8K2M4N7"),
            vi("warranty.not_found"),
            "{path:?}"
        );
    }
    assert!(upstream.chat_requests().is_empty());
}

/// What the visitor is told in a turn is in English: either the model was told to answer
/// in English (and its answer is what the visitor sees), or the visitor sees one of the
/// template's English sentences.
fn assert_english(upstream: &ScriptedUpstream, asked_before: usize, message: &str, seen: &str) {
    let requests = upstream.chat_requests();
    let (en_line, vi_line) = (en("prompt.language"), vi("prompt.language"));
    if requests.len() > asked_before {
        let prompt = requests[requests.len() - 1].body["messages"].to_string();
        assert!(
            prompt.contains(&en_line) && !prompt.contains(&vi_line),
            "{message:?}: the model is told to answer in English: {prompt}"
        );
        assert_eq!(seen, ENGLISH_ANSWER, "{message:?}");
    } else {
        let sentences = |file: &str| -> Vec<String> {
            std::fs::read_to_string(concierge_e2e::repo_root().join("prompts").join(file))
                .expect("prompt file")
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split_once(": ").map(|(_, t)| t.trim().to_string()))
                .collect()
        };
        assert!(
            sentences("shop_fixed_en.md")
                .iter()
                .any(|s| filled(s, seen)),
            "{message:?}: the visitor sees an English sentence, got {seen:?}"
        );
        assert!(
            !sentences("shop_fixed_vi.md")
                .iter()
                .any(|s| filled(s, seen))
        );
    }
}

/// Whether `text` is `sentence` with its `{slot}`s filled in (each with some text).
fn filled(sentence: &str, text: &str) -> bool {
    let mut pieces = sentence.split('{');
    let head = pieces.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(head) else {
        return false;
    };
    let fixed: Vec<&str> = pieces
        .map(|p| p.split_once('}').map_or(p, |(_, f)| f))
        .collect();
    let Some((last, middle)) = fixed.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        // Each slot takes at least one character.
        let skip = rest.chars().next().map_or(0, char::len_utf8);
        match rest[skip..].find(piece) {
            Some(at) => rest = &rest[skip + at + piece.len()..],
            None => return false,
        }
    }
    rest.len() > last.len() && rest.ends_with(last)
}

const ENGLISH_ANSWER: &str = "Yes, we are open from 8am to 9pm every day.";

/// English first messages naming Vietnamese places (the issue's, and unseen ones), then
/// a quick English follow-up on the same conversation.
const ENGLISH_FIRST: [&str; 3] = [
    "Good morning, is your store in Da Nang open today?",
    "Hello! I'm in Buôn Ma Thuột this week, can I collect a laptop at your store there?",
    "Hi, my sister Lan in Hải Phòng bought a gaming PC from you, what graphics card do you recommend?",
];

fn english_conversations_stay_english(path: Path, name: &str) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(ENGLISH_ANSWER));
    let site = shop_site(worker, &upstream, name);
    for first in ENGLISH_FIRST {
        let mut chat = Chat::open(worker, &site, path);
        let before = upstream.chat_requests().len();
        let seen = chat.say(first);
        assert_english(&upstream, before, first, &seen);
        let follow_up = "Thanks. How much is the RTX 4060 graphics card?";
        let before = upstream.chat_requests().len();
        let seen = chat.say(follow_up);
        assert_english(&upstream, before, follow_up, &seen);
    }
    // An English warranty request in the same way: the serial request, then the lookup, in
    // English.
    let mut chat = Chat::open(worker, &site, path);
    assert_eq!(
        chat.say(
            "Hi, my washing machine from your Can Tho store is broken, how does the warranty work?"
        ),
        en("warranty.ask_serial")
    );
    let seen = chat.say("serial number: F2LXK9P0Q1");
    let found = en("warranty.found");
    let (head, _) = found.split_once("{product}").expect("a product slot");
    assert!(
        seen.starts_with(head)
            && seen.contains("Máy giặt LG FV1410S4P")
            && seen.contains("F2LXK9P0Q1"),
        "the English lookup answer: {seen:?}"
    );
}

#[test]
fn english_with_vietnamese_place_names_is_answered_in_english_on_remembered_turns() {
    english_conversations_stay_english(Path::Remembered, "English shop (remembered)");
}

#[test]
fn english_with_vietnamese_place_names_is_answered_in_english_from_the_widget() {
    english_conversations_stay_english(Path::Widget, "English shop (widget)");
}

#[test]
fn english_with_vietnamese_place_names_is_answered_in_english_in_the_background() {
    english_conversations_stay_english(Path::Background, "English shop (background)");
}

/// `POST /v1/chat/completions` without a chat id: the client sends the whole conversation
/// (as an OpenAI-style client does), nothing is stored. The answer's text.
fn stateless(worker: &Worker, site: &TestSite, messages: &[(&str, &str)]) -> String {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/v1/chat/completions"))
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .send_json(json!({
                "model": format!("concierge-{}", site.id),
                "stream": false,
                "messages": messages,
            })),
    );
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    json["choices"][0]["message"]["content"]
        .as_str()
        .expect("content")
        .to_string()
}

/// The OpenAI-compatible way in: the client's history carries the serial request, the
/// visitor's labelled serial gets the lookup.
#[test]
fn labelled_serials_answer_the_serial_request_on_the_openai_api() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Serial labels shop (OpenAI API)");
    let ask = vi("warranty.ask_serial");
    let mut failures = Vec::new();
    for (request, answer, serial) in ANSWERED {
        let seen = stateless(
            worker,
            &site,
            &[("user", request), ("assistant", &ask), ("user", answer)],
        );
        if seen != found_vi(serial) {
            failures.push(format!("{answer:?} → {seen:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(upstream.chat_requests().is_empty());
}

/// The OpenAI-compatible way in: a conversation the visitor opened in English (naming
/// Vietnamese places) is answered in English at every turn, not only the first.
#[test]
fn english_with_vietnamese_place_names_is_answered_in_english_on_the_openai_api() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text(ENGLISH_ANSWER));
    let site = shop_site(worker, &upstream, "English shop (OpenAI API)");
    let follow_up = "Thanks. How much is the RTX 4060 graphics card?";
    for first in ENGLISH_FIRST {
        let before = upstream.chat_requests().len();
        let seen = stateless(worker, &site, &[("user", first)]);
        assert_english(&upstream, before, first, &seen);
        let before = upstream.chat_requests().len();
        let seen = stateless(
            worker,
            &site,
            &[("user", first), ("assistant", &seen), ("user", follow_up)],
        );
        assert_english(&upstream, before, follow_up, &seen);
    }
}
