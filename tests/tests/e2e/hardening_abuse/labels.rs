//! A `user_id` label (public key: nobody proved it) is trimmed, refused with control or
//! bidirectional-control characters, marked unproven in the console's API, and exported
//! without formulas: cells starting with `=`, `+`, `-`, `@`, TAB or CR are neutralised.

use concierge_e2e::api::{create_conversation, error_code, send, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{Worker, agent, into_parts};
use serde_json::{Value, json};

use super::{create_public, say, secret_get};

const CLIENT: &str = "198.51.100.139";

#[test]
fn labels_are_trimmed_screened_marked_unproven_and_exported_without_formulas() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Label shop", &upstream.base_url, false);

    // Control and bidi-override characters: 400 in the API's error shape.
    for bad in [
        "kh\u{7}1",
        "abc\u{202E}gpj.exe",
        "a\u{2066}b",
        "\t \r\n",
        "a\u{0}b",
    ] {
        let (status, body) = create_public(worker, &site, CLIENT, json!({"user_id": bad}));
        assert_eq!(status, 400, "{bad:?}: {body}");
        assert_eq!(error_code(&body), "bad_request", "{body}");
        let json: Value = serde_json::from_str(&body).expect("JSON");
        assert!(
            json["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("user_id"))
        );
    }

    // A label with a formula behind a tab: kept trimmed.
    let (status, body) = create_public(
        worker,
        &site,
        CLIENT,
        json!({"user_id": " \t=HYPERLINK(\"http://evil.example\",\"x\") "}),
    );
    assert_eq!(status, 201, "{body}");
    let labelled = serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string();
    // The model's answer starts with a tab and a formula (stored as written).
    upstream.push(Reply::text("\t=1+2"));
    let (status, text) = say(worker, &site, CLIENT, &labelled, "áo này giá bao nhiêu?");
    assert_eq!(status, 200, "{text}");
    // A conversation whose user the secret key states: proven.
    let (proven, _) = create_conversation(worker, &site, json!({"user_id": "kh-39"}));
    upstream.push(Reply::text("Dạ vâng ạ."));
    let (status, _) = send(worker, &site.secret_key, &proven, "còn size M không?");
    assert_eq!(status, 200);

    let (status, list) = secret_get(worker, &site, "/admin/conversations");
    assert_eq!(status, 200, "{list}");
    let row = |id: &str| {
        list["conversations"]
            .as_array()
            .expect("conversations")
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {list}"))
    };
    let label = row(&labelled);
    assert_eq!(
        label["user_id"], "=HYPERLINK(\"http://evil.example\",\"x\")",
        "{label}"
    );
    assert_eq!(label["user_id_verified"], false, "{label}");
    assert_eq!(row(&proven)["user_id_verified"], true);
    let (_, detail) = secret_get(worker, &site, &format!("/admin/conversations/{labelled}"));
    assert_eq!(detail["user_id_verified"], false, "{detail}");
    assert_eq!(detail["user_label"], label["user_id"], "{detail}");
    let (_, detail) = secret_get(worker, &site, &format!("/admin/conversations/{proven}"));
    assert_eq!(detail["user_id_verified"], true, "{detail}");

    let (status, csv) = into_parts(
        agent()
            .get(&worker.url("/admin/conversations/export?format=csv"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{csv}");
    assert!(
        csv.contains("\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\""),
        "the label neutralised: {csv}"
    );
    assert!(
        csv.contains("\"'\t=1+2\""),
        "a cell starting with a tab neutralised: {csv}"
    );
    for raw in ["\"\t=", "\"=", "\"\r="] {
        assert!(!csv.contains(raw), "{raw:?} left as is: {csv}");
    }
}
