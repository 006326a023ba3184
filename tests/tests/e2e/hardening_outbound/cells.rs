//! CSV (and JSON rows) uploads bound what one data set may make the Worker hold: each
//! cell (50 000 characters, a Google Sheets cell), the columns (200, names of at most 128
//! characters) and the cells in all (1 000 000). Over a bound the upload is refused with a
//! 400 naming the row and column, nothing is stored, and the data set in place stays.

use std::time::{Duration, Instant};

use concierge_e2e::api::error_code;
use concierge_e2e::{TestSite, Worker, agent, into_parts};
use serde_json::{Value, json};

use super::{get_data, message, put_json};

const MAX_CELL_CHARS: usize = 50_000;
const MAX_COLUMNS: usize = 200;
const MAX_CELLS: usize = 1_000_000;

fn put_csv(worker: &Worker, site: &TestSite, name: &str, csv: &str) -> (u16, String) {
    into_parts(
        agent()
            .put(&worker.url(&format!("/admin/data/{name}?user_id=owner")))
            .set("x-api-key", &site.secret_key)
            .set("content-type", "text/csv")
            .send_string(csv),
    )
}

fn refused(status: u16, body: &str, needles: &[&str]) {
    assert_eq!(
        (status, error_code(body).as_str()),
        (400, "bad_request"),
        "{body}"
    );
    let text = message(body);
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
}

#[test]
fn a_csv_cell_over_50000_characters_is_refused_naming_its_row_and_column() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Cell bounds"}));
    let good = "san_pham,mo_ta\nÁo,ngắn\n";
    let (status, body) = put_csv(worker, &site, "sp", good);
    assert_eq!(status, 200, "{body}");

    // At the bound (multi-byte characters: counted in characters): accepted.
    let at = format!(
        "san_pham,mo_ta\nÁo,ngắn\nQuần,\"{}\"\n",
        "ệ".repeat(MAX_CELL_CHARS)
    );
    let (status, body) = put_csv(worker, &site, "at_bound", &at);
    assert_eq!(status, 200, "{body}");

    // One character over, in row 3 column 2; then a 30 MB cell (quoted, with newlines).
    let over = format!(
        "san_pham,mo_ta\nÁo,ngắn\nQuần,{}\n",
        "x".repeat(MAX_CELL_CHARS + 1)
    );
    let (status, body) = put_csv(worker, &site, "sp", &over);
    refused(status, &body, &["row 3", "column 2", "`mo_ta`", "50000"]);
    let huge = format!(
        "san_pham,mo_ta\nÁo,\"{}\"\n",
        "dòng dài\n".repeat(30 * 1024 * 1024 / 12)
    );
    let started = Instant::now();
    let (status, body) = put_csv(worker, &site, "sp", &huge);
    refused(status, &body, &["row 2", "`mo_ta`"]);
    assert!(started.elapsed() < Duration::from_secs(30));

    // The same bound for JSON rows.
    let (status, body) = put_json(
        worker,
        &site,
        "sp",
        json!({"user_id": "owner", "rows": [{"a": "x"}, {"a": "y".repeat(MAX_CELL_CHARS + 1)}]}),
    );
    refused(status, &body, &["rows[1]", "`a`", "50000"]);

    // The data set in place is unchanged.
    let (status, body) = get_data(worker, &site, "sp");
    assert_eq!(status, 200, "{body}");
    let shown: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(shown["row_count"], 1, "{body}");
    assert_eq!(shown["rows"][0]["mo_ta"], "ngắn", "{body}");
}

#[test]
fn csv_columns_and_total_cells_are_bounded() {
    let worker = Worker::shared();
    let site = worker.create_site(json!({"name": "Column bounds"}));
    let header = |n: usize| {
        (1..=n)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    // 200 columns: accepted.
    let row = vec!["1"; MAX_COLUMNS].join(",");
    let (status, body) = put_csv(
        worker,
        &site,
        "wide",
        &format!("{}\n{row}\n", header(MAX_COLUMNS)),
    );
    assert_eq!(status, 200, "{body}");
    // 201 columns: refused.
    let row = vec!["1"; MAX_COLUMNS + 1].join(",");
    let (status, body) = put_csv(
        worker,
        &site,
        "wider",
        &format!("{}\n{row}\n", header(MAX_COLUMNS + 1)),
    );
    refused(status, &body, &["200 columns"]);
    // A row of 30 million empty cells under a one-column header.
    let started = Instant::now();
    let (status, body) = put_csv(
        worker,
        &site,
        "commas",
        &format!("a\n{}\n", ",".repeat(30_000_000)),
    );
    refused(status, &body, &["row 2"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    // A column name over 128 characters.
    let (status, body) = put_csv(
        worker,
        &site,
        "long_name",
        &format!("a,{}\n1,2\n", "n".repeat(129)),
    );
    refused(status, &body, &["column 2", "128"]);
    // More than 1 000 000 cells in all (100 columns, 10 001 rows).
    let rows = MAX_CELLS / 100 + 1;
    let line = format!("{}\n", vec!["7"; 100].join(","));
    let csv = format!("{}\n{}", header(100), line.repeat(rows));
    let (status, body) = put_csv(worker, &site, "many", &csv);
    refused(status, &body, &["1000000 cells"]);
    for name in ["wider", "commas", "long_name", "many"] {
        let (status, _) = get_data(worker, &site, name);
        assert_eq!(status, 404, "{name} was stored");
    }
}
