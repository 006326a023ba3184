//! Issue 10, data hardening, through the real Worker: retrieved text reaches the model only
//! as quoted data (`prompt`), deleted content is never retrieved again and every document
//! id gets a Vectorize-sized vector id (`vectors`), and the input rules for user ids,
//! warranty records and request bodies (`inputs`).

mod inputs;
mod prompt;
mod vectors;

use std::time::Duration;

use concierge_e2e::api::eventually;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

/// `PUT /admin/knowledge/{id}`: status and body.
fn put_document(
    worker: &Worker,
    site: &TestSite,
    id: &str,
    title: &str,
    content: &str,
) -> (u16, String) {
    into_parts(
        agent()
            .put(&worker.url(&format!("/admin/knowledge/{id}")))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"title": title, "content": content})),
    )
}

/// `DELETE /admin/knowledge/{id}`: status and body.
fn delete_document(worker: &Worker, site: &TestSite, id: &str) -> (u16, String) {
    into_parts(
        agent()
            .delete(&worker.url(&format!("/admin/knowledge/{id}")))
            .set("x-api-key", &site.secret_key)
            .call(),
    )
}

/// The site's documents as `GET /admin/knowledge` lists them.
fn documents(worker: &Worker, site: &TestSite) -> Vec<Value> {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/knowledge"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "list: {body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    json["documents"].as_array().cloned().unwrap_or_default()
}

/// Wait until document `id` is listed as indexed (`index_status: done`).
fn wait_indexed(worker: &Worker, site: &TestSite, id: &str) -> Value {
    eventually(
        Duration::from_secs(30),
        "the document to be indexed",
        || {
            documents(worker, site)
                .into_iter()
                .find(|d| d["id"] == id && d["index_status"] == "done")
        },
    )
}
