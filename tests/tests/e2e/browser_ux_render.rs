//! What a visitor reads in the panel, in Vietnamese and in English conversations (issue 26,
//! items 2–5), in real headless Chromium (`tests/browser/ux_render.mjs`) at a desktop
//! (1280×800) and a phone (390×844) viewport, with axe-core over the panel (0 critical,
//! 0 serious) in each state and again after a reload (from history): markdown tables,
//! localised tool rows, progress, table headers and sources, formatted numbers and prices,
//! readable charts, and no raw rental role label. The turns are scripted through the real
//! Worker. Screenshots: `target/test-artifacts/ux-render-<scenario>-<lang>-<viewport>*.png`.

use std::process::Command;

use concierge_e2e::host_page::{HostPage, embed_tag_with};
use concierge_e2e::upstream::ScriptedUpstream;
use concierge_e2e::{Worker, repo_root, scratch_dir};
use serde_json::{Value, json};

use crate::browser::BROWSER;

/// Run `scenario` in a conversation in `lang` (the embed tag's `data-lang`), one staged
/// script per question, with `expect` (JSON) for the page's assertions.
fn run(scenario: &str, lang: &str, turns: Value, expect: &Value, extra: &[(&str, String)]) {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let page = HostPage::start();
    let site = worker.create_site(json!({
        "name": "Nhà trọ An Phát (ux test)",
        "template": "shop",
        "language": "vi",
        "llm": {"provider": "openai", "base_url": format!("{}/v1", upstream.base_url), "model": "scripted"},
        "allowed_origins": [page.origin.as_str()],
    }));
    let tag = embed_tag_with(worker, &site.public_key, &format!("data-lang=\"{lang}\""));
    page.set(
        format!(
            "<!doctype html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>Shop</title></head>\n\
             <body><h1>Shop</h1>\n{tag}\n</body></html>\n"
        ),
        Vec::new(),
    );
    let dir = scratch_dir("ux-render-script");
    let script = dir.join("turns.json");
    std::fs::write(&script, json!({ "turns": turns }).to_string()).expect("script file");
    let _serial = BROWSER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-profile");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/ux_render.mjs \"$@\"")
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
        .env("LANG", lang)
        .env("EXPECT", expect.to_string());
    for (name, value) in extra {
        command.env(name, value);
    }
    let output = command.output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(&format!("ok {scenario}")),
        "ux-render scenario {scenario} ({lang}) failed:\n{stdout}\n{stderr}"
    );
    assert!(
        upstream.chat_requests().is_empty(),
        "every answer was scripted"
    );
}

fn chunk(text: &str) -> Value {
    json!({"type": "chunk", "text": text})
}

fn payload(kind: &str, data: Value) -> Value {
    json!({"type": "payload", "kind": kind, "data": data})
}

fn progress(stage: &str, message: &str, percentage: u32) -> Value {
    json!({"type": "progress", "stage": stage, "message": message, "percentage": percentage})
}

fn wait(ms: u64) -> Value {
    json!({"type": "wait", "ms": ms})
}

#[test]
fn markdown_tables_render_as_tables_in_both_languages() {
    // Column names, alignment, inline markdown, an escaped pipe, a short row, a table
    // right under a paragraph line and one without outer pipes.
    for (lang, words) in [
        (
            "vi",
            [
                "Kênh",
                "Đơn hàng",
                "Doanh thu",
                "Tổng cộng",
                "Mã",
                "Tên",
                "Chuột",
            ],
        ),
        (
            "en",
            [
                "Channel", "Orders", "Revenue", "In total", "Code", "Name", "Mouse",
            ],
        ),
    ] {
        let [channel, orders, revenue, total, code, name, mouse] = words;
        let text = format!(
            "{total}:\n| {channel} | {orders} | {revenue} |\n|:---|---:|---:|\n| **Shopee** | 120 | 150.000.000 VND |\n\
             | A \\| B | 80 | 95.500.000 VND |\n| Web [site](https://example.com/web) | 7 |\n\n{total} 3.\n\n\
             {code} | {name}\n--- | ---\nX1 | {mouse}\n"
        );
        // Streamed in pieces that cut rows in half.
        let chars: Vec<char> = text.chars().collect();
        let steps: Vec<Value> = chars
            .chunks(17)
            .map(|piece| chunk(&piece.iter().collect::<String>()))
            .collect();
        let expect = json!([
            {"head": [channel, orders, revenue],
             "rows": [["Shopee", "120", "150.000.000 VND"], ["A | B", "80", "95.500.000 VND"], ["Web site", "7", ""]],
             "align": ["left", "right", "right"], "strong": 1,
             "links": [["site", "https://example.com/web", "noopener noreferrer"]]},
            {"head": [code, name], "rows": [["X1", mouse]], "align": ["left", "left"], "strong": 0, "links": []},
        ]);
        run(
            "md-table",
            lang,
            json!([{ "steps": steps }]),
            &expect,
            &[(
                "EXPECT_TEXT",
                json!([format!("{total}:"), format!("{total} 3.")]).to_string(),
            )],
        );
    }
}

/// A turn with tool rows, a knowledge plan's progress (the API's English stage messages),
/// a table whose labels are its raw keys, a list with a raw price, scoped sources.
fn labels_turn(room: &str, place: &str) -> Value {
    json!([{"steps": [
        {"type": "tool_start", "call_id": "c1", "name": "check_stock"},
        progress("plan_ready", "Execution plan is ready", 75),
        wait(500),
        progress("executing_task", "Task 1/2: nghỉ phép", 80),
        wait(500),
        {"type": "tool_end", "call_id": "c1", "name": "check_stock", "ok": false},
        progress("task_completed", "Completed 2/2: đi muộn", 85),
        wait(500),
        progress("task_completed", "Completed 1/2: nghỉ phép", 90),
        wait(500),
        progress("ready_for_resolution", "All tasks completed, proceeding to final response", 95),
        wait(500),
        {"type": "tool_start", "call_id": "c2", "name": "aggregate_data"},
        {"type": "tool_end", "call_id": "c2", "name": "aggregate_data", "ok": true},
        chunk("OK."),
        payload("table", json!({"columns": [
            {"key": "title", "label": "title", "type": "string"},
            {"key": "price", "label": "price", "type": "number"},
            {"key": "area_m2", "label": "area_m2", "type": "number"},
            {"key": "created_at", "label": "created_at", "type": "date"},
        ], "rows": [{"title": room, "price": 2_800_000, "area_m2": 25.5, "created_at": "2026-03-05"}]})),
        payload("list", json!({"total": 2, "items": [
            {"id": "r1", "title": room, "path": "/rooms/r1", "entity": "room", "subtitle": format!("2800000 · {place}")},
            {"id": "r2", "title": room, "path": "/rooms/r2", "entity": "room", "subtitle": format!("25 · {place}")},
        ]})),
        payload("sources", json!([
            {"title": "Quy định nghỉ phép năm 2024 · internal", "url": "https://example.com/nghi-phep"},
            {"title": "Sổ tay nhân viên · public", "url": "https://example.com/so-tay"},
        ])),
    ]}])
}

#[test]
fn labels_numbers_and_progress_follow_the_conversation_language() {
    let never = [
        "Execution plan",
        "Task 1/2",
        "Completed",
        "All tasks",
        "· internal",
        "· public",
        "area_m2",
        "created_at",
        "2800000",
        "check_stock",
        "aggregate_data",
    ];
    let vi_never: Vec<&str> = never
        .iter()
        .copied()
        .chain(["Check stock", "Aggregate data"])
        .collect();
    let vi = json!({
        "seen": ["Đã lập kế hoạch trả lời", "Đang thực hiện bước 1/2: nghỉ phép", "Đã xong 1/2 bước", "Đã xong 2/2 bước",
                 "Đang tổng hợp câu trả lời"],
        "never": vi_never,
        "tools": ["Kiểm tra tồn kho: lỗi", "Tổng hợp dữ liệu: xong"],
        "heads": ["Tiêu đề", "Giá", "Diện tích (m²)", "Ngày tạo"],
        "cells": ["Phòng 1", "2.800.000 đ", "25,5", "05/03/2026"],
        "subtitles": ["2.800.000 đ · Hai Bà Trưng", "25 · Hai Bà Trưng"],
        "sources": [["Quy định nghỉ phép năm 2024", "Nội bộ"], ["Sổ tay nhân viên", "Công khai"]],
    });
    run(
        "labels",
        "vi",
        labels_turn("Phòng 1", "Hai Bà Trưng"),
        &vi,
        &[],
    );
    let en = json!({
        "seen": ["Plan ready", "Working on step 1 of 2: nghỉ phép", "1 of 2 steps done", "2 of 2 steps done",
                 "Putting the answer together"],
        "never": never,
        "tools": ["Check stock: failed", "Aggregate data: done"],
        "heads": ["Title", "Price", "Area (m²)", "Created at"],
        "cells": ["Room 1", "2,800,000 VND", "25.5", "03/05/2026"],
        "subtitles": ["2,800,000 VND · Hai Ba Trung", "25 · Hai Ba Trung"],
        "sources": [["Quy định nghỉ phép năm 2024", "Internal"], ["Sổ tay nhân viên", "Public"]],
    });
    run(
        "labels",
        "en",
        labels_turn("Room 1", "Hai Ba Trung"),
        &en,
        &[],
    );
}

fn chart_turn(title: &str, pie_title: &str, slices: [&str; 3]) -> Value {
    json!([{"steps": [
        chunk("OK:"),
        // As rental builds it: no title, the SQL's column names, an English alternative.
        payload("chart", json!({"chart": "bar", "labels": ["Hai Bà Trưng", "Cầu Giấy", "Đống Đa"],
            "series": [{"name": "avg_price", "values": [2_800_000, 3_500_000.5, 4_100_000]}],
            "alt": "avg_price by district (3 values)"})),
        payload("chart", json!({"chart": "line", "title": title, "labels": ["W1", "W2", "W3", "W4"],
            "series": [{"name": "new_customers", "values": [1200, 1450, 900, 2000]},
                       {"name": "returning_customers", "values": [400, 600, 800, 700]}],
            "alt": "new_customers, returning_customers by week (4 values)"})),
        payload("chart", json!({"chart": "pie", "title": pie_title, "labels": slices,
            "series": [{"name": "rooms", "values": [50, 30, 20]}], "alt": "rooms by type (3 values)"})),
    ]}])
}

#[test]
fn charts_have_a_title_values_a_legend_and_readable_text() {
    let never = [
        "avg_price",
        "new_customers",
        "returning_customers",
        "(3 values)",
        "(4 values)",
    ];
    let vi = json!([
        {"title": "Giá trung bình", "texts": ["2,8 triệu", "3,5 triệu", "4,1 triệu"],
         "name": ["Hai Bà Trưng: 2.800.000 đ", "Cầu Giấy: 3.500.000,5 đ", "Đống Đa: 4.100.000 đ"], "never": never, "legend": []},
        {"title": "Khách theo tuần", "texts": ["0", "1.000", "2.000"],
         "name": ["W4: Khách hàng mới 2.000, Khách hàng quay lại 700"], "never": never,
         "legend": ["Khách hàng mới", "Khách hàng quay lại"]},
        {"title": "Tỷ lệ phòng", "texts": [], "name": ["Đơn: 50 (50%)"], "never": never,
         "legend": ["Đơn: 50 (50%)", "Đôi: 30 (30%)", "Gia đình: 20 (20%)"]},
    ]);
    run(
        "chart",
        "vi",
        chart_turn("Khách theo tuần", "Tỷ lệ phòng", ["Đơn", "Đôi", "Gia đình"]),
        &vi,
        &[],
    );
    let en = json!([
        {"title": "Average price", "texts": ["2.8M", "3.5M", "4.1M"],
         "name": ["Hai Bà Trưng: 2,800,000 VND", "Cầu Giấy: 3,500,000.5 VND", "Đống Đa: 4,100,000 VND"], "never": never, "legend": []},
        {"title": "Customers per week", "texts": ["0", "1,000", "2,000"],
         "name": ["W4: New customers 2,000, Returning customers 700"], "never": never,
         "legend": ["New customers", "Returning customers"]},
        {"title": "Room mix", "texts": [], "name": ["Single: 50 (50%)"], "never": never,
         "legend": ["Single: 50 (50%)", "Double: 30 (30%)", "Family: 20 (20%)"]},
    ]);
    run(
        "chart",
        "en",
        chart_turn(
            "Customers per week",
            "Room mix",
            ["Single", "Double", "Family"],
        ),
        &en,
        &[],
    );
}

#[test]
fn a_wide_table_keeps_its_linked_title_column_in_view_on_a_phone() {
    // As the rental template builds it (shared/src/flows/rental/build.rs): the title first,
    // linked to the room's page, the id as text.
    let rows: Vec<Value> = [
        (
            "r-101",
            "Phòng gần chợ Bến Thành, có gác",
            2_500_000,
            25,
            "Quận 1",
        ),
        (
            "r-102",
            "Căn hộ mini full nội thất",
            4_200_000,
            32,
            "Bình Thạnh",
        ),
        (
            "r-103",
            "Phòng trọ giá rẻ cho sinh viên",
            1_600_000,
            18,
            "Gò Vấp",
        ),
    ]
    .iter()
    .map(|(id, title, price, area, ward)| {
        json!({"title": {"text": title, "href": format!("/rooms/{id}")}, "id": id, "price": price,
               "area_m2": area, "ward": ward, "created_at": "2025-08-01T09:00:00Z"})
    })
    .collect();
    let table = payload(
        "table",
        json!({
            "columns": [
                {"key": "title", "label": "title", "type": "link"},
                {"key": "id", "label": "id", "type": "string"},
                {"key": "price", "label": "price", "type": "number"},
                {"key": "area_m2", "label": "area_m2", "type": "number"},
                {"key": "ward", "label": "ward", "type": "string"},
                {"key": "created_at", "label": "created_at", "type": "date"},
            ],
            "rows": rows,
        }),
    );
    let expect = json!({"links": [
        ["Phòng gần chợ Bến Thành, có gác", "/rooms/r-101", 0],
        ["Căn hộ mini full nội thất", "/rooms/r-102", 0],
        ["Phòng trọ giá rẻ cho sinh viên", "/rooms/r-103", 0],
    ]});
    run(
        "wide",
        "vi",
        json!([{ "steps": [chunk("Dạ, đây là các phòng:"), table] }]),
        &expect,
        &[],
    );
}

#[test]
fn the_rental_role_label_is_not_shown() {
    for (lang, pieces, text) in [
        (
            "vi",
            ["[LAND", "LORD] Chào anh, em tìm được ", "3 phòng."],
            "Chào anh, em tìm được 3 phòng.",
        ),
        (
            "en",
            ["[GUE", "ST] Hello, I found ", "3 rooms."],
            "Hello, I found 3 rooms.",
        ),
    ] {
        let steps: Vec<Value> = pieces.iter().flat_map(|p| [chunk(p), wait(300)]).collect();
        run(
            "role",
            lang,
            json!([{ "steps": steps }]),
            &json!({ "text": text }),
            &[],
        );
    }
}

#[test]
fn the_markdown_renderer_renders_as_before_plus_tables_and_without_the_role_label() {
    // Node only (no Worker, no browser): `tests/browser/markdown.mjs`.
    let output = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node --no-warnings tests/browser/markdown.mjs")
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("ok markdown"),
        "markdown.mjs failed:\n{stdout}\n{stderr}"
    );
}
