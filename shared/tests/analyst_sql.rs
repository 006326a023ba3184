//! The SQL path of `aggregate_data` against the reference evaluator: the same random rows
//! and calls answered by SQLite (the statement the site object runs) and by the Rust evaluator give
//! the same tool output (differential test, ≥ 100 cases).
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::{DataConnection, DataField, DataFuture, DataRows};
use concierge_core::flows::analyst::eval::to_json;
use concierge_core::flows::analyst::sql::{
    AggregateQuery, AggregateRow, SCHEMA, SqlParam, aggregate_sql, group_value,
};
use concierge_core::flows::analyst::tools::{DataTools, RowSource};
use concierge_core::graph::block_on;
use proptest::prelude::*;
use rusqlite::types::{Value as Sql, ValueRef};
use serde_json::{Value, json};

struct Memory(Vec<Value>);

impl RowSource for Memory {
    fn load<'a>(&'a self, _id: &'a str) -> DataFuture<'a, DataRows> {
        Box::pin(async move {
            Ok(DataRows {
                rows: self.0.clone(),
                over_cap: false,
            })
        })
    }
}

/// SQLite for the SQL path; the same rows for what falls back to the evaluator.
struct Sqlite(rusqlite::Connection, Vec<Value>);

fn to_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => to_json(f),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into()),
        ValueRef::Blob(_) => Value::Null,
    }
}

impl RowSource for Sqlite {
    fn load<'a>(&'a self, _id: &'a str) -> DataFuture<'a, DataRows> {
        Box::pin(async move {
            Ok(DataRows {
                rows: self.1.clone(),
                over_cap: false,
            })
        })
    }

    fn aggregate<'a>(
        &'a self,
        id: &'a str,
        query: &'a AggregateQuery,
    ) -> DataFuture<'a, Option<Vec<AggregateRow>>> {
        Box::pin(async move {
            let Some((sql, params)) = aggregate_sql(query, id, "alice") else {
                return Ok(None);
            };
            let params: Vec<Sql> = params
                .into_iter()
                .map(|p| match p {
                    SqlParam::Text(t) => Sql::Text(t),
                    SqlParam::Number(n) => Sql::Real(n),
                })
                .collect();
            let mut statement = self.0.prepare(&sql).unwrap();
            let rows = statement
                .query_map(rusqlite::params_from_iter(params), |r| {
                    let g = to_value(r.get_ref(0)?);
                    let t = to_value(r.get_ref(1)?);
                    Ok(AggregateRow {
                        group: group_value(&g, t.as_str()),
                        value: to_value(r.get_ref(2)?),
                        row_count: r.get::<_, i64>(3)? as u64,
                    })
                })
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            Ok(Some(rows))
        })
    }
}

fn cell() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        (-1000i64..1000).prop_map(|n| Some(json!(n))),
        (-100.0f64..100.0).prop_map(|f| Some(to_json((f * 4.0).round() / 4.0))),
        "[a-c]{1,2}".prop_map(|s| Some(json!(s))),
        any::<bool>().prop_map(|b| Some(json!(b))),
    ]
}

fn row() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["Shopee", "Lazada", "Tiki"]),
        cell(),
        cell(),
        1u32..=28,
        1u32..=3,
    )
        .prop_map(|(k, v, g, day, month)| {
            let mut row = json!({"k": k, "d": format!("2024-{month:02}-{day:02}")});
            if let Some(v) = v {
                row["v"] = v;
            }
            if let Some(g) = g {
                row["g"] = g;
            }
            row
        })
}

fn connection(numeric: bool) -> DataConnection {
    let kind = if numeric { "number" } else { "bool" };
    DataConnection {
        id: "c1".into(),
        user_id: "alice".into(),
        name: "don_hang".into(),
        description: String::new(),
        row_count: 0,
        // `g` holds mixed types (as no upload produces): declared bool, never assumed scalar.
        fields: [("k", "string"), ("v", kind), ("g", "bool"), ("d", "date")]
            .iter()
            .map(|(n, t)| DataField {
                name: (*n).into(),
                kind: (*t).into(),
                examples: vec![],
            })
            .collect(),
    }
}

fn sqlite(rows: &[Value]) -> Sqlite {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    db.execute_batch(SCHEMA).unwrap();
    db.execute(
        "INSERT INTO data_connections VALUES ('c1', 'alice', 'don_hang', '', '[]', 0, NULL, 0, 0, 0)",
        [],
    )
    .unwrap();
    db.execute(
        "INSERT INTO data_connections VALUES ('c3', 'bob', 'don_hang', '', '[]', 0, NULL, 0, 0, 0)",
        [],
    )
    .unwrap();
    for (i, row) in rows.iter().enumerate() {
        db.execute(
            "INSERT INTO data_rows VALUES ('c1', ?1, ?2)",
            rusqlite::params![i as i64, row.to_string()],
        )
        .unwrap();
    }
    // Another connection's and another user's rows, never counted.
    db.execute(
        "INSERT INTO data_rows VALUES ('c2', 0, '{\"v\": 999999}')",
        [],
    )
    .unwrap();
    db.execute(
        "INSERT INTO data_rows VALUES ('c3', 0, '{\"v\": 999999}')",
        [],
    )
    .unwrap();
    Sqlite(db, rows.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn sql_and_evaluator_agree(
        rows in prop::collection::vec(row(), 0..40),
        op in prop::sample::select(vec!["sum", "count", "avg", "min", "max"]),
        field in prop::option::of(prop::sample::select(vec!["v", "g", "k"])),
        group in prop::option::of(prop::sample::select(vec!["k", "g", "v"])),
        // `$regex` filters: the SQL path declines them and the evaluator answers.
        filter in prop::option::of(prop::sample::select(vec![json!({"k": "Shopee"}), json!({"v": 5}), json!({"g": "a"}),
            json!({"k": {"$regex": "^sh", "$options": "i"}}), json!({"g": {"$not": {"$regex": "a|b"}}})])),
        range in any::<bool>(),
        numeric in any::<bool>(),
    ) {
        let conn = [connection(numeric)];
        // A column typed number at upload holds only numbers and nulls.
        let rows: Vec<Value> = rows
            .into_iter()
            .map(|mut r| {
                if numeric && r.get("v").is_some_and(|v| !v.is_number()) {
                    r["v"] = Value::Null;
                }
                r
            })
            .collect();
        let memory = Memory(rows.clone());
        let db = sqlite(&rows);
        let mut args = json!({"connection_name": "don_hang", "operation": op});
        if let Some(f) = field { args["field"] = json!(f); }
        if let Some(g) = group { args["group_by"] = json!(g); }
        if let Some(f) = filter { args["filters"] = f; }
        if range {
            args["date_field"] = json!("d");
            args["date_from"] = json!("2024-01-10");
            args["date_to"] = json!("2024-02-20");
        }
        let reference = block_on(DataTools { connections: &conn, source: &memory }.run("aggregate_data", args.clone()));
        let sql = block_on(DataTools { connections: &conn, source: &db }.run("aggregate_data", args.clone()));
        // An anchored `$regex` equal to an equality filter: the evaluator's answer to it
        // equals SQLite's answer to the equality.
        let regex_twin = (args["filters"] == json!({"k": "Shopee"})).then(|| {
            let mut twin = args.clone();
            twin["filters"] = json!({"k": {"$regex": "^Shopee$"}});
            block_on(DataTools { connections: &conn, source: &memory }.run("aggregate_data", twin))
        });
        if let (Some(Ok(twin)), Ok(b)) = (&regex_twin, &sql) {
            prop_assert_eq!(twin, b, "{}", args);
        }
        match (reference, sql) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", args),
            (Err(a), Err(b)) => prop_assert_eq!(a.message(), b.message()),
            (a, b) => prop_assert!(false, "{args}: {a:?} vs {b:?}"),
        }
    }
}

#[test]
fn a_grouped_sum_is_answered_by_sqlite_not_the_loaded_rows() {
    let rows = vec![
        json!({"k": "Shopee", "v": 60_000_000, "d": "2024-01-05"}),
        json!({"k": "Lazada", "v": 50_000_000, "d": "2024-01-15"}),
        json!({"k": "Shopee", "v": 40_000_000, "d": "2024-01-31"}),
    ];
    let conn = [connection(true)];
    // No rows to fall back on: only SQLite can answer.
    let mut db = sqlite(&rows);
    db.1.clear();
    let out = block_on(
        DataTools {
            connections: &conn,
            source: &db,
        }
        .run(
            "aggregate_data",
            json!({"connection_name": "don_hang", "operation": "sum", "field": "v", "group_by": "k",
                   "date_field": "d", "date_from": "2024-01-01", "date_to": "2024-01-31"}),
        ),
    )
    .unwrap();
    assert_eq!(
        out["groups"],
        json!([{"group": "Shopee", "value": 100_000_000, "row_count": 2},
               {"group": "Lazada", "value": 50_000_000, "row_count": 1}])
    );
}
