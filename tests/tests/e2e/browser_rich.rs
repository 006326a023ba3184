//! Rich turns in real headless Chromium (`tests/browser/rich.mjs`): tool rows, the progress
//! bar, lists, tables, charts, sources, evidence and question chips, at a desktop
//! (1280×800) and a phone (390×844) viewport, each with accessibility checks (roles,
//! names, table headers, link `rel`, text contrast), and again after a reload (from
//! history). The turns are scripted through the real Worker (`scripted_turns`).
//! Screenshots: `target/test-artifacts/rich-<scenario>-{desktop,phone}[-reloaded].png`.

use std::process::Command;

use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{TestSite, Worker, repo_root, scratch_dir};
use serde_json::{Value, json};

use crate::browser::{BROWSER, demo_site};

/// Run scenario `scenario` of `rich.mjs` with `turns` (one script staged per question).
fn run(scenario: &str, turns: Value) {
    run_on_site(scenario, turns, |_, _| {});
}

/// [`run`], then `after(worker, site)`.
fn run_on_site(scenario: &str, turns: Value, after: impl FnOnce(&Worker, &TestSite)) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let (site, page) = demo_site(worker, &upstream);
    let dir = scratch_dir("rich-script");
    let script = dir.join("turns.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).expect("script file");
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-profile");
    let output = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/rich.mjs \"$@\"")
        .arg("node")
        .arg(scenario)
        .arg(&page.url)
        .arg(&artifacts)
        .arg(&profile)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("WORKER", &worker.base_url)
        .env("SECRET_KEY", &site.secret_key)
        .env("SCRIPT_FILE", &script)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(&format!("ok {scenario}")),
        "rich scenario {scenario} failed:\n{stdout}\n{stderr}"
    );
    assert!(
        upstream.chat_requests().is_empty(),
        "every answer was scripted"
    );
    after(worker, &site);
}

fn chunk(text: &str) -> Value {
    json!({"type": "chunk", "text": text})
}

fn payload(kind: &str, data: Value) -> Value {
    json!({"type": "payload", "kind": kind, "data": data})
}

fn wait(ms: u64) -> Value {
    json!({"type": "wait", "ms": ms})
}

#[test]
fn tool_rows_appear_and_resolve_while_the_progress_bar_advances() {
    run(
        "tools",
        json!([{"steps": [
            {"type": "tool_start", "call_id": "c1", "name": "search_products", "input": {"q": "S23"}},
            {"type": "progress", "message": "Đang tìm sản phẩm…", "percentage": 30},
            wait(700),
            {"type": "tool_end", "call_id": "c1", "name": "search_products", "ok": true},
            wait(300),
            {"type": "tool_start", "call_id": "c2", "name": "checkStock"},
            {"type": "progress", "message": "Đang kiểm tra tồn kho…", "percentage": 70},
            wait(700),
            {"type": "tool_end", "call_id": "c2", "name": "checkStock", "ok": false, "output": "timeout"},
            wait(300),
            chunk("Dạ, S23 Ultra còn hàng ở cửa hàng Quận 1."),
        ]}]),
    );
}

#[test]
fn a_list_shows_safe_links_and_text_only() {
    run(
        "list",
        json!([{"steps": [
            chunk("Dạ, đây là các phòng còn trống:"),
            payload("list", json!({"total": 120, "items": [
                {"id": "101", "title": "Phòng 101", "path": "/rooms/101", "entity": "room", "subtitle": "25 m², tầng 1"},
                {"id": "3", "title": "Căn hộ Quận 3", "path": "https://example.com/can-ho?id=3", "entity": "room"},
                {"id": "x", "title": "Bấm vào đây", "path": "javascript:alert(document.cookie)", "entity": "room"},
                {"id": "y", "title": "<img src=x onerror=alert(1)><b>Phòng VIP</b>", "path": "//evil.example/vip", "entity": "room"},
            ]})),
        ]}]),
    );
}

#[test]
fn a_ten_thousand_row_table_is_capped_formatted_and_does_not_freeze() {
    let rows: Vec<Value> = (0..10_000)
        .map(|i| {
            json!({"name": format!("Phòng {i}"), "price": 22_490_000 + i, "area": 25.5,
                "page": {"text": "Xem", "href": format!("https://example.com/rooms/{i}")}})
        })
        .collect();
    let mut first = rows[0].clone();
    first["price"] = json!(22_490_000);
    let mut rows = rows;
    rows[0] = first;
    run(
        "table",
        json!([{"steps": [
            chunk("Dạ, bảng giá phòng:"),
            payload("table", json!({"columns": [
                {"key": "name", "label": "Phòng", "type": "string"},
                {"key": "price", "label": "Giá (VND)", "type": "number"},
                {"key": "area", "label": "Diện tích", "type": "number"},
                {"key": "page", "label": "Trang", "type": "link"},
            ], "rows": rows})),
        ]}]),
    );
}

#[test]
fn bar_line_and_pie_charts_are_inline_svg_images_with_a_text_alternative() {
    run(
        "charts",
        json!([{"steps": [
            chunk("Dạ, số liệu như sau:"),
            payload("chart", json!({"chart": "bar", "title": "Doanh thu theo tháng", "labels": ["T1", "T2", "T3"],
                "series": [{"name": "Doanh thu", "values": [120, 98, 143]}],
                "alt": "Doanh thu tháng 1 đến 3: 120, 98 và 143 triệu đồng"})),
            payload("chart", json!({"chart": "line", "title": "Khách theo tuần", "labels": ["Tuần 1", "Tuần 2", "Tuần 3", "Tuần 4"],
                "series": [{"name": "Khách mới", "values": [10, 14, 9, 20]}, {"name": "Quay lại", "values": [4, 6, 8, 7]}],
                "alt": "Hai đường: khách mới và khách quay lại, tuần 1 đến 4"})),
            payload("chart", json!({"chart": "pie", "labels": ["Đơn", "Đôi", "Gia đình"],
                "series": [{"name": "Phòng", "values": [50, 30, 20]}],
                "alt": "Tỷ lệ phòng: 50% đơn, 30% đôi, 20% gia đình"})),
        ]}]),
    );
}

#[test]
fn sources_evidence_and_chips_that_send_their_question() {
    run(
        "sources",
        json!([
            {"steps": [
                chunk("Dạ, quý khách được đổi trả trong 30 ngày."),
                payload("sources", json!([
                    {"title": "Chính sách đổi trả", "url": "https://example.com/doi-tra", "snippet": "Đổi trả trong 30 ngày"},
                    {"title": "Bảo hành", "url": "/bao-hanh"},
                    {"title": "Tài liệu nội bộ", "url": "file:///etc/passwd"},
                ])),
                payload("evidence", json!([
                    {"claim": "Đổi trả trong 30 ngày", "sources": [0], "confidence": 0.9},
                    {"claim": "Bảo hành 12 tháng", "sources": [0, 1]},
                ])),
                payload("follow_ups", json!(["Đổi trả thế nào?", "Bảo hành ở đâu?"])),
                payload("control", json!({"reason": "CLARIFICATION", "questions": ["Phòng đơn", "Phòng đôi"]})),
            ]},
            {"steps": [chunk("Dạ, quý khách đổi trả tại cửa hàng.")]},
        ]),
    );
}

#[test]
fn feedback_is_stored_and_shown_after_reload_copy_works_and_the_launcher_badges_unread_answers() {
    let answer = json!({"steps": [chunk("Dạ, cửa hàng mở cửa từ 8 đến 21 giờ mỗi ngày.")]});
    let slow = json!({"steps": [wait(1500), chunk("Dạ, không có gì ạ.")]});
    run_on_site("feedback", json!([answer, slow]), |worker, site| {
        // One vote per answer per visitor: the up vote was replaced by the down vote.
        let rows = worker.site_rows(
            site,
            &format!(
                "SELECT rating, comment, voter FROM message_feedback WHERE site_id = '{}'",
                site.id
            ),
        );
        let vote =
            json!({"rating": -1, "comment": "Thiếu giờ mở cửa Chủ nhật", "voter": "anonymous"});
        assert_eq!(
            rows,
            [vote.clone(), vote],
            "one vote in each viewport's conversation"
        );
    });
}
