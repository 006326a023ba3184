//! Defect 8: the input rules — `user_id` counted in characters, strict calendar dates,
//! serials unique whatever their letter case, and a body without `Content-Length` refused
//! once it passes 32 KB, without reading the rest. A rejected request changes nothing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use concierge_e2e::api::{
    create_conversation, fixed_sentence, send, site_with_upstream, streamed_text,
};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

use concierge_e2e::api::error_code;

fn create(worker: &Worker, site: &TestSite, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

#[test]
fn user_ids_are_limited_in_characters_not_bytes() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "User id shop"}));
    // 128 characters of three bytes each: at the limit.
    let (status, body) = create(worker, &site, json!({"user_id": "ệ".repeat(128)}));
    assert_eq!(status, 201, "128 characters are allowed: {body}");
    let (status, body) = create(worker, &site, json!({"user_id": "a".repeat(128)}));
    assert_eq!(status, 201, "{body}");
    for too_long in ["ệ".repeat(129), "a".repeat(129)] {
        let (status, body) = create(worker, &site, json!({"user_id": too_long}));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{body}"
        );
        assert!(body.contains("128 characters"), "{body}");
    }
}

fn upload(worker: &Worker, site: &TestSite, records: Value) -> (u16, String) {
    into_parts(
        agent()
            .post(&worker.url("/admin/warranty"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({ "records": records })),
    )
}

/// What the assistant answers, in a new conversation, to a warranty check of `serial`.
fn lookup(worker: &Worker, site: &TestSite, serial: &str) -> String {
    let (conversation, _) = create_conversation(worker, site, json!({}));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        &format!("Kiểm tra bảo hành serial {serial}"),
    );
    assert_eq!(status, 200);
    streamed_text(&events)
}

fn found(product: &str, serial: &str, date: &str) -> String {
    fixed_sentence("shop_fixed_vi.md", "warranty.found")
        .replace("{product}", product)
        .replace("{serial}", serial)
        .replace("{date}", date)
}

fn not_found() -> String {
    fixed_sentence("shop_fixed_vi.md", "warranty.not_found")
}

fn warranty_site(worker: &Worker, name: &str) -> (ScriptedUpstream, TestSite) {
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    (upstream, site)
}

#[test]
fn impossible_warranty_dates_are_refused_and_change_nothing() {
    let worker = Worker::shared();
    let (_upstream, site) = warranty_site(worker, "Date shop");
    let (status, body) = upload(
        worker,
        &site,
        json!([{"serial": "KEEP-0001", "product": "Keeper", "warranty_until": "2026-08-12"}]),
    );
    assert_eq!(status, 200, "{body}");
    for bad in [
        "2026-02-31",
        "2026-+2-01",
        "2026-02-29",
        "2026-04-31",
        "2026-2-01",
        "2026-02-+1",
        "+026-02-01",
        "2026-13-01",
        "2026-00-10",
        "2026-02-1 ",
        "２０２６-02-01",
    ] {
        let (status, body) = upload(
            worker,
            &site,
            json!([
                {"serial": "NEW-0001", "product": "Newcomer", "warranty_until": "2027-01-01"},
                {"serial": "KEEP-0001", "product": "Changed", "warranty_until": bad},
            ]),
        );
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{bad:?}: {body}"
        );
        assert!(
            body.contains("records[1].warranty_until"),
            "{bad:?}: {body}"
        );
    }
    // Nothing of the refused uploads was stored: the earlier record answers as before.
    assert_eq!(
        lookup(worker, &site, "KEEP-0001"),
        found("Keeper", "KEEP-0001", "12/8/2026")
    );
    assert_eq!(lookup(worker, &site, "NEW-0001"), not_found());
    // A leap day is a date.
    let (status, body) = upload(
        worker,
        &site,
        json!([{"serial": "LEAP-2028", "product": "Leaper", "warranty_until": "2028-02-29"}]),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        lookup(worker, &site, "LEAP-2028"),
        found("Leaper", "LEAP-2028", "29/2/2028")
    );
}

#[test]
fn re_uploading_a_serial_in_another_letter_case_replaces_the_record() {
    let worker = Worker::shared();
    let (_upstream, site) = warranty_site(worker, "Serial case shop");
    // Lower case first then upper case, and the other way round: the later upload wins
    // whichever way the store orders serials.
    for (first, second) in [("qx-77a", "QX-77A"), ("ZK-9B", "zk-9b")] {
        let (status, body) = upload(
            worker,
            &site,
            json!([{"serial": first, "product": "Old phone", "warranty_until": "2026-01-10"}]),
        );
        assert_eq!(status, 200, "{body}");
        let (status, body) = upload(
            worker,
            &site,
            json!([{"serial": second, "product": "New phone", "warranty_until": "2027-03-04"}]),
        );
        assert_eq!(status, 200, "{body}");
        let expected = found("New phone", second, "4/3/2027");
        for asked in [first, second, &second.to_ascii_lowercase()] {
            assert_eq!(lookup(worker, &site, asked), expected, "asked as {asked}");
        }
    }
}

#[test]
fn a_body_without_content_length_is_refused_at_32_kb_without_reading_the_rest() {
    let worker = Worker::shared();
    let (_upstream, site) = warranty_site(worker, "Chunked shop");
    let (status, body) = upload(
        worker,
        &site,
        json!([{"serial": "KEEP-0002", "product": "Keeper", "warranty_until": "2026-08-12"}]),
    );
    assert_eq!(status, 200, "{body}");

    // A chunked upload that sends 40 KB and then never ends.
    let address = worker.base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    write!(
        stream,
        "POST /admin/warranty HTTP/1.1\r\nhost: {address}\r\nx-api-key: {}\r\n\
         content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        site.secret_key
    )
    .expect("headers");
    let opening =
        r#"{"records":[{"serial":"KEEP-0002","product":"Changed","warranty_until":"2026-08-12"}"#;
    write!(stream, "{:x}\r\n{opening}\r\n", opening.len()).expect("chunk");
    let filler = format!(
        r#",{{"serial":"FILL-0001","product":"{}","warranty_until":"2026-08-12"}}"#,
        "x".repeat(950)
    );
    for _ in 0..40 {
        write!(stream, "{:x}\r\n{filler}\r\n", filler.len()).expect("chunk");
    }
    stream.flush().expect("flush");
    let started = Instant::now();
    let mut response = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buffer) {
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buffer[..n]);
        if response.windows(4).any(|w| w == b"\r\n\r\n")
            && String::from_utf8_lossy(&response).contains('}')
        {
            break;
        }
    }
    let response = String::from_utf8_lossy(&response).to_string();
    assert!(
        response.starts_with("HTTP/1.1 413"),
        "refused with 413 after {:?} while the body was still open: {response:?}",
        started.elapsed()
    );
    assert!(response.contains("payload_too_large"), "{response}");
    drop(stream);
    assert_eq!(
        lookup(worker, &site, "KEEP-0002"),
        found("Keeper", "KEEP-0002", "12/8/2026")
    );
    assert_eq!(lookup(worker, &site, "FILL-0001"), not_found());
}
