//! Issue 27, `analyst` (seed 001) through the real Worker with a scripted upstream: what
//! the data agent's model reads back from its tools.
//! - `aggregate_data` (and `compare_periods`) with `operation: "count"` and no `field`
//!   count rows (TEMPLATES.md §1.2.7), on the classifier's own example "Có bao nhiêu đơn
//!   hàng từ Shopee?"; the other operations still need a field.
//! - `execute_aggregation` says `truncated: true` whenever the 1,000-row cap removed rows
//!   (`$limit 5000`, an empty pipeline or a `$count` over 3,000 rows), and `false` when
//!   nothing was cut.

#![allow(clippy::unwrap_used)]

use concierge_e2e::api::{send, site_with_upstream, terminal};
use concierge_e2e::upstream::{Recorded, Reply, ScriptedUpstream};
use concierge_e2e::{ReceivedEvent, TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

const CLASSIFIER: &str = "Bạn là một classifier phân loại ý định người dùng.";
const AGENT: &str = "Bạn là trợ lý phân tích dữ liệu kinh doanh.";
const FORMATTER: &str = "Format kết quả phân tích dữ liệu cho người dùng.";

const ORDERS_CSV: &str = "ngay,nen_tang,san_pham,so_luong,doanh_thu\n\
05/01/2024,Shopee,Áo thun,300,60.000.000\n\
15/1/2024,Lazada,Quần jean,350,50.000.000\n\
2024-01-31,Tiki,Áo thun,200,40.000.000\n\
2024-02-02,Shopee,Giày sneaker,200,57.750.000\n\
2024-02-09,Shopee,Áo thun,,\n";

fn analyst_site(worker: &Worker, upstream: &ScriptedUpstream, name: &str) -> TestSite {
    let site = site_with_upstream(worker, name, &upstream.base_url, false);
    let (status, body) = into_parts(
        agent()
            .request("PATCH", &worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"template": "analyst"})),
    );
    assert_eq!(status, 200, "{body}");
    site
}

fn put_csv(worker: &Worker, site: &TestSite, name: &str, csv: &str) {
    let (status, body) = into_parts(
        agent()
            .put(&worker.url(&format!("/admin/data/{name}?user_id=alice")))
            .set("x-api-key", &site.secret_key)
            .set("content-type", "text/csv")
            .send_string(csv),
    );
    assert_eq!(status, 200, "{body}");
}

fn conversation(worker: &Worker, site: &TestSite) -> String {
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/conversations"))
            .set("x-api-key", &site.secret_key)
            .send_json(json!({"user_id": "alice"})),
    );
    assert_eq!(status, 201, "{body}");
    serde_json::from_str::<Value>(&body).expect("JSON")["conversation_id"]
        .as_str()
        .expect("id")
        .to_string()
}

fn calls(list: &[(&str, &str, Value)]) -> Reply {
    Reply::ToolCalls(
        list.iter()
            .map(|(id, name, args)| ((*id).into(), (*name).into(), args.to_string()))
            .collect(),
    )
}

fn tool_ends(events: &[ReceivedEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.event == "tool_end")
        .map(|e| serde_json::from_str(&e.data).expect("JSON"))
        .collect()
}

/// The tool results the data agent's model read back, by call id: the `tool` messages
/// of its last request.
fn tool_results_read(upstream: &ScriptedUpstream) -> Vec<(String, String)> {
    let requests: Vec<Recorded> = upstream.chat_requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .starts_with(AGENT)
        })
        .expect("an agent request");
    last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn read_back(results: &[(String, String)], id: &str) -> Value {
    let text = &results
        .iter()
        .find(|(call, _)| call == id)
        .unwrap_or_else(|| panic!("no tool result {id} in {results:?}"))
        .1;
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
}

#[test]
fn count_without_a_field_counts_rows_on_the_classifiers_own_example() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = analyst_site(worker, &upstream, "Analyst count rows");
    put_csv(worker, &site, "don_hang", ORDERS_CSV);
    let id = conversation(worker, &site);
    upstream.push_for(CLASSIFIER, Reply::text("data_query"));
    upstream.push_for(
        AGENT,
        calls(&[
            (
                "shopee",
                "aggregate_data",
                json!({"connection_name": "don_hang", "operation": "count",
                       "filters": {"nen_tang": "Shopee"}}),
            ),
            (
                "by_platform",
                "aggregate_data",
                json!({"connection_name": "don_hang", "operation": "count",
                       "group_by": "nen_tang"}),
            ),
            (
                "present",
                "aggregate_data",
                json!({"connection_name": "don_hang", "operation": "count",
                       "field": "doanh_thu"}),
            ),
            (
                "periods",
                "compare_periods",
                json!({"connection_name": "don_hang", "operation": "count",
                       "date_field": "ngay", "period1_from": "2024-01-01", "period1_to": "2024-01-31",
                       "period2_from": "2024-02-01", "period2_to": "2024-02-29"}),
            ),
            (
                "sum_no_field",
                "aggregate_data",
                json!({"connection_name": "don_hang", "operation": "sum"}),
            ),
        ]),
    );
    upstream.push_for(AGENT, Reply::text("Có 3 đơn hàng từ Shopee."));
    upstream.push_for(FORMATTER, Reply::text("Có 3 đơn hàng từ Shopee."));
    let (status, events) = send(
        worker,
        &site.secret_key,
        &id,
        "Có bao nhiêu đơn hàng từ Shopee?",
    );
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let ends = tool_ends(&events);
    assert_eq!(ends.len(), 5, "{ends:?}");
    let read = tool_results_read(&upstream);
    // No field: every row counts (the Shopee row without revenue too).
    let shopee = read_back(&read, "shopee");
    assert_eq!(shopee["value"], 3, "{shopee}");
    assert_eq!(shopee["row_count"], 3, "{shopee}");
    assert_eq!(shopee["operation"], "count");
    let by_platform = read_back(&read, "by_platform");
    assert_eq!(
        by_platform["groups"][0],
        json!({"group": "Shopee", "value": 3, "row_count": 3}),
        "{by_platform}"
    );
    assert_eq!(by_platform["groups"].as_array().unwrap().len(), 3);
    // With a field: rows where it is present and not null.
    assert_eq!(read_back(&read, "present")["value"], 4);
    let periods = read_back(&read, "periods");
    assert_eq!(
        (&periods["period1_value"], &periods["period2_value"]),
        (&json!(3), &json!(2)),
        "{periods}"
    );
    // The other operations still need a field: an error the model can act on.
    let sum = read_back(&read, "sum_no_field");
    assert!(sum.as_str().is_some_and(|s| s.contains("field")), "{sum}");
    let oks: Vec<bool> = ends.iter().map(|e| e["ok"].as_bool().unwrap()).collect();
    assert_eq!(oks, [true, true, true, true, false], "{ends:?}");
}

#[test]
fn execute_aggregation_says_truncated_whenever_the_row_cap_cut_rows() {
    let worker = Worker::shared();
    let upstream = ScriptedUpstream::start();
    let site = analyst_site(worker, &upstream, "Analyst truncated");
    let mut csv = String::from("i,kenh\n");
    for i in 1..=3000 {
        let kenh = ["Shopee", "Lazada", "Tiki"][i % 3];
        csv.push_str(&format!("{i},{kenh}\n"));
    }
    put_csv(worker, &site, "su_kien", &csv);
    let id = conversation(worker, &site);
    let pipeline = |stages: Value| json!({"connection_name": "su_kien", "pipeline": stages, "description": "test"});
    upstream.push_for(CLASSIFIER, Reply::text("data_query"));
    upstream.push_for(
        AGENT,
        calls(&[
            (
                "limit_5000",
                "execute_aggregation",
                pipeline(json!([{"$limit": 5000}, {"$project": {"_id": 0, "i": 1}}])),
            ),
            ("empty", "execute_aggregation", pipeline(json!([]))),
            (
                "count_capped",
                "execute_aggregation",
                pipeline(json!([{"$limit": 5000}, {"$count": "n"}])),
            ),
            (
                "count_all",
                "execute_aggregation",
                pipeline(json!([{"$count": "n"}])),
            ),
            (
                "few",
                "execute_aggregation",
                pipeline(json!([{"$match": {"i": {"$lte": 10}}}, {"$limit": 5000}])),
            ),
            (
                "exactly_1000",
                "execute_aggregation",
                pipeline(json!([{"$sort": {"i": 1}}, {"$limit": 1000}, {"$project": {"_id": 0, "i": 1}}])),
            ),
        ]),
    );
    upstream.push_for(AGENT, Reply::text("Có 3000 sự kiện."));
    upstream.push_for(FORMATTER, Reply::text("Có 3000 sự kiện."));
    let (status, events) = send(worker, &site.secret_key, &id, "Có bao nhiêu sự kiện?");
    assert_eq!(status, 200);
    assert_eq!(terminal(&events).0, "completed", "{events:?}");
    let read = tool_results_read(&upstream);
    let truncated = |id: &str| read_back(&read, id)["truncated"].clone();
    // More rows than the cap: truncated, whatever stage applied the cap.
    assert_eq!(truncated("limit_5000"), true);
    assert_eq!(read_back(&read, "limit_5000")["row_count"], 1000);
    assert_eq!(truncated("empty"), true);
    // A count over a capped set is incomplete, and says so.
    assert_eq!(read_back(&read, "count_capped")["rows"][0]["n"], 1000);
    assert_eq!(truncated("count_capped"), true);
    // Nothing cut: not truncated.
    assert_eq!(read_back(&read, "count_all")["rows"][0]["n"], 3000);
    assert_eq!(truncated("count_all"), false);
    assert_eq!(read_back(&read, "few")["row_count"], 10);
    assert_eq!(truncated("few"), false);
    assert_eq!(read_back(&read, "exactly_1000")["row_count"], 1000);
    assert_eq!(truncated("exactly_1000"), false);
    // The client's tool_end events carry the same flag.
    let ends = tool_ends(&events);
    let flags: Vec<Value> = ends
        .iter()
        .map(|e| e["output"]["truncated"].clone())
        .collect();
    assert_eq!(
        flags,
        [true, true, true, false, false, false].map(Value::Bool),
        "{ends:?}"
    );
}
