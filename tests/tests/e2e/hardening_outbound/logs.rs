//! The classification log line (`shop`'s intent, per turn) names the conversation and
//! never the user: no `user_id` field, and the user's id nowhere in the Worker's log.

use std::time::Duration;

use concierge_e2e::Worker;
use concierge_e2e::api::{create_conversation, eventually, send, site_with_upstream, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use serde_json::{Value, json};

#[test]
fn the_classification_log_names_the_conversation_and_not_the_user() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Log shop", &upstream.base_url, false);
    let user = format!("kh-{:x}", std::process::id() ^ 0x005e_ed1d);
    let (conversation, _) = create_conversation(worker, &site, json!({"user_id": user}));
    upstream.push(Reply::text("Dạ, áo thun có size M ạ."));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "áo thun này còn size M không?",
    );
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");

    let line: Value = eventually(Duration::from_secs(10), "the classification line", || {
        worker.log().lines().find_map(|line| {
            let start = line.find('{')?;
            let json: Value = serde_json::from_str(&line[start..]).ok()?;
            (json["conversation_id"] == conversation.as_str() && json.get("intent").is_some())
                .then_some(json)
        })
    });
    assert!(line.get("confidence").is_some(), "{line}");
    assert!(line.get("user_id").is_none(), "the user is logged: {line}");
    let log = worker.log();
    assert!(
        !log.contains(&user),
        "the user's id appears in the Worker's log"
    );
}
