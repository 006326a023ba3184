//! The rental SQL validator against an adversarial corpus and a property test, both
//! executed on a real SQLite (TEMPLATES.md §2.3): an accepted statement, run inside the
//! site-scoped wrapper, returns exactly what it returns when no other site's rows exist.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use concierge_core::flows::rental::schema::RentalSchema;
use concierge_core::flows::rental::sql::validate;
use proptest::prelude::*;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params};

const SITE: &str = "s1";
const USER: &str = "u1";

fn listing(title: &str, price: i64, district: &str, owner: &str) -> String {
    serde_json::json!({
        "title": title, "price": price, "area_m2": 20.5, "district": district,
        "ward": "Phường 1", "city": "TP.HCM", "address": "1 Lê Lợi", "status": "available",
        "owner_id": owner, "created_at": "2026-01-15", "budget_max": price
    })
    .to_string()
}

/// A database with the physical tables: `s1`'s rows, and (with `others`) another site's
/// rows plus tables a bypass would aim at.
fn database(others: bool) -> Connection {
    let db = Connection::open_in_memory().unwrap();
    db.execute_batch(
        "CREATE TABLE rental_rows (site_id TEXT NOT NULL, entity TEXT NOT NULL, id TEXT NOT NULL,
           data TEXT NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (site_id, entity, id));
         CREATE TABLE sites (id TEXT PRIMARY KEY, secret TEXT);
         CREATE TABLE messages (id TEXT PRIMARY KEY, content TEXT);",
    )
    .unwrap();
    let insert = |site: &str, entity: &str, id: &str, data: String| {
        db.execute(
            "INSERT INTO rental_rows VALUES (?1, ?2, ?3, ?4, 0)",
            params![site, entity, id, data],
        )
        .unwrap();
    };
    for (i, district) in ["Quận 1", "Quận 3", "Gò Vấp"].iter().enumerate() {
        let price = 1_500_000 + 700_000 * i as i64;
        let owner = if i == 0 { USER } else { "u2" };
        for entity in ["room", "post", "room_seeking_post"] {
            let id = format!("{}-{i}", &entity[..1]);
            insert(
                SITE,
                entity,
                &id,
                listing(&format!("Phòng {district}"), price, district, owner),
            );
        }
        if others {
            for entity in ["room", "post", "room_seeking_post"] {
                let id = format!("o{}-{i}", &entity[..1]);
                let data = listing("OTHER listing", 100 + i as i64, district, USER);
                insert("s2", entity, &id, data);
            }
        }
    }
    if others {
        db.execute_batch(
            "INSERT INTO sites VALUES ('s2', 'sk_secret_other');
             INSERT INTO messages VALUES ('m1', 'private message');",
        )
        .unwrap();
    }
    db
}

fn scoped_rows(db: &Connection, sql: &str) -> Result<Vec<String>, String> {
    let scoped = RentalSchema::default().scoped_sql(sql, true);
    let mut statement = db.prepare(&scoped).map_err(|e| e.to_string())?;
    let width = statement.column_count();
    let rows = statement
        .query_map(params![SITE, 101, USER], |row| {
            let cells: Vec<String> = (0..width)
                .map(|i| match row.get_ref(i).unwrap() {
                    ValueRef::Text(text) => String::from_utf8_lossy(text).into_owned(),
                    other => format!("{other:?}"),
                })
                .collect();
            Ok(cells.join("|"))
        })
        .map_err(|e| e.to_string())?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

fn tables() -> Vec<String> {
    RentalSchema::default().tables(true)
}

/// Accepted statements are scoped: the same result with or without other sites' data
/// (and nothing from the other tables, which the site-only database lacks).
fn assert_scoped(sql: &str, full: &Connection, alone: &Connection) {
    let with_others = scoped_rows(full, sql);
    let without = scoped_rows(alone, sql);
    match (&with_others, &without) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "bypass: {sql}"),
        (Err(_), Err(_)) => {}
        _ => panic!("bypass (results differ): {sql}\n{with_others:?}\n{without:?}"),
    }
    if let Ok(rows) = with_others {
        for row in rows {
            assert!(
                !row.contains("OTHER") && !row.contains("sk_secret"),
                "leak: {sql}: {row}"
            );
        }
    }
}

fn unescape(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[test]
fn the_adversarial_corpus_has_no_bypass() {
    let corpus = include_str!("rental/corpus.txt");
    let (full, alone) = (database(true), database(false));
    let tables = tables();
    let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
    let (mut refused, mut safe, mut accepted_safe) = (0, 0, 0);
    for line in corpus.lines().filter(|l| !l.starts_with('#')) {
        let (kind, sql) = line.split_at(1);
        let sql = unescape(sql.strip_prefix(' ').unwrap_or(sql));
        let verdict = validate(&sql, &tables);
        match kind {
            "R" => {
                assert!(
                    verdict.is_err(),
                    "accepted a statement that must be refused: {sql:?}"
                );
                refused += 1;
            }
            "S" => {
                if let Ok(valid) = verdict {
                    assert_scoped(valid.sql(), &full, &alone);
                    accepted_safe += 1;
                }
                safe += 1;
            }
            other => panic!("corpus line kind {other:?}"),
        }
    }
    assert!(
        refused + safe >= 150,
        "corpus too small: {}",
        refused + safe
    );
    assert!(
        accepted_safe >= 20,
        "too few legitimate statements accepted: {accepted_safe}"
    );
    println!("corpus: {refused} refused, {safe} scoped ({accepted_safe} accepted), 0 bypasses");
}

#[test]
fn accepted_statements_run_re_serialised_without_comments() {
    let tables = ["rooms"];
    let valid = validate(
        "SELECT id /* note */ FROM rooms -- tail\n WHERE price < 5",
        &tables,
    )
    .unwrap();
    assert_eq!(valid.sql(), "SELECT id FROM rooms WHERE price < 5");
    let error = validate("SELECT * FROM rental_rows", &tables).unwrap_err();
    assert!(error.0.contains("no such table: rental_rows"), "{error}");
    assert!(validate(&"x".repeat(4001), &tables).is_err());
}

#[test]
fn my_rooms_holds_only_the_signed_in_users_rooms() {
    let full = database(true);
    let valid = validate("SELECT id FROM my_rooms", &["rooms", "my_rooms"]).unwrap();
    assert_eq!(scoped_rows(&full, valid.sql()).unwrap(), vec!["r-0"]);
}

/// Pieces statements are built from: allowed and forbidden tables, harmless and hostile
/// predicates, comments, set operations, CTEs.
fn table() -> impl Strategy<Value = &'static str> {
    let allowed = prop::sample::select(vec![
        "rooms",
        "posts",
        "room_seeking_posts",
        "my_rooms",
        "ROOMS",
        "\"rooms\"",
    ]);
    let forbidden = prop::sample::select(vec![
        "rental_rows",
        "sqlite_master",
        "sites",
        "messages",
        "main.rooms",
        "pragma_table_info('rooms')",
        "json_each('[1]')",
    ]);
    prop_oneof![4 => allowed, 1 => forbidden]
}

fn predicate() -> BoxedStrategy<String> {
    let leaf = prop::sample::select(vec![
        "1 = 1".to_string(),
        "price < 2500000".into(),
        "district = 'Quận 1'".into(),
        "site_id = 's2'".into(),
        "id LIKE 'o%'".into(),
        "title = 'OTHER listing'".into(),
        "owner_id = 'u1'".into(),
        "price IS NOT NULL".into(),
        "lower(title) LIKE '%phòng%'".into(),
        "load_extension('x') IS NULL".into(),
        "id = ?1".into(),
    ]);
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} OR {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} AND {b}")),
            (table(), inner.clone())
                .prop_map(|(t, p)| format!("id IN (SELECT id FROM {t} WHERE {p})")),
            (table(), inner).prop_map(|(t, p)| format!("EXISTS (SELECT 1 FROM {t} WHERE {p})")),
        ]
    })
    .boxed()
}

fn select() -> BoxedStrategy<String> {
    let projection = prop::sample::select(vec![
        "*",
        "id",
        "id, title",
        "count(*) AS n",
        "max(price) AS p",
    ]);
    (projection, table(), prop::option::of(predicate()))
        .prop_map(|(p, t, w)| match w {
            Some(w) => format!("SELECT {p} FROM {t} WHERE {w}"),
            None => format!("SELECT {p} FROM {t}"),
        })
        .boxed()
}

fn statement() -> impl Strategy<Value = String> {
    let tail = prop::sample::select(vec![
        "",
        " ORDER BY 1",
        " LIMIT 3",
        " -- c\n",
        " /* ; DROP TABLE sites */",
        "; DELETE FROM sites",
    ]);
    (
        select(),
        prop::option::of(select()),
        prop::option::of(table()),
        tail,
    )
        .prop_map(|(first, union, cte, tail)| {
            let mut sql = first;
            if let Some(second) = union {
                sql = format!("{sql} UNION ALL {second}");
            }
            if let Some(t) = cte {
                sql = format!(
                    "WITH c AS (SELECT * FROM {t}) {}",
                    sql.replacen("FROM ", "FROM c, ", 1)
                );
            }
            format!("{sql}{tail}")
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Any accepted statement, executed, returns only the site's rows.
    #[test]
    fn any_accepted_statement_returns_only_the_sites_rows(sql in statement()) {
        let (full, alone) = (database(true), database(false));
        let tables = tables();
        let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
        if let Ok(valid) = validate(&sql, &tables) {
            assert_scoped(valid.sql(), &full, &alone);
            for forbidden in ["rental_rows", "sqlite_master", "sites", "messages", "main.", "pragma", "json_each", "?1"] {
                prop_assert!(!valid.sql().contains(forbidden), "{sql} accepted as {}", valid.sql());
            }
        }
    }
}

/// The check above can fail: a statement that reaches the physical table is caught.
#[test]
#[should_panic(expected = "bypass")]
fn the_scoping_check_catches_a_statement_that_reaches_other_sites() {
    let (full, alone) = (database(true), database(false));
    assert_scoped("SELECT data FROM rental_rows", &full, &alone);
}

/// The property above is not vacuous: a good share of the generated statements is accepted
/// (and executed), and a good share refused.
#[test]
fn the_generated_statements_exercise_both_verdicts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let tables = tables();
    let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
    let mut runner = TestRunner::deterministic();
    let strategy = statement();
    let (mut accepted, total) = (0, 400);
    for _ in 0..total {
        let sql = strategy.new_tree(&mut runner).unwrap().current();
        if validate(&sql, &tables).is_ok() {
            accepted += 1;
        }
    }
    assert!(
        accepted >= total / 5 && accepted <= total * 9 / 10,
        "{accepted} of {total} accepted"
    );
    println!("generated statements: {accepted} of {total} accepted");
}

/// What the model is told when it writes anything but exactly one query: the reason names
/// the rule it broke (only queries are parsed; any other statement is refused by its first
/// keyword, and a second statement is refused whatever it is).
#[test]
fn anything_but_exactly_one_query_is_refused_with_its_reason() {
    let tables = ["rooms"];
    let refused = |sql: &str| validate(sql, &tables).unwrap_err().to_string();
    for sql in [
        "DROP TABLE rooms",
        "PRAGMA table_info(rooms)",
        "ATTACH DATABASE 'x' AS y",
        "EXPLAIN SELECT * FROM rooms",
        "CREATE TABLE t (x",
        "; INSERT INTO rooms (id) VALUES (1)",
    ] {
        assert_eq!(refused(sql), "only a SELECT statement is allowed", "{sql}");
    }
    for sql in ["", " ; ;", "-- nothing"] {
        assert!(refused(sql).contains("exactly one SELECT"), "{sql}");
    }
    for sql in [
        "SELECT id FROM rooms; SELECT id FROM rooms",
        "SELECT id FROM rooms; DROP TABLE rooms",
    ] {
        assert!(refused(sql).contains("exactly one SELECT"), "{sql}");
    }
    for sql in ["SELECT id FROM rooms garbage here", "rooms", "42"] {
        assert!(
            refused(sql).starts_with("syntax error"),
            "{sql}: {}",
            refused(sql)
        );
    }
    // Queries in each form sqlparser starts one with are parsed; `;` around them is fine.
    for sql in [
        "SELECT id FROM rooms",
        ";SELECT id FROM rooms;;",
        "(SELECT id FROM rooms)",
        "WITH r AS (SELECT id FROM rooms) SELECT id FROM r",
    ] {
        assert!(
            validate(sql, &tables).is_ok(),
            "{sql}: {:?}",
            validate(sql, &tables)
        );
    }
}
