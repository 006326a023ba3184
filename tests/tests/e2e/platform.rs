//! The platform path: the Rust Worker under real `wrangler dev` serves health, static
//! assets, JSON errors, and streams SSE incrementally through workerd.

use std::time::Duration;

use concierge_e2e::{Worker, agent, get, read_events};

#[test]
fn health_reports_version_and_bindings() {
    let worker = Worker::shared();
    let (status, body) = get(&worker.url("/health"));
    assert_eq!(status, 200, "{body}");
    let health: serde_json::Value = serde_json::from_str(&body).expect("health is JSON");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    if let Some(commit) = concierge_e2e::commit() {
        assert_eq!(
            health["commit"],
            commit.as_str(),
            "the commit it was started from"
        );
    }
    for binding in [
        "DB",
        "CONFIG",
        "ASSETS",
        "EMBED_QUEUE",
        "TURN_QUEUE",
        "VECTORIZE",
    ] {
        assert_eq!(
            health["bindings"][binding], true,
            "binding {binding} in {health}"
        );
    }
}

#[test]
fn every_response_carries_a_request_id() {
    let worker = Worker::shared();
    let response = agent()
        .get(&worker.url("/health"))
        .call()
        .expect("health answers");
    let id = response
        .header("x-request-id")
        .expect("x-request-id header");
    assert_eq!(id.len(), 32, "128-bit hex id, got {id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
}

#[test]
fn demo_page_and_widget_assets_are_served() {
    let worker = Worker::shared();
    let (status, page) = get(&worker.url("/"));
    assert_eq!(status, 200);
    assert!(
        page.contains(r#"<script src="/embed.js" data-site-key="#),
        "demo page embeds the widget with one tag"
    );
    let (status, loader) = get(&worker.url("/embed.js"));
    assert_eq!(status, 200);
    assert!(loader.contains("attachShadow"));
    let response = agent()
        .get(&worker.url("/widget/pkg/concierge_widget_bg.wasm"))
        .call()
        .expect("wasm served");
    assert_eq!(response.content_type(), "application/wasm");
}

#[test]
fn unknown_routes_get_a_json_error() {
    let worker = Worker::shared();
    let (status, body) = get(&worker.url("/no/such/route"));
    assert_eq!(status, 404);
    let error: serde_json::Value = serde_json::from_str(&body).expect("error is JSON");
    assert_eq!(error["error"]["code"], "not_found");
    assert!(error["error"]["message"].is_string());

    let (status, body) = concierge_e2e::into_parts(agent().post(&worker.url("/health")).call());
    assert_eq!(status, 405, "{body}");
    let (status, body) = get(&worker.url("/debug/stream?events=0"));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("bad_request"));
}

#[test]
fn sse_events_arrive_incrementally_through_workerd() {
    let worker = Worker::shared();
    let interval = Duration::from_millis(150);
    let response = agent()
        .get(&worker.url(&format!(
            "/debug/stream?events=6&interval_ms={}",
            interval.as_millis()
        )))
        .call()
        .expect("stream answers");
    assert_eq!(response.status(), 200);
    assert!(response.content_type().starts_with("text/event-stream"));
    assert_eq!(
        response.header("content-encoding"),
        None,
        "SSE must not be compressed"
    );
    let events = read_events(response.into_reader());

    assert_eq!(events.len(), 6, "{events:?}");
    for (seq, event) in events.iter().enumerate() {
        assert_eq!(event.event, "tick");
        assert_eq!(event.id.as_deref(), Some(seq.to_string().as_str()));
        let data: serde_json::Value = serde_json::from_str(&event.data).expect("tick data is JSON");
        assert_eq!(data["seq"], seq);
    }
    // Each event arrives at least about one interval after the previous one: delivered as
    // sent, not buffered into one chunk at the end. (No per-gap upper bound: a busy machine
    // — the e2e tests run Chromium and several Workers at once — can stall one delivery for
    // most of a second without anything being buffered; the whole stream still has a
    // generous deadline.)
    let gaps: Vec<Duration> = events
        .windows(2)
        .map(|w| w[1].arrived - w[0].arrived)
        .collect();
    eprintln!("SSE inter-arrival gaps: {gaps:?}");
    for gap in &gaps {
        assert!(
            *gap >= interval / 2,
            "events bunched together: gaps {gaps:?}"
        );
    }
    let spread = events[5].arrived - events[0].arrived;
    assert!(
        spread >= interval * 4,
        "all events arrived within {spread:?}"
    );
    assert!(
        spread <= interval * 5 + Duration::from_secs(5),
        "the stream took {spread:?}: gaps {gaps:?}"
    );
}
