//! Issue 47 item 5, per-site caps, through a real Worker of its own with small caps
//! (`SITE_CAPS`): an upload that would pass a cap is refused whole with `409
//! limit_reached` and a sentence naming the cap, what the site held stays as it was, the
//! other sites are unaffected, deleting frees room, two concurrent uploads cannot pass a
//! cap together, and `GET /admin/usage` reports what the site holds against its caps.

use std::sync::OnceLock;

use concierge_e2e::{TestSite, Worker, WorkerOptions, agent, into_parts, test_vars};
use serde_json::{Value, json};

/// Small caps, so the tests reach them with a handful of rows.
const CAPS: &str = r#"{"data_sets":3,"data_rows":50,"data_bytes":4000,"documents":3,"document_bytes":2000,"warranty_records":5}"#;

fn worker() -> &'static Worker {
    static WORKER: OnceLock<Worker> = OnceLock::new();
    WORKER.get_or_init(|| {
        let mut vars = test_vars();
        vars.push(("SITE_CAPS".into(), CAPS.into()));
        Worker::start(&WorkerOptions {
            vars,
            ..WorkerOptions::default()
        })
    })
}

fn site(template: &str, name: &str) -> TestSite {
    worker().create_site(json!({"name": name, "template": template}))
}

fn parsed(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}"))
}

/// `PUT /admin/data/{name}` of `rows` rows (each about `width` bytes of JSON) for user `u1`.
fn put_data(site: &TestSite, name: &str, rows: usize, width: usize) -> (u16, String) {
    let pad = "x".repeat(width.saturating_sub(20));
    let rows: Vec<Value> = (0..rows).map(|i| json!({"n": i, "p": pad})).collect();
    into_parts(
        agent()
            .put(&worker().url(&format!("/admin/data/{name}")))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"user_id": "u1", "rows": rows})),
    )
}

fn delete_data(site: &TestSite, name: &str) -> u16 {
    into_parts(
        agent()
            .delete(&worker().url(&format!("/admin/data/{name}?user_id=u1")))
            .set("x-api-key", &site.secret_key)
            .call(),
    )
    .0
}

/// The site's data sets: name → row count.
fn data_sets(site: &TestSite) -> Vec<(String, u64)> {
    let (status, body) = into_parts(
        agent()
            .get(&worker().url("/admin/data"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let json = parsed(&body);
    let list = json["data"]
        .as_array()
        .or_else(|| json["connections"].as_array())
        .cloned()
        .unwrap_or_default();
    let mut sets: Vec<(String, u64)> = list
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap_or_default().to_string(),
                d["row_count"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    sets.sort();
    sets
}

/// `GET /admin/usage`: kind → (used, cap).
fn usage(site: &TestSite) -> Vec<(String, u64, u64)> {
    let (status, body) = into_parts(
        agent()
            .get(&worker().url("/admin/usage"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    parsed(&body)["usage"]
        .as_array()
        .expect("usage list")
        .iter()
        .map(|u| {
            let kind = match u["entity"].as_str() {
                Some(entity) => format!("{}:{entity}", u["kind"].as_str().unwrap_or_default()),
                None => u["kind"].as_str().unwrap_or_default().to_string(),
            };
            (
                kind,
                u["used"].as_u64().expect("used"),
                u["cap"].as_u64().expect("cap"),
            )
        })
        .collect()
}

fn used(site: &TestSite, kind: &str) -> (u64, u64) {
    usage(site)
        .into_iter()
        .find(|(k, _, _)| k == kind)
        .map(|(_, used, cap)| (used, cap))
        .unwrap_or_else(|| panic!("no {kind} in {:?}", usage(site)))
}

/// A refusal: 409 `limit_reached` whose message names the cap in both languages.
fn assert_refused(status: u16, body: &str, names: &[&str]) {
    assert_eq!(status, 409, "{body}");
    let json = parsed(body);
    assert_eq!(json["error"]["code"], "limit_reached", "{body}");
    let message = json["error"]["message"].as_str().expect("message");
    assert!(message.contains("chưa có gì được ghi"), "{message}");
    assert!(message.contains("nothing was written"), "{message}");
    for name in names {
        assert!(message.contains(name), "{name:?} not in {message}");
    }
}

#[test]
fn data_set_caps_refuse_whole_uploads_and_keep_what_the_site_held() {
    let a = site("analyst", "Caps: dữ liệu A");
    let b = site("analyst", "Caps: dữ liệu B");
    assert_eq!(put_data(&a, "ban_hang", 20, 40).0, 200);
    assert_eq!(put_data(&a, "kho", 20, 40).0, 200);
    let (rows, cap) = used(&a, "data_rows");
    assert_eq!((rows, cap), (40, 50));

    // Replacing `kho` with 31 rows would leave 51 rows on the site: refused whole, and the
    // old `kho` (20 rows) is still there.
    let (status, body) = put_data(&a, "kho", 31, 40);
    assert_refused(
        status,
        &body,
        &["50 dòng", "50 rows", "3 bộ dữ liệu", "3 data sets"],
    );
    assert_eq!(
        data_sets(&a),
        vec![("ban_hang".to_string(), 20), ("kho".to_string(), 20)]
    );
    // Replacing it with 30 rows reaches the cap exactly: accepted.
    assert_eq!(put_data(&a, "kho", 30, 40).0, 200);
    assert_eq!(used(&a, "data_rows").0, 50);

    // The number of data sets: a third fits (0 rows), a fourth does not.
    assert_eq!(delete_data(&a, "kho"), 204);
    assert_eq!(put_data(&a, "c", 1, 40).0, 200);
    assert_eq!(put_data(&a, "d", 1, 40).0, 200);
    let (status, body) = put_data(&a, "e", 1, 40);
    assert_refused(status, &body, &["3 bộ dữ liệu", "3 data sets"]);
    assert_eq!(used(&a, "data_sets"), (3, 3));

    // The other site is not affected by A's caps being reached.
    assert_eq!(put_data(&b, "ban_hang", 50, 40).0, 200);
    assert_eq!(used(&b, "data_rows"), (50, 50));

    // Bytes: 4,000 bytes of row JSON at most. 10 rows of ~500 bytes pass it.
    assert_eq!(delete_data(&a, "c"), 204);
    assert_eq!(delete_data(&a, "d"), 204);
    let (status, body) = put_data(&a, "rong_lon", 10, 500);
    assert_refused(status, &body, &["4.000 byte", "4,000 bytes"]);
    let (bytes, cap) = used(&a, "data_bytes");
    assert_eq!(cap, 4000);
    assert!(bytes > 0 && bytes <= 4000, "{bytes}");
    assert_eq!(data_sets(&a), vec![("ban_hang".to_string(), 20)]);
}

#[test]
fn two_uploads_at_once_cannot_pass_a_cap_together() {
    let a = site("analyst", "Caps: đồng thời");
    // Each alone fits (30 ≤ 50); both would make 60.
    let handles: Vec<_> = ["mot", "hai"]
        .into_iter()
        .map(|name| {
            let a = a.clone();
            std::thread::spawn(move || put_data(&a, name, 30, 40).0)
        })
        .collect();
    let mut statuses: Vec<u16> = handles
        .into_iter()
        .map(|h| h.join().expect("upload thread"))
        .collect();
    statuses.sort();
    assert_eq!(statuses, vec![200, 409]);
    assert_eq!(used(&a, "data_rows").0, 30);
    assert_eq!(data_sets(&a).len(), 1);
}

fn put_document(site: &TestSite, id: &str, content: &str) -> (u16, String) {
    into_parts(
        agent()
            .put(&worker().url(&format!("/admin/knowledge/{id}")))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"title": id, "content": content})),
    )
}

#[test]
fn documents_cap_counts_documents_and_their_text() {
    let k = site("knowledge", "Caps: tài liệu");
    for id in ["a", "b", "c"] {
        assert_eq!(put_document(&k, id, "Nội dung ngắn.").0, 201);
    }
    let (status, body) = put_document(&k, "d", "Nội dung ngắn.");
    assert_refused(status, &body, &["3 tài liệu", "3 documents"]);
    // Replacing a document does not add one.
    assert_eq!(put_document(&k, "a", "Nội dung mới.").0, 200);
    assert_eq!(used(&k, "documents"), (3, 3));
    // Text: 2,000 bytes at most across the site's documents; the refused replacement
    // leaves the old text.
    let (status, body) = put_document(&k, "b", &"chữ ".repeat(400));
    assert_refused(status, &body, &["2.000 byte", "2,000 bytes"]);
    let (status, body) = into_parts(
        agent()
            .get(&worker().url("/admin/knowledge/b"))
            .set("x-api-key", &k.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(parsed(&body)["document"]["content"], "Nội dung ngắn.");
}

fn put_warranty(site: &TestSite, serials: &[&str]) -> (u16, String) {
    let records: Vec<Value> = serials
        .iter()
        .map(|s| json!({"serial": s, "product": "Máy lọc nước", "warranty_until": "2027-01-31"}))
        .collect();
    into_parts(
        agent()
            .post(&worker().url("/admin/warranty"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"records": records})),
    )
}

#[test]
fn warranty_cap_refuses_records_past_it() {
    let s = site("shop", "Caps: bảo hành");
    assert_eq!(put_warranty(&s, &["SN-0001", "SN-0002", "SN-0003"]).0, 200);
    let (status, body) = put_warranty(&s, &["SN-0004", "SN-0005", "SN-0006"]);
    assert_refused(status, &body, &["5 hồ sơ bảo hành", "5 warranty records"]);
    assert_eq!(used(&s, "warranty_records"), (3, 5));
    // Updating existing serials (any letter case) adds none.
    assert_eq!(put_warranty(&s, &["sn-0001", "SN-0004", "SN-0005"]).0, 200);
    assert_eq!(used(&s, "warranty_records"), (5, 5));
    // A shop's usage lists its warranty records and not the other templates' kinds.
    let kinds: Vec<String> = usage(&s).into_iter().map(|(k, _, _)| k).collect();
    assert_eq!(kinds, vec!["warranty_records".to_string()]);
}

#[test]
fn usage_needs_the_secret_key() {
    let s = site("shop", "Caps: khóa");
    let (status, body) = into_parts(
        agent()
            .get(&worker().url("/admin/usage"))
            .set("x-api-key", &s.public_key)
            .call(),
    );
    assert!(status == 401 || status == 403, "{status} {body}");
    assert!(parsed(&body)["error"]["code"].is_string(), "{body}");
}
