//! A `csv_url` import under `DEV_MODE` (loopback http allowed): every redirect hop is
//! checked against the outbound rule (and at most 3 are followed), no credentials go
//! out, the whole import answers within 10 s, and a body over the 32 MB cap is refused
//! without reading it all.

use std::time::{Duration, Instant};

use concierge_e2e::api::error_code;
use concierge_e2e::upstream::{Page, ScriptedWeb};
use concierge_e2e::{TestSite, Worker};
use serde_json::{Value, json};

use super::{get_data, import, message};

const SECRET_CSV: &str = "name,value\nadmin_password,hunter2\n";
const DATA_CSV: &str = "ngay,doanh_thu\n1/1/2024,100\n2/1/2024,200\n";
const CAP: usize = 32 * 1024 * 1024;

fn site(worker: &Worker, name: &str) -> TestSite {
    worker.create_site(json!({ "name": name }))
}

#[test]
fn csv_url_redirects_are_checked_at_every_hop_and_at_most_three_are_followed() {
    let worker = Worker::shared();
    let site = site(worker, "Redirect import");
    let web = ScriptedWeb::start();
    let port = web.port;
    web.page("/secret.csv", Page::Body(SECRET_CSV.into()))
        .page("/data.csv", Page::Body(DATA_CSV.into()))
        // 0.0.0.0 reaches this host's loopback services: never a loopback host by name.
        .page(
            "/to-any",
            Page::Redirect(format!("http://0.0.0.0:{port}/secret.csv")),
        )
        .page(
            "/to-credentials",
            Page::Redirect(format!("http://admin:hunter2@127.0.0.1:{port}/secret.csv")),
        )
        .page(
            "/to-private",
            Page::Redirect("http://10.255.255.1/secret.csv".into()),
        )
        .page("/to-file", Page::Redirect("file:///etc/passwd".into()))
        .page("/r1", Page::Redirect("/r2".into()))
        .page("/r2", Page::Redirect(format!("{}/data.csv", web.base_url)))
        .page("/h1", Page::Redirect("/h2".into()))
        .page("/h2", Page::Redirect("/h3".into()))
        .page("/h3", Page::Redirect("/h4".into()))
        .page("/h4", Page::Redirect("/data.csv".into()));

    for path in ["/to-any", "/to-credentials", "/to-private", "/to-file"] {
        let started = Instant::now();
        let (status, body) = import(worker, &site, "x", &format!("{}{path}", web.base_url));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{path}: {body}"
        );
        assert!(message(&body).contains("csv_url"), "{path}: {body}");
        assert!(started.elapsed() < Duration::from_secs(5), "{path}");
    }
    // The same targets given directly.
    for url in [
        format!("http://0.0.0.0:{port}/secret.csv"),
        format!("http://admin:hunter2@127.0.0.1:{port}/secret.csv"),
    ] {
        let (status, body) = import(worker, &site, "x", &url);
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{url}: {body}"
        );
    }
    assert_eq!(web.hits("/secret.csv"), 0, "{:?}", web.requests());
    let (status, body) = get_data(worker, &site, "x");
    assert_eq!(status, 404, "{body}");

    // Four redirects: three are followed (to /h4), the fourth is refused.
    let (status, body) = import(worker, &site, "x", &format!("{}/h1", web.base_url));
    assert_eq!(
        (status, error_code(&body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    assert!(message(&body).contains("redirect"), "{body}");
    assert_eq!(web.hits("/h4"), 1);
    assert_eq!(web.hits("/data.csv"), 0);

    // Two redirects within the rule: imported.
    let (status, body) = import(worker, &site, "ok", &format!("{}/r1", web.base_url));
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(listed["row_count"], 2, "{body}");
    // No credentials or cookies of ours went out.
    for request in web.requests() {
        for (name, _) in &request.headers {
            assert!(
                !["authorization", "cookie", "x-api-key"].contains(&name.as_str()),
                "{} carried {name}",
                request.path
            );
        }
    }
}

#[test]
fn csv_url_imports_answer_within_10_seconds_however_slow_the_server() {
    let worker = Worker::shared();
    let site = site(worker, "Slow import");
    let web = ScriptedWeb::start();
    web.page("/silent.csv", Page::Stall(Duration::from_secs(40)))
        .page(
            "/trickle.csv",
            Page::Trickle {
                every: Duration::from_millis(500),
                count: 80,
            },
        );
    let runs: Vec<_> = ["/silent.csv", "/trickle.csv"]
        .into_iter()
        .map(|path| {
            let url = format!("{}{path}", web.base_url);
            let worker_url = worker.base_url.clone();
            let key = site.secret_key.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let (status, body) = concierge_e2e::into_parts(
                    concierge_e2e::agent()
                        .put(&format!("{worker_url}/admin/data/slow"))
                        .set("x-api-key", &key)
                        .send_json(json!({"user_id": "owner", "csv_url": url})),
                );
                (path, status, body, started.elapsed())
            })
        })
        .collect();
    for run in runs {
        let (path, status, body, elapsed) = run.join().expect("import thread");
        assert!(
            elapsed < Duration::from_secs(13),
            "{path} answered after {elapsed:?}: {status} {body}"
        );
        assert_eq!(
            (status, error_code(&body).as_str()),
            (400, "bad_request"),
            "{path}: {body}"
        );
        assert!(message(&body).contains("10 s"), "{path}: {body}");
    }
    let (status, _) = get_data(worker, &site, "slow");
    assert_eq!(status, 404);
}

#[test]
fn csv_url_bodies_over_the_cap_are_refused_without_reading_them_all() {
    let worker = Worker::shared();
    let site = site(worker, "Huge import");
    let web = ScriptedWeb::start();
    // Far over the cap: what the Worker reads up to the cap, plus what the two kernels'
    // socket buffers take in before the connection closes (up to 32 MB + 4 MB on Linux's
    // defaults), stays well under half of it.
    let size = 8 * CAP;
    web.page(
        "/announced.csv",
        Page::Huge {
            size,
            announced: true,
        },
    )
    .page(
        "/chunked.csv",
        Page::Huge {
            size,
            announced: false,
        },
    );
    for path in ["/announced.csv", "/chunked.csv"] {
        let (status, body) = import(worker, &site, "huge", &format!("{}{path}", web.base_url));
        assert_eq!(
            (status, error_code(&body).as_str()),
            (413, "payload_too_large"),
            "{path}: {body}"
        );
        // Give the server a moment to notice the closed connection.
        std::thread::sleep(Duration::from_millis(500));
        let sent = web.bytes_sent(path);
        assert!(
            sent < size / 2,
            "{path}: the Worker read {sent} of the {size} bytes of a body over the cap"
        );
        if path == "/announced.csv" {
            // Refused on its Content-Length: nowhere near the cap was read.
            assert!(sent < CAP / 2, "{path}: {sent} bytes were sent");
        }
    }
    let (status, _) = get_data(worker, &site, "huge");
    assert_eq!(status, 404);
}
