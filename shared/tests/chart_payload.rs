//! Charts carry seed 002's chart object wherever a chart is written (issue 27 item 7):
//! `mimeType`, the QuickChart `url` built from the Chart.js configuration, `width` 500,
//! `height` 300, `alt`, and `spec` = that configuration; and they still read back.

use concierge_core::payload::{ChartKind, ChartPayload, ChartSeries, Payload};
use serde_json::{Value, json};

fn chart() -> ChartPayload {
    ChartPayload {
        chart: ChartKind::Bar,
        title: Some("Giá thuê".into()),
        labels: vec!["Quận 1".into(), "Gò Vấp & Bình Thạnh".into()],
        series: vec![ChartSeries {
            name: "Giá trung bình".into(),
            values: vec![4_500_000.0, 3_200_000.5],
        }],
        alt: "Giá trung bình theo quận (2 giá trị)".into(),
    }
}

/// `decodeURIComponent`.
fn decode(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("hex");
            out.push(u8::from_str_radix(hex, 16).expect("hex byte"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn a_chart_payload_carries_the_seeds_chart_object_and_its_chart_js_spec() {
    let event = serde_json::to_value(Payload::Chart(chart())).expect("serialises");
    assert_eq!(event["kind"], "chart");
    let data = &event["data"];
    assert_eq!(data["mimeType"], "image/png");
    assert_eq!(data["width"], 500);
    assert_eq!(data["height"], 300);
    assert_eq!(data["alt"], "Giá trung bình theo quận (2 giá trị)");
    let spec = &data["spec"];
    assert_eq!(spec["type"], "bar");
    assert_eq!(
        spec["data"]["labels"],
        json!(["Quận 1", "Gò Vấp & Bình Thạnh"])
    );
    assert_eq!(spec["data"]["datasets"][0]["label"], "Giá trung bình");
    assert_eq!(
        spec["data"]["datasets"][0]["data"],
        json!([4_500_000.0, 3_200_000.5])
    );
    // The widget's own fields stay.
    assert_eq!(data["chart"], "bar");
    assert_eq!(data["series"][0]["values"][1], 3_200_000.5);

    let url = data["url"].as_str().expect("url");
    let rest = url
        .strip_prefix("https://quickchart.io/chart?c=")
        .expect("a QuickChart URL");
    let (config, size) = rest.split_once('&').expect("size after the config");
    assert_eq!(size, "w=500&h=300");
    // encodeURIComponent: nothing that would end or split the query stays bare.
    assert!(!config.contains(['&', '=', '?', '#', ' ', '"', '{', '/']));
    let config: Value = serde_json::from_str(&decode(config)).expect("the config is JSON");
    assert_eq!(&config, spec);
}

#[test]
fn a_stored_chart_reads_back_with_or_without_the_seeds_fields() {
    let written = serde_json::to_string(&Payload::Chart(chart())).expect("serialises");
    let read: Payload = serde_json::from_str(&written).expect("reads back");
    assert_eq!(read, Payload::Chart(chart()));
    // One stored before the seed's fields were written.
    let old = json!({"kind": "chart", "data": {"chart": "pie", "labels": ["a"],
        "series": [{"name": "n", "values": [1.0]}], "alt": "x"}});
    let read: Payload = serde_json::from_value(old).expect("an older chart reads");
    let Payload::Chart(read) = read else {
        panic!("a chart");
    };
    assert_eq!(read.chart, ChartKind::Pie);
    let again = serde_json::to_value(&read).expect("serialises");
    assert!(
        again["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("&w=500&h=300"))
    );
    assert_eq!(again["spec"]["type"], "pie");
}
