//! A merchant's page on its own origin, for the widget's browser tests.
//!
//! [`HostPage`] serves one HTML page at `/` from a loopback port of its own (so the page is
//! cross-origin to the Worker, as on a real shop), with any extra response headers — a
//! strict `Content-Security-Policy`, for instance. Everything else is 404. The port is
//! bound first, so a test can list the page's origin in a site before writing the page
//! with that site's key.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use crate::{Worker, repo_root};

/// The one tag on the demo page (`www/index.html`), exactly as a merchant pastes it.
pub const DEMO_TAG: &str = r#"<script src="/embed.js" data-site-key="pk_demo" async></script>"#;

type Content = Arc<Mutex<(String, Vec<(String, String)>)>>;

/// A page served on `127.0.0.1:<port>` until the process exits.
#[derive(Debug, Clone)]
pub struct HostPage {
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    /// The page: `origin` + `/`.
    pub url: String,
    content: Content,
}

impl HostPage {
    /// Listen on a free port; the page is empty until [`set`](Self::set).
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind host page");
        let origin = format!(
            "http://127.0.0.1:{}",
            listener.local_addr().expect("local addr").port()
        );
        let content: Content = Arc::default();
        let shared = Arc::clone(&content);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let content = Arc::clone(&shared);
                thread::spawn(move || {
                    let mut reader = BufReader::new(&stream);
                    let mut request_line = String::new();
                    let _ = reader.read_line(&mut request_line);
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let (html, headers) = content
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .clone();
                    // The page at `/`, with or without a query (`/?ref=…`: the page a
                    // visitor is on, issue 45).
                    let found =
                        request_line.starts_with("GET / ") || request_line.starts_with("GET /?");
                    let (status, body) = if found {
                        ("200 OK", html.as_str())
                    } else {
                        ("404 Not Found", "not found")
                    };
                    let mut response = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n",
                        body.len()
                    );
                    for (name, value) in headers.iter().filter(|_| found) {
                        response.push_str(&format!("{name}: {value}\r\n"));
                    }
                    response.push_str("\r\n");
                    response.push_str(body);
                    let _ = (&stream).write_all(response.as_bytes());
                });
            }
        });
        Self {
            url: format!("{origin}/"),
            origin,
            content,
        }
    }

    /// Serve `html` at `/`, with `headers` added to the response.
    pub fn set(&self, html: String, headers: Vec<(String, String)>) {
        *self.content.lock().unwrap_or_else(PoisonError::into_inner) = (html, headers);
    }

    /// Serve the demo shop page (`www/index.html`) with its one tag pointing at `worker`'s
    /// `embed.js` and `site_key`: what a merchant's page looks like.
    pub fn show_demo(&self, worker: &Worker, site_key: &str) {
        let page = std::fs::read_to_string(repo_root().join("www/index.html"))
            .expect("read www/index.html");
        assert!(page.contains(DEMO_TAG), "the demo page carries the one tag");
        self.set(
            page.replace(DEMO_TAG, &embed_tag(worker, site_key)),
            Vec::new(),
        );
    }

    /// Serve a plain page (no inline script or style of its own) with
    /// `Content-Security-Policy: default-src 'self'; script-src 'self' <worker>; frame-src <worker>`.
    pub fn show_strict_csp(&self, worker: &Worker, site_key: &str) {
        let html = format!(
            "<!doctype html>\n<html lang=\"vi\"><head><meta charset=\"utf-8\"><title>Cửa hàng (CSP)</title></head>\n\
             <body><h1>Cửa hàng có CSP nghiêm ngặt</h1><p>Không có 'wasm-unsafe-eval', không có style nội tuyến.</p>\n{}\n</body></html>\n",
            embed_tag(worker, site_key)
        );
        let csp = format!(
            "default-src 'self'; script-src 'self' {0}; frame-src {0}",
            worker.base_url
        );
        self.set(html, vec![("content-security-policy".into(), csp)]);
    }
}

/// `<script src="<worker>/embed.js" data-site-key="…" async></script>`.
pub fn embed_tag(worker: &Worker, site_key: &str) -> String {
    embed_tag_with(worker, site_key, "")
}

/// [`embed_tag`] with more attributes (`data-position="left" …`).
pub fn embed_tag_with(worker: &Worker, site_key: &str, attributes: &str) -> String {
    let space = if attributes.is_empty() { "" } else { " " };
    format!(
        r#"<script src="{}/embed.js" data-site-key="{site_key}"{space}{attributes} async></script>"#,
        worker.base_url
    )
}
