//! Issue 30: retrieval through both backends. Every scenario runs twice — `local` (the
//! fallback `wrangler dev` and the other tests use: the site's vectors in its object) and `vectorize` (the production code
//! path, `RETRIEVAL_BACKEND=vectorize`, against the local Vectorize double of
//! tests/doubles/vectorize/, bound as `VECTORIZE` in the same `wrangler dev` session; its
//! writes become visible only after a delay, as the service's do). Sites embed at the
//! production index's 1024 dimensions.
//!
//! The shop's RAG answer, `knowledge`'s permission scopes (a private document never
//! reaches a public caller, even while it is being re-indexed), document update and
//! delete (the vectors follow), idempotent re-indexing, cross-site isolation, and the
//! limits the Worker refuses itself rather than leaving them to production.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use concierge_e2e::api::{create_conversation, eventually, search_results, send, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

use crate::knowledge::{FINAL, RAG, ROUTER, one_task_plan};

/// The production index's dimensions (scripts/vectorize-setup.sh: bge-m3).
const DIMENSIONS: u32 = 1024;

/// How long a write may take to be indexed and become visible.
const VISIBLE: Duration = Duration::from_secs(60);

/// Runs scenario `$name` once per backend: `$name::local`, `$name::vectorize`.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use concierge_e2e::Worker;

            #[test]
            fn local() {
                super::$name(Worker::shared());
            }

            #[test]
            fn vectorize() {
                super::$name(Worker::shared_vectorize());
            }
        }
    )*};
}

on_both_backends!(
    shop_answers_from_retrieved_knowledge,
    private_documents_never_reach_a_public_caller,
    a_document_made_private_leaves_public_answers_at_once,
    updated_and_deleted_documents_take_their_vectors_with_them,
    reindexing_is_idempotent_and_drops_stale_chunks,
    sites_never_see_each_others_vectors,
    a_chunk_over_the_metadata_limit_fails_its_document_clearly,
);

fn llm(upstream: &ScriptedUpstream) -> Value {
    json!({"provider": "openai", "base_url": format!("{}/v1", upstream.base_url),
        "model": "scripted", "embed_model": "scripted-embed", "embed_dimensions": DIMENSIONS})
}

fn shop_site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> TestSite {
    worker.create_site(
        json!({"name": name, "allowed_origins": ["https://shop.example"],
        "llm": llm(upstream)}),
    )
}

fn knowledge_site(worker: &Worker, upstream: &ScriptedUpstream) -> TestSite {
    let site = shop_site(worker, upstream, "Knowledge backends");
    let (status, body) = admin(
        worker,
        &site,
        "PATCH",
        "/admin/site",
        json!({"template": "knowledge", "knowledge": {"workflow": {"min_relevance_score": 0.0}}}),
    );
    assert_eq!(status, 200, "{body}");
    site
}

fn admin(worker: &Worker, site: &TestSite, method: &str, path: &str, body: Value) -> (u16, String) {
    into_parts(
        agent()
            .request(method, &worker.url(path))
            .set("x-api-key", &site.secret_key)
            .send_json(body),
    )
}

fn put(worker: &Worker, site: &TestSite, id: &str, body: Value) {
    let (status, text) = admin(worker, site, "PUT", &format!("/admin/knowledge/{id}"), body);
    assert!(status == 201 || status == 200, "PUT {id}: {status} {text}");
}

fn document(worker: &Worker, site: &TestSite, id: &str) -> Value {
    let (status, text) = into_parts(
        agent()
            .get(&worker.url("/admin/knowledge"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{text}");
    let list: Value = serde_json::from_str(&text).unwrap();
    list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits until document `id`'s indexing has finished with `status` (`done`, `failed`).
fn wait_status(worker: &Worker, site: &TestSite, id: &str, status: &str) -> Value {
    eventually(VISIBLE, &format!("{id} index_status {status}"), || {
        let doc = document(worker, site, id);
        (doc["index_status"] == status).then_some(doc)
    })
}

/// `POST /admin/search` until `check` holds for the results (writes are eventually
/// visible on Vectorize).
fn search_until(
    worker: &Worker,
    site: &TestSite,
    query: &str,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    eventually(VISIBLE, what, || {
        let results = search_results(worker, site, query, None);
        check(&results).then_some(results)
    })
}

fn texts(results: &[Value]) -> String {
    results
        .iter()
        .map(|r| r["text"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn shop_answers_from_retrieved_knowledge(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "RAG shop");
    put(
        worker,
        &site,
        "doi-tra",
        json!({"title": "Đổi trả", "content":
            "Chính sách đổi trả: sản phẩm lỗi được đổi mới trong 30 ngày, mã chính sách ZEPHYR-30."}),
    );
    wait_status(worker, &site, "doi-tra", "done");
    search_until(
        worker,
        &site,
        "đổi trả sản phẩm lỗi",
        "the policy visible",
        |r| texts(r).contains("ZEPHYR-30"),
    );
    upstream.push(Reply::text(
        "Dạ, sản phẩm lỗi được đổi mới trong 30 ngày ạ.",
    ));
    let (conversation, _) = create_conversation(worker, &site, json!({}));
    let (_, events) = send(
        worker,
        &site.secret_key,
        &conversation,
        "Giá đổi trả sản phẩm lỗi thế nào, mua rồi có được đổi không?",
    );
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let requests = upstream.chat_requests();
    assert_eq!(requests.len(), 1);
    let prompt = requests[0].body["messages"].to_string();
    assert!(
        prompt.contains("ZEPHYR-30"),
        "the retrieved passage is in the prompt: {prompt}"
    );
}

/// `POST /knowledge/query` (the seed's direct interface) as `user_context` (none: a
/// public caller): the evidence's document ids and the RAG prompt the model saw.
fn knowledge_query(
    worker: &Worker,
    site: &TestSite,
    upstream: &ScriptedUpstream,
    question: &str,
    user_context: Option<Value>,
) -> (Vec<String>, String) {
    upstream.push_for(
        ROUTER,
        Reply::text(&one_task_plan("hr", "rag_tool", question)),
    );
    upstream.push_for(RAG, Reply::text("Theo tài liệu."));
    upstream.push_for(
        FINAL,
        Reply::text("Câu trả lời.\n---END\nREASONING: \"x\"\nFOLLOW_UP: []"),
    );
    let before = upstream.chat_requests().len();
    let mut input = json!({"query": question});
    if let Some(user) = user_context {
        input["user_context"] = user;
    }
    let (status, body) = admin(worker, site, "POST", "/knowledge/query", input);
    assert_eq!(status, 200, "{body}");
    let output: Value = serde_json::from_str(&body).unwrap();
    let ids = output["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["document_id"].as_str().unwrap().to_string())
        .collect();
    let prompts = upstream.chat_requests()[before..]
        .iter()
        .map(|r| r.body["messages"].to_string())
        .filter(|p| p.contains(RAG))
        .collect::<Vec<_>>()
        .join("\n");
    (ids, prompts)
}

fn hr_document(worker: &Worker, site: &TestSite, id: &str, content: &str, scope: &str) {
    put(
        worker,
        site,
        id,
        json!({"title": id, "content": content, "scope": scope, "department": "hr"}),
    );
}

fn private_documents_never_reach_a_public_caller(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream);
    let question = "đi muộn ảnh hưởng công việc quy định công ty";
    hr_document(
        worker,
        &site,
        "rule-public",
        "Đi muộn ảnh hưởng công việc quy định công ty: nhắc nhở PUBLIC-101",
        "public",
    );
    hr_document(
        worker,
        &site,
        "rule-internal",
        "Đi muộn ảnh hưởng công việc quy định công ty: khiển trách INTERNAL-202",
        "internal",
    );
    hr_document(
        worker,
        &site,
        "rule-private",
        "Đi muộn ảnh hưởng công việc quy định công ty: trừ KPI PRIVATE-303",
        "private",
    );
    for id in ["rule-public", "rule-internal", "rule-private"] {
        wait_status(worker, &site, id, "done");
    }
    search_until(worker, &site, question, "all three visible", |r| {
        r.len() == 3
    });

    let (ids, prompt) = knowledge_query(worker, &site, &upstream, question, None);
    assert_eq!(ids, ["rule-public"], "a public caller's evidence");
    assert!(prompt.contains("PUBLIC-101"), "{prompt}");
    assert!(
        !prompt.contains("INTERNAL-202") && !prompt.contains("PRIVATE-303"),
        "{prompt}"
    );

    let hr = json!({"user_id": "u-hr", "permissions": ["private"], "department": "hr"});
    let (mut ids, prompt) = knowledge_query(worker, &site, &upstream, question, Some(hr));
    ids.sort();
    assert_eq!(
        ids,
        ["rule-private", "rule-public"],
        "an HR caller with `private`"
    );
    assert!(!prompt.contains("INTERNAL-202"), "{prompt}");
}

/// A merchant makes a public document private: from that moment no public answer uses
/// it — not its new text, and not the old one its vectors still carry until it is
/// re-indexed (the queue's wait, and on Vectorize the write's own delay).
fn a_document_made_private_leaves_public_answers_at_once(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let site = knowledge_site(worker, &upstream);
    let question = "đi muộn ảnh hưởng công việc quy định công ty";
    hr_document(
        worker,
        &site,
        "rule",
        "Đi muộn ảnh hưởng công việc quy định công ty: mức phạt KILO-404",
        "public",
    );
    wait_status(worker, &site, "rule", "done");
    search_until(worker, &site, question, "the public rule visible", |r| {
        texts(r).contains("KILO-404")
    });
    let (ids, _) = knowledge_query(worker, &site, &upstream, question, None);
    assert_eq!(ids, ["rule"]);

    hr_document(
        worker,
        &site,
        "rule",
        "Đi muộn ảnh hưởng công việc quy định công ty: mức phạt LIMA-505",
        "private",
    );
    let (ids, prompt) = knowledge_query(worker, &site, &upstream, question, None);
    assert!(
        ids.is_empty(),
        "a private document in public evidence: {ids:?}"
    );
    assert!(
        !prompt.contains("KILO-404") && !prompt.contains("LIMA-505"),
        "{prompt}"
    );
    wait_status(worker, &site, "rule", "done");
    let hr = json!({"user_id": "u-hr", "permissions": ["private"], "department": "hr"});
    // A new wording each time: an answer without the new text is not served from the cache.
    let mut attempt = 0;
    let (ids, prompt) = eventually(VISIBLE, "the new text for HR", || {
        attempt += 1;
        let asked = format!("{question} lần {attempt}");
        let (ids, prompt) = knowledge_query(worker, &site, &upstream, &asked, Some(hr.clone()));
        prompt.contains("LIMA-505").then_some((ids, prompt))
    });
    assert_eq!(ids, ["rule"]);
    assert!(!prompt.contains("KILO-404"), "{prompt}");
    let (ids, _) = knowledge_query(worker, &site, &upstream, question, None);
    assert!(ids.is_empty(), "{ids:?}");
}

fn updated_and_deleted_documents_take_their_vectors_with_them(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Update shop");
    let query = "chính sách bảo hành máy";
    put(
        worker,
        &site,
        "bao-hanh",
        json!({"title": "Bảo hành", "content": "Chính sách bảo hành máy: 12 tháng, mã ALPHA-111."}),
    );
    wait_status(worker, &site, "bao-hanh", "done");
    search_until(worker, &site, query, "the first version", |r| {
        texts(r).contains("ALPHA-111")
    });

    put(
        worker,
        &site,
        "bao-hanh",
        json!({"title": "Bảo hành", "content": "Chính sách bảo hành máy: 24 tháng, mã BRAVO-222."}),
    );
    wait_status(worker, &site, "bao-hanh", "done");
    let results = search_until(worker, &site, query, "the second version only", |r| {
        texts(r).contains("BRAVO-222") && !texts(r).contains("ALPHA-111")
    });
    assert_eq!(results.len(), 1, "{results:?}");

    let (status, body) = admin(
        worker,
        &site,
        "DELETE",
        "/admin/knowledge/bao-hanh",
        json!({}),
    );
    assert!(status == 200 || status == 204, "{status} {body}");
    // Deleted content is never retrieved, even before the index has applied the deletion.
    let results = search_results(worker, &site, query, None);
    assert!(results.is_empty(), "right after the delete: {results:?}");
    std::thread::sleep(Duration::from_secs(3));
    let results = search_results(worker, &site, query, None);
    assert!(results.is_empty(), "after the delete: {results:?}");
}

fn reindexing_is_idempotent_and_drops_stale_chunks(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Reindex shop");
    let long = format!("{} mã ECHO-555", "bảo hành đổi trả giao hàng ".repeat(50));
    let query = "bảo hành đổi trả giao hàng ECHO-555";
    // Indexed, put again unchanged, then re-indexed on request: one vector per chunk.
    for round in 0..3 {
        if round < 2 {
            put(
                worker,
                &site,
                "dai",
                json!({"title": "Dài", "content": long}),
            );
        } else {
            let (status, body) = admin(worker, &site, "POST", "/admin/index?id=dai", json!({}));
            assert!((200..300).contains(&status), "{status} {body}");
        }
        let doc = wait_status(worker, &site, "dai", "done");
        assert_eq!(doc["chunk_count"], 2, "round {round}: {doc}");
        let results = search_until(worker, &site, query, "both chunks", |r| r.len() == 2);
        let mut ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(
            ids.len(),
            2,
            "round {round}: one vector per chunk: {results:?}"
        );
    }
    put(
        worker,
        &site,
        "dai",
        json!({"title": "Dài", "content": "bảo hành đổi trả giao hàng ngắn FOXTROT-666"}),
    );
    let doc = wait_status(worker, &site, "dai", "done");
    assert_eq!(doc["chunk_count"], 1, "{doc}");
    let results = search_until(worker, &site, query, "the stale chunk gone", |r| {
        r.len() == 1 && texts(r).contains("FOXTROT-666")
    });
    assert!(
        results[0]["id"].as_str().unwrap().ends_with("#chunk_0"),
        "{results:?}"
    );
}

fn sites_never_see_each_others_vectors(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let a = shop_site(worker, &upstream, "Site A");
    let b = shop_site(worker, &upstream, "Site B");
    let query = "giờ mở cửa cửa hàng";
    put(
        worker,
        &a,
        "faq",
        json!({"title": "FAQ", "content": "Giờ mở cửa cửa hàng: 8h-21h, mã SITEA-777."}),
    );
    put(
        worker,
        &b,
        "faq",
        json!({"title": "FAQ", "content": "Giờ mở cửa cửa hàng: 9h-18h, mã SITEB-888."}),
    );
    wait_status(worker, &a, "faq", "done");
    wait_status(worker, &b, "faq", "done");
    let on_a = search_until(worker, &a, query, "site A's faq", |r| !r.is_empty());
    let on_b = search_until(worker, &b, query, "site B's faq", |r| !r.is_empty());
    assert!(
        texts(&on_a).contains("SITEA-777") && !texts(&on_a).contains("SITEB"),
        "{on_a:?}"
    );
    assert!(
        texts(&on_b).contains("SITEB-888") && !texts(&on_b).contains("SITEA"),
        "{on_b:?}"
    );
    // Deleting one site's document leaves the other's.
    let (status, _) = admin(worker, &a, "DELETE", "/admin/knowledge/faq", json!({}));
    assert!(status == 200 || status == 204);
    std::thread::sleep(Duration::from_secs(2));
    assert!(search_results(worker, &a, query, None).is_empty());
    assert!(texts(&search_results(worker, &b, query, None)).contains("SITEB-888"));
}

/// Issue 47: each site's vectors are in a space of its own — its Vectorize namespace, or
/// (here, the local path) its own object — so a query of site A never reads site B's
/// vectors, even one whose metadata claims site A and names a document A has: the
/// `site_id` filter alone would let it through. (The Vectorize double's namespaces are
/// held to the same in tests/doubles/vectorize/test/.)
#[test]
fn a_sites_query_never_reads_another_sites_vectors_even_matching_its_filter() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let a = shop_site(worker, &upstream, "Space A");
    let b = shop_site(worker, &upstream, "Space B");
    let query = "giờ mở cửa cửa hàng";
    put(
        worker,
        &a,
        "faq",
        json!({"title": "FAQ", "content": "Giờ mở cửa cửa hàng: 8h-21h, mã SPACEA-123."}),
    );
    put(
        worker,
        &b,
        "faq",
        json!({"title": "FAQ", "content": "Giờ mở cửa cửa hàng: 9h-18h, mã SPACEB-456."}),
    );
    wait_status(worker, &a, "faq", "done");
    wait_status(worker, &b, "faq", "done");
    // B's vectors now claim site A, for a document A has, with A's access.
    let forged = worker.site_rows(
        &b,
        &format!(
            "UPDATE vectors SET metadata = json_set(metadata, '$.site_id', '{}') \
             WHERE source = 'knowledge' RETURNING id",
            a.id
        ),
    );
    assert!(!forged.is_empty(), "B's document has vectors in B's object");
    let on_a = search_until(worker, &a, query, "site A's faq", |r| !r.is_empty());
    assert!(
        texts(&on_a).contains("SPACEA-123") && !texts(&on_a).contains("SPACEB"),
        "{on_a:?}"
    );
    // Nor are they B's any more: the filter still holds within B's own space.
    let on_b = search_results(worker, &b, query, None);
    assert!(!texts(&on_b).contains("SPACEB"), "{on_b:?}");
    // A's own vectors are in A's object, none in B's.
    let own = |site: &TestSite| {
        worker
            .site_rows(site, "SELECT id FROM vectors WHERE source = 'knowledge'")
            .len()
    };
    assert!(own(&a) > 0);
    assert_eq!(
        own(&b),
        forged.len(),
        "B's object holds only B's own vectors"
    );
}

/// Vectors an older version kept in the shared D1 (`local_vectors`, the local path's table,
/// in both of its vector encodings) move to their site's object on its first call, with
/// the columns a query filters on, and leave D1; another site's stay there until its own
/// object's first call.
#[test]
fn local_vectors_kept_in_d1_by_an_older_version_are_imported_by_the_site_object() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Older vectors");
    let other = shop_site(worker, &upstream, "Older vectors, other");
    let row = |site: &TestSite, id: &str, source: &str, vector: &str| {
        let metadata = json!({"site_id": site.id, "source": source, "document_id": "faq",
            "conversation_id": "c1", "scope": "private", "department": "hr", "text": "x"});
        format!(
            "('{id}', '{}', '{source}', 'c1', '{metadata}', '{vector}', 'private', 'hr')",
            site.id
        )
    };
    worker.d1_rows(&format!(
        "INSERT INTO local_vectors \
         (id, site_id, source, conversation_id, metadata, vector, scope, department) VALUES {}",
        [
            row(&site, "old-json", "knowledge", "[0.5,0.25]"),
            row(&site, "old-base64", "conversation", "AACAPwAAAEA="),
            row(&other, "other-site", "knowledge", "[1,0]"),
        ]
        .join(", ")
    ));
    let imported = worker.site_rows(
        &site,
        "SELECT id, source, conversation_id, scope, department, \
         json_extract(metadata, '$.document_id') AS document, vector FROM vectors ORDER BY id",
    );
    assert_eq!(
        imported,
        vec![
            json!({"id": "old-base64", "source": "conversation", "conversation_id": "c1",
                "scope": "private", "department": "hr", "document": "faq",
                "vector": "AACAPwAAAEA="}),
            json!({"id": "old-json", "source": "knowledge", "conversation_id": "c1",
                "scope": "private", "department": "hr", "document": "faq",
                "vector": "[0.5,0.25]"}),
        ]
    );
    let left = |site: &TestSite| {
        worker
            .d1_rows(&format!(
                "SELECT id FROM local_vectors WHERE site_id = '{}'",
                site.id
            ))
            .len()
    };
    assert_eq!(left(&site), 0, "imported, then deleted from the shared D1");
    assert_eq!(
        left(&other),
        1,
        "another site's rows wait for its own object"
    );
}

/// Vectorize stores at most 10 KiB of metadata per vector, and a chunk's text is in its
/// metadata: a text without spaces (one "word", however long) makes a chunk over it.
/// Both backends refuse it (the document fails to index) instead of the local one
/// accepting what production would refuse.
fn a_chunk_over_the_metadata_limit_fails_its_document_clearly(worker: &Worker) {
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Big chunk shop");
    put(
        worker,
        &site,
        "big",
        json!({"title": "Big", "content": "x".repeat(12_000)}),
    );
    wait_status(worker, &site, "big", "failed");
    put(
        worker,
        &site,
        "small",
        json!({"title": "Small", "content": "vừa đủ nhỏ GOLF-999"}),
    );
    wait_status(worker, &site, "small", "done");
}

/// A site's embedding dimensions above Vectorize's 1536 are refused when they are set,
/// not by the index at the first write.
#[test]
fn embedding_dimensions_above_the_index_limit_are_refused() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = shop_site(worker, &upstream, "Dimensions shop");
    let mut settings = llm(&upstream);
    for (dimensions, expected) in [(1537, 400), (0, 400), (1536, 200), (768, 200)] {
        settings["embed_dimensions"] = dimensions.into();
        let (status, body) = admin(
            worker,
            &site,
            "PATCH",
            "/admin/site",
            json!({"llm": settings}),
        );
        assert_eq!(status, expected, "{dimensions}: {body}");
        if expected == 400 {
            assert!(body.contains("embed_dimensions"), "{body}");
        }
    }
}

/// `RETRIEVAL=vectorize-double make dev`: the Worker runs the Vectorize code path against
/// the local double; "Concierge is running" means the demo knowledge bases were indexed
/// through it and are found by a search (scripts/seed-demo.mjs checks), and they are.
#[test]
fn make_dev_runs_retrieval_against_the_vectorize_double_on_request() {
    use concierge_e2e::{free_port, repo_root, scratch_dir, supervise_command};
    let upstream = ScriptedUpstream::start();
    let dir = scratch_dir("make-dev-vectorize");
    let port = free_port();
    let log = dir.join("dev.log");
    let command: Vec<String> = [
        "env".to_string(),
        format!("PORT={port}"),
        format!("CONCIERGE_STATE_DIR={}", dir.join("state").display()),
        format!("LLM_BASE_URL={}/v1", upstream.base_url),
        "RETRIEVAL=vectorize-double".to_string(),
        // The scripted embeddings endpoint answers 64 dimensions unless asked for others.
        "VECTORIZE_DOUBLE_DIMENSIONS=64".to_string(),
        "sh".to_string(),
        repo_root().join("scripts/dev.sh").display().to_string(),
    ]
    .into();
    let mut dev = supervise_command(&command, &log);
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    eventually(Duration::from_secs(400), "make dev to be running", || {
        let text = read_log();
        assert!(!text.contains("make dev failed"), "{text}");
        text.contains("Concierge is running").then_some(())
    });
    let text = read_log();
    assert!(
        text.contains("against the local Vectorize double"),
        "{text}"
    );
    let wrangler =
        std::fs::read_to_string(repo_root().join(format!("target/dev-logs/{port}/wrangler.log")))
            .unwrap_or_default();
    assert!(
        wrangler.contains("env.VECTORIZE (concierge-vectorize-double)"),
        "{wrangler}"
    );
    let (status, body) = into_parts(
        agent()
            .post(&format!("http://127.0.0.1:{port}/admin/search"))
            .set("x-api-key", "sk_kb_demo_local_only")
            .send_json(json!({"query": "đi muộn"})),
    );
    assert_eq!(status, 200, "{body}");
    let found: Value = serde_json::from_str(&body).unwrap();
    assert!(!found["results"].as_array().unwrap().is_empty(), "{body}");
    drop(dev.stdin.take());
    let _ = dev.wait();
}
