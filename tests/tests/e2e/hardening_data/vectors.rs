//! Defect 7: every allowed document id is indexed under a vector id Vectorize accepts, and
//! deleted content — a document deleted while it was being indexed, a deleted
//! conversation's messages — is never retrieved again, even when the vector store fails.

use std::time::{Duration, Instant};

use concierge_e2e::api::{
    TURNS_UNTIL_EMBEDDED, create_conversation, eventually, more_turns, send, site_with_upstream,
    terminal,
};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::json;

use concierge_e2e::api::{error_code, search_results};

use super::{delete_document, put_document, wait_indexed};

/// Vectorize's limit on vector ids.
const VECTOR_ID_MAX_BYTES: usize = 64;

#[test]
fn a_forty_character_document_id_is_indexed_under_a_vectorize_sized_id() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Long id shop", &upstream.base_url, false);
    let id = "chinh-sach-bao-hanh-mo-rong.2026_v2-ABCD";
    assert_eq!(id.len(), 40, "the longest document id allowed");
    let (status, body) = put_document(
        worker,
        &site,
        id,
        "Bảo hành mở rộng",
        "Gói bảo hành mở rộng WOMBAT kéo dài thêm 24 tháng cho mọi laptop.",
    );
    assert_eq!(status, 201, "{body}");
    let listed = wait_indexed(worker, &site, id);
    assert_eq!(listed["chunk_count"], 1, "{listed}");
    let results = search_results(worker, &site, "bảo hành mở rộng WOMBAT", None);
    let found = results
        .iter()
        .find(|r| r["text"].as_str().is_some_and(|t| t.contains("WOMBAT")))
        .unwrap_or_else(|| panic!("the document is found: {results:?}"));
    let vector_id = found["id"].as_str().expect("vector id");
    assert!(
        vector_id.len() <= VECTOR_ID_MAX_BYTES,
        "vector id {vector_id:?} is {} bytes, over Vectorize's {VECTOR_ID_MAX_BYTES}",
        vector_id.len()
    );
}

#[test]
fn a_document_deleted_while_it_is_being_indexed_is_never_retrieved() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    // The deleted document's embedding is answered late: its indexing job is in flight
    // when the DELETE arrives (within the tests' 3 s upstream deadline).
    let delay = Duration::from_secs(2);
    upstream.delay_embeddings_containing("NUMBAT", delay);
    let site = site_with_upstream(worker, "Race shop", &upstream.base_url, false);
    let (status, body) = put_document(
        worker,
        &site,
        "gio-mo-cua-kho",
        "Kho",
        "Giờ mở cửa kho hàng KOALA: 9h đến 17h.",
    );
    assert_eq!(status, 201, "{body}");
    wait_indexed(worker, &site, "gio-mo-cua-kho");

    let (status, body) = put_document(
        worker,
        &site,
        "gio-mo-cua",
        "Giờ mở cửa",
        "Giờ mở cửa cửa hàng NUMBAT: 8h đến 21h mỗi ngày.",
    );
    assert_eq!(status, 201, "{body}");
    eventually(
        Duration::from_secs(30),
        "the document's embedding request",
        || {
            upstream.recorded().into_iter().find(|r| {
                r.path.ends_with("/embeddings") && r.body["input"].to_string().contains("NUMBAT")
            })
        },
    );
    let (status, body) = delete_document(worker, &site, "gio-mo-cua");
    assert_eq!(status, 204, "{body}");

    // The job finishes after the deletion; from then on, the text is never found.
    let finished = Instant::now() + delay + Duration::from_secs(3);
    std::thread::sleep(finished.saturating_duration_since(Instant::now()));
    let watch_until = Instant::now() + Duration::from_secs(4);
    loop {
        let results = search_results(worker, &site, "giờ mở cửa cửa hàng", None);
        assert!(
            results
                .iter()
                .any(|r| r["text"].as_str().is_some_and(|t| t.contains("KOALA"))),
            "search still finds the other document: {results:?}"
        );
        assert!(
            !results
                .iter()
                .any(|r| r["text"].as_str().is_some_and(|t| t.contains("NUMBAT"))),
            "the deleted document is retrieved: {results:?}"
        );
        if Instant::now() > watch_until {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        super::documents(worker, &site)
            .iter()
            .all(|d| d["id"] != "gio-mo-cua"),
        "the document stays deleted"
    );
}

/// Index one visitor message in a new conversation of `site` (grown past its history
/// window, where memory keeps what leaves it); returns the conversation.
fn remembered_conversation(
    worker: &Worker,
    site: &TestSite,
    upstream: &ScriptedUpstream,
) -> String {
    upstream.set_default(concierge_e2e::upstream::Reply::text("Dạ vâng ạ."));
    let (conversation, _) = create_conversation(worker, site, json!({}));
    let first = "Tôi muốn mua laptop màu periwinkle, giá bao nhiêu?";
    let (_, events) = send(worker, &site.secret_key, &conversation, first);
    assert_eq!(terminal(&events).0, "completed");
    more_turns(
        worker,
        &site.secret_key,
        &conversation,
        TURNS_UNTIL_EMBEDDED,
    );
    eventually(Duration::from_secs(30), "the message to be indexed", || {
        search_results(worker, site, "laptop periwinkle", Some(&conversation))
            .into_iter()
            .find(|r| r["text"].as_str().is_some_and(|t| t.contains("periwinkle")))
    });
    conversation
}

fn delete_conversation(worker: &Worker, site: &TestSite, conversation: &str) -> (u16, String) {
    into_parts(
        agent()
            .delete(&worker.url(&format!("/conversations/{conversation}")))
            .set("x-api-key", &site.secret_key)
            .call(),
    )
}

fn history_status(worker: &Worker, site: &TestSite, conversation: &str) -> (u16, String) {
    into_parts(
        agent()
            .get(&worker.url(&format!("/conversations/{conversation}/history")))
            .set("x-api-key", &site.secret_key)
            .call(),
    )
}

fn remembered(worker: &Worker, site: &TestSite, conversation: &str) -> bool {
    search_results(worker, site, "laptop periwinkle", Some(conversation))
        .iter()
        .any(|r| r["text"].as_str().is_some_and(|t| t.contains("periwinkle")))
}

#[test]
fn a_deleted_conversation_leaves_none_of_its_messages_retrievable() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Forget shop", &upstream.base_url, false);
    let conversation = remembered_conversation(worker, &site, &upstream);
    let (status, body) = delete_conversation(worker, &site, &conversation);
    assert_eq!(status, 204, "{body}");
    assert_eq!(history_status(worker, &site, &conversation).0, 404);
    assert!(
        !remembered(worker, &site, &conversation),
        "a deleted message is retrieved"
    );
}

/// A trigger in the site's object (where the local path keeps its vectors) that makes the
/// store refuse to delete the site's conversation vectors, while it is installed.
const FAULT_TRIGGER: &str = "CREATE TRIGGER test_vector_delete_fault BEFORE DELETE ON vectors \
     WHEN old.source = 'conversation' \
     BEGIN SELECT RAISE(ABORT, 'injected vector store fault'); END";

#[test]
fn a_failed_vector_delete_leaves_the_conversation_whole_and_deletable_again() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = site_with_upstream(worker, "Fault shop", &upstream.base_url, false);
    let conversation = remembered_conversation(worker, &site, &upstream);
    worker.site_rows(&site, FAULT_TRIGGER);

    // The vector store fails: the deletion is refused and nothing is lost.
    let (status, body) = delete_conversation(worker, &site, &conversation);
    assert!(
        status >= 500,
        "a failed deletion is an error: {status} {body}"
    );
    assert!(!error_code(&body).is_empty());
    let (status, body) = history_status(worker, &site, &conversation);
    assert_eq!(status, 200, "the conversation is still there: {body}");
    assert!(
        body.contains("periwinkle"),
        "its messages are still there: {body}"
    );
    assert!(
        remembered(worker, &site, &conversation),
        "its memory is still retrieved"
    );

    // The store recovers: deleting again works, and nothing of it is retrievable.
    worker.site_rows(&site, "DROP TRIGGER test_vector_delete_fault");
    let (status, body) = delete_conversation(worker, &site, &conversation);
    assert_eq!(status, 204, "{body}");
    assert_eq!(history_status(worker, &site, &conversation).0, 404);
    assert!(
        !remembered(worker, &site, &conversation),
        "a deleted message is retrieved"
    );
}
