//! The boundaries templates need beyond `shop`'s, through their in-memory doubles: read-only
//! SQL over one site's tables (row cap, site and user scoping, bound parameters), web
//! search (ranking, citable sources) and the key-value cache (TTL on a manual clock).
#![allow(clippy::unwrap_used)]

use concierge_core::boundary::{
    CacheKey, ColumnSchema, ColumnType, KvCache, ReadOnlyQuery, SqlReader, SqlRows, SqlScope,
    TableSchema, WebSearch, is_web_url,
};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use concierge_core::graph::block_on;
use concierge_core::memory::{
    ManualClock, MemoryCache, MemoryPage, MemorySearch, MemorySql, MemoryTable,
};
use serde_json::{Value, json};

const SITE_A: &str = "site-a";
const SITE_B: &str = "site-b";

fn rooms_schema() -> TableSchema {
    TableSchema::new(
        "rooms",
        vec![
            ColumnSchema::new("id", ColumnType::Text),
            ColumnSchema::new("title", ColumnType::Text),
            ColumnSchema::new("district", ColumnType::Text).described("Quận"),
            ColumnSchema::new("price", ColumnType::Integer).described("VND per month"),
        ],
    )
    .described("Rooms for rent")
}

/// Site A: five rooms; site B: two rooms of its own and a `payroll` table.
fn sql() -> MemorySql {
    let sql = MemorySql::new();
    let rooms = [
        ("a1", "Phòng trọ Lan Anh", "Quận 1", 3_500_000),
        ("a2", "Phòng trọ ABC", "Quận 1", 2_800_000),
        ("a3", "Studio Gò Vấp", "Gò Vấp", 4_200_000),
        ("a4", "Phòng gác lửng", "Quận 1", 2_800_000),
        ("a5", "Căn hộ mini", "Quận 3", 6_000_000),
    ];
    let mut table = MemoryTable::new(rooms_schema());
    for (id, title, district, price) in rooms {
        table = table.row(json!({"id": id, "title": title, "district": district, "price": price}));
    }
    table = table.row(json!({"id": "a6", "title": "Chưa có giá", "district": "Quận 1"}));
    sql.add_table(SITE_A, table);
    sql.add_table(
        SITE_B,
        MemoryTable::new(rooms_schema())
            .row(json!({"id": "b1", "title": "B's room", "district": "Quận 1", "price": 1}))
            .row(json!({"id": "b2", "title": "B's other", "district": "Quận 1", "price": 2})),
    );
    sql.add_table(
        SITE_B,
        MemoryTable::new(TableSchema::new(
            "payroll",
            vec![ColumnSchema::new("salary", ColumnType::Integer)],
        ))
        .row(json!({"salary": 9})),
    );
    sql
}

fn query(sql: &MemorySql, scope: SqlScope<'_>, q: ReadOnlyQuery, max_rows: usize) -> SqlRows {
    block_on(sql.query(scope, &q, max_rows)).unwrap()
}

fn refused(sql: &MemorySql, scope: SqlScope<'_>, q: &str) -> ServiceError {
    block_on(sql.query(scope, &ReadOnlyQuery::new(q), 100)).unwrap_err()
}

fn ids(rows: &SqlRows) -> Vec<&str> {
    (0..rows.rows.len())
        .map(|i| rows.get(i, "id").and_then(Value::as_str).unwrap())
        .collect()
}

#[test]
fn the_row_cap_returns_the_first_rows_and_says_more_existed() {
    let sql = sql();
    let all = ReadOnlyQuery::new("SELECT id FROM rooms ORDER BY id");
    let capped = query(&sql, SqlScope::site(SITE_A), all.clone(), 4);
    assert_eq!(ids(&capped), ["a1", "a2", "a3", "a4"]);
    assert!(capped.truncated);

    for max_rows in [6, 7, 100] {
        let whole = query(&sql, SqlScope::site(SITE_A), all.clone(), max_rows);
        assert_eq!(whole.rows.len(), 6);
        assert!(!whole.truncated, "max_rows {max_rows}");
    }
    // The statement's own LIMIT is not truncation; the cap still applies on top of it.
    let limited = ReadOnlyQuery::new("SELECT id FROM rooms ORDER BY id LIMIT 3");
    assert!(!query(&sql, SqlScope::site(SITE_A), limited.clone(), 3).truncated);
    let both = query(&sql, SqlScope::site(SITE_A), limited, 2);
    assert_eq!((ids(&both), both.truncated), (vec!["a1", "a2"], true));
    assert_eq!(query(&sql, SqlScope::site(SITE_A), all, 0).rows.len(), 0);
}

#[test]
fn a_statement_reads_only_its_own_sites_tables() {
    let sql = sql();
    let rooms = query(
        &sql,
        SqlScope::site(SITE_B),
        ReadOnlyQuery::new("SELECT * FROM rooms"),
        100,
    );
    assert_eq!(ids(&rooms), ["b1", "b2"]);
    assert_eq!(rooms.columns, ["id", "title", "district", "price"]);

    // Site A cannot see B's payroll: the same answer as for a table nobody has.
    let foreign = refused(&sql, SqlScope::site(SITE_A), "SELECT * FROM payroll");
    let missing = refused(&sql, SqlScope::site(SITE_A), "SELECT * FROM nothing");
    assert_eq!(foreign.kind, ServiceErrorKind::Invalid);
    assert_eq!(foreign.detail, "no such table: payroll");
    assert_eq!(missing.detail, "no such table: nothing");
    assert!(
        refused(&sql, SqlScope::site("site-c"), "SELECT * FROM rooms")
            .detail
            .contains("no such table")
    );

    let schema = |scope| block_on(sql.schema(scope)).unwrap();
    assert_eq!(schema(SqlScope::site(SITE_A)), [rooms_schema()]);
    let names: Vec<String> = schema(SqlScope::site(SITE_B))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["rooms", "payroll"]);
    assert!(schema(SqlScope::site("site-c")).is_empty());
}

#[test]
fn user_tables_are_visible_to_their_user_only() {
    let sql = sql();
    let mine = MemoryTable::new(rooms_schema()).row(json!({"id": "m1", "title": "Mine"}));
    sql.add_user_table(SITE_A, "landlord-1", mine);
    let own = MemoryTable::new(TableSchema::new("my_rooms", rooms_schema().columns))
        .row(json!({"id": "m2"}));
    sql.add_user_table(SITE_A, "landlord-1", own);
    let all = ReadOnlyQuery::new("SELECT id FROM rooms");
    let mine = ReadOnlyQuery::new("SELECT id FROM my_rooms");

    let landlord = SqlScope::user(SITE_A, "landlord-1");
    assert_eq!(ids(&query(&sql, landlord, mine.clone(), 10)), ["m2"]);
    // Their own `rooms` shadows the site's.
    assert_eq!(ids(&query(&sql, landlord, all.clone(), 10)), ["m1"]);
    let other = SqlScope::user(SITE_A, "landlord-2");
    assert_eq!(query(&sql, other, all, 10).rows.len(), 6);
    for scope in [
        other,
        SqlScope::site(SITE_A),
        SqlScope::user(SITE_B, "landlord-1"),
    ] {
        let error = block_on(sql.query(scope, &mine, 10)).unwrap_err();
        assert_eq!(error.detail, "no such table: my_rooms");
    }
    let names: Vec<String> = block_on(sql.schema(landlord))
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["rooms", "my_rooms"]);
}

#[test]
fn values_are_bound_never_spliced() {
    let sql = sql();
    let cheap = ReadOnlyQuery::new(
        "select ID, price as gia from ROOMS where district = ?1 and price <= ? order by price desc, id",
    )
    .bind("Quận 1")
    .bind(3_000_000);
    let rows = query(&sql, SqlScope::site(SITE_A), cheap, 10);
    assert_eq!(rows.columns, ["ID", "gia"]);
    assert_eq!(
        rows.rows,
        [
            [json!("a2"), json!(2_800_000)],
            [json!("a4"), json!(2_800_000)]
        ]
    );

    let injection =
        ReadOnlyQuery::new("SELECT id FROM rooms WHERE district = ?1").bind("Quận 1' OR '1'='1");
    assert!(
        query(&sql, SqlScope::site(SITE_A), injection, 10)
            .rows
            .is_empty()
    );

    let numbered = ReadOnlyQuery::new("SELECT id FROM rooms WHERE price > ?2 AND district = ?1")
        .bind("Quận 1")
        .bind(3_000_000);
    assert_eq!(
        ids(&query(&sql, SqlScope::site(SITE_A), numbered, 10)),
        ["a1"]
    );

    let unbound = ReadOnlyQuery::new("SELECT id FROM rooms WHERE price > ?3").bind(1);
    let error = block_on(sql.query(SqlScope::site(SITE_A), &unbound, 10)).unwrap_err();
    assert_eq!(
        (error.kind, error.detail.as_str()),
        (ServiceErrorKind::Invalid, "parameter ?3 is not bound")
    );
}

#[test]
fn the_subset_counts_matches_patterns_and_nulls() {
    let sql = sql();
    let run = |text: &str| query(&sql, SqlScope::site(SITE_A), ReadOnlyQuery::new(text), 10);
    let count = run("SELECT COUNT(*) AS n FROM rooms WHERE district = 'Quận 1'");
    assert_eq!(
        (count.columns, count.rows),
        (vec!["n".to_string()], vec![vec![json!(4)]])
    );
    assert_eq!(
        ids(&run("SELECT id FROM rooms WHERE title LIKE '%PHÒNG TRỌ%'")),
        Vec::<&str>::new()
    );
    assert_eq!(
        ids(&run("SELECT id FROM rooms WHERE title LIKE 'phòng tr_ %'")),
        ["a1", "a2"]
    );
    assert_eq!(
        ids(&run("SELECT id FROM rooms WHERE title NOT LIKE 'Phòng%'")),
        ["a3", "a5", "a6"]
    );
    assert_eq!(
        ids(&run("SELECT id FROM rooms WHERE price IS NULL")),
        ["a6"]
    );
    // NULL is unknown to a comparison, and sorts first.
    assert_eq!(run("SELECT id FROM rooms WHERE price != 0").rows.len(), 5);
    assert_eq!(
        ids(&run("SELECT id FROM rooms ORDER BY price LIMIT 2 OFFSET 0")),
        ["a6", "a2"]
    );
    assert_eq!(
        ids(&run(
            "SELECT id FROM rooms WHERE price > -1 ORDER BY price DESC LIMIT 1 OFFSET 1"
        )),
        ["a3"]
    );
    // A text never equals a number.
    assert!(
        run("SELECT id FROM rooms WHERE price = '2800000'")
            .rows
            .is_empty()
    );
}

#[test]
fn anything_but_one_select_is_refused() {
    let sql = sql();
    let site = SqlScope::site(SITE_A);
    for (statement, detail) in [
        ("DELETE FROM rooms", "only SELECT statements are run"),
        (
            "UPDATE rooms SET price = 0",
            "only SELECT statements are run",
        ),
        ("DROP TABLE rooms", "only SELECT statements are run"),
        (
            "SELECT * FROM rooms; DROP TABLE rooms",
            "one statement only",
        ),
        (
            "SELECT * FROM rooms WHERE price > 1 OR 1 = 1",
            "OR is not supported",
        ),
        ("SELECT nope FROM rooms", "no such column: nope"),
        (
            "SELECT * FROM rooms WHERE title = 'open",
            "unterminated string",
        ),
        ("SELECT sum(price) FROM rooms", "expected FROM"),
    ] {
        let error = refused(&sql, site, statement);
        assert_eq!(
            (error.kind, error.detail.as_str()),
            (ServiceErrorKind::Invalid, detail),
            "{statement}"
        );
    }
    // Nothing was changed.
    assert_eq!(
        query(&sql, site, ReadOnlyQuery::new("SELECT id FROM rooms"), 10)
            .rows
            .len(),
        6
    );
    assert_eq!(sql.statements().len(), 9);

    sql.set_unavailable(true);
    assert_eq!(
        refused(&sql, site, "SELECT id FROM rooms").kind,
        ServiceErrorKind::Unavailable
    );
    assert_eq!(
        block_on(sql.schema(site)).unwrap_err().kind,
        ServiceErrorKind::Unavailable
    );
}

fn corpus() -> MemorySearch {
    MemorySearch::with_pages(vec![
        MemoryPage::new(
            "Chăm sóc răng miệng",
            "https://nhakhoa.example/cham-soc",
            "Đánh răng hai lần mỗi ngày.",
        ),
        MemoryPage::new(
            "Đau răng khôn",
            "https://nhakhoa.example/rang-khon",
            "Răng khôn mọc lệch gây đau răng. RĂNG cần khám.",
        )
        .published("2025-08-20"),
        MemoryPage::new(
            "Giá phòng trọ",
            "https://rooms.example/",
            "Không liên quan.",
        ),
        MemoryPage::new("Răng", "ftp://files.example/rang", "răng răng răng răng"),
        MemoryPage::new(
            "Răng sứ",
            "https://nhakhoa.example/cham-soc",
            "răng răng răng răng răng răng",
        ),
        MemoryPage::new(
            "Niềng răng",
            "https://nhakhoa.example/nieng",
            "Niềng răng cho trẻ.",
        ),
    ])
}

#[test]
fn search_ranks_pages_by_hits_and_returns_citable_sources() {
    let search = corpus();
    let sources = block_on(search.search("RĂNG đau", 10)).unwrap();
    let urls: Vec<&str> = sources.iter().map(|s| s.url.as_str()).collect();
    // 7 hits (the duplicate URL's best page; its other page has 1), 6 (4 × răng, 2 × đau),
    // 2; the ftp page and the unrelated one are not sources.
    assert_eq!(
        urls,
        [
            "https://nhakhoa.example/cham-soc",
            "https://nhakhoa.example/rang-khon",
            "https://nhakhoa.example/nieng",
        ]
    );
    assert_eq!(sources[0].title, "Răng sứ");
    let wisdom = &sources[1];
    assert_eq!(wisdom.title, "Đau răng khôn");
    assert_eq!(
        wisdom.snippet,
        "Răng khôn mọc lệch gây đau răng. RĂNG cần khám."
    );
    assert_eq!(wisdom.published.as_deref(), Some("2025-08-20"));
    assert!(sources.iter().all(|s| is_web_url(&s.url)));

    let top = block_on(search.search("răng", 2)).unwrap();
    assert_eq!(top.len(), 2);
    assert!(block_on(search.search("bitcoin", 5)).unwrap().is_empty());
    assert!(block_on(search.search("   ", 5)).unwrap().is_empty());
    assert_eq!(search.queries(), ["RĂNG đau", "răng", "bitcoin", "   "]);

    search.set_unavailable(true);
    let error = block_on(search.search("răng", 5)).unwrap_err();
    assert_eq!(error.kind, ServiceErrorKind::Unavailable);
}

#[test]
fn only_absolute_http_urls_are_citable() {
    for url in [
        "https://a.example",
        "HTTP://a.example/x?y#z",
        "https://nhà.vn/p",
    ] {
        assert!(is_web_url(url), "{url}");
    }
    for url in [
        "ftp://a.example",
        "javascript:alert(1)",
        "https://",
        "http:///path",
        "/rooms/1",
        "https://a b.example",
        "",
    ] {
        assert!(!is_web_url(url), "{url}");
    }
}

const T0: u64 = 1_767_225_600_000;

#[test]
fn the_cache_returns_what_was_put_until_it_expires() {
    let clock = ManualClock::new(T0);
    let cache = MemoryCache::new(clock.clone());
    let key = CacheKey::for_site(SITE_A, &["rag_tool", "giờ làm việc", "public"]);
    let other = CacheKey::for_site(SITE_A, &["rag_tool", "giờ làm việc", "internal"]);
    assert_eq!(block_on(cache.get(&key)).unwrap(), None);

    block_on(cache.put(&key, "8h-17h", 3600)).unwrap();
    assert_eq!(
        block_on(cache.get(&key)).unwrap().as_deref(),
        Some("8h-17h")
    );
    assert_eq!(block_on(cache.get(&other)).unwrap(), None);

    // Overwrite: the new value, and the new TTL from now.
    clock.advance_ms(1_800_000);
    block_on(cache.put(&key, "9h-18h", 3600)).unwrap();
    clock.advance_ms(3_599_999);
    assert_eq!(
        block_on(cache.get(&key)).unwrap().as_deref(),
        Some("9h-18h")
    );
    clock.advance_ms(1);
    assert_eq!(block_on(cache.get(&key)).unwrap(), None);
    assert!(cache.keys().is_empty());
}

#[test]
fn ttls_shorter_than_a_minute_last_a_minute() {
    let clock = ManualClock::new(T0);
    let cache = MemoryCache::new(clock.clone());
    let short = CacheKey::for_site(SITE_A, &["short"]);
    let long = CacheKey::for_site(SITE_A, &["long"]);
    block_on(cache.put(&short, "s", 1)).unwrap();
    block_on(cache.put(&long, "l", 120)).unwrap();
    clock.advance_ms(59_999);
    assert_eq!(block_on(cache.get(&short)).unwrap().as_deref(), Some("s"));
    clock.advance_ms(1);
    assert_eq!(block_on(cache.get(&short)).unwrap(), None);
    assert_eq!(cache.keys(), core::slice::from_ref(&long));
    clock.advance_ms(60_000);
    assert_eq!(block_on(cache.get(&long)).unwrap(), None);

    cache.set_unavailable(true);
    assert_eq!(
        block_on(cache.get(&long)).unwrap_err().kind,
        ServiceErrorKind::Unavailable
    );
    assert_eq!(
        block_on(cache.put(&long, "x", 60)).unwrap_err().kind,
        ServiceErrorKind::Unavailable
    );
}

#[test]
fn cache_keys_are_scoped_to_a_site_and_their_parts() {
    let key = CacheKey::for_site(SITE_A, &["ab", "c"]);
    assert!(key.as_str().starts_with("cache:site-a:"));
    assert_eq!(key.as_str().len(), "cache:site-a:".len() + 64);
    assert_eq!(key, CacheKey::for_site(SITE_A, &["ab", "c"]));
    assert_ne!(key, CacheKey::for_site(SITE_A, &["a", "bc"]));
    assert_ne!(key, CacheKey::for_site(SITE_A, &["abc"]));
    assert_ne!(key, CacheKey::for_site(SITE_B, &["ab", "c"]));
    assert!(key.is_for_site(SITE_A));
    assert!(!key.is_for_site(SITE_B));
    assert!(!key.is_for_site("site"));
    assert!(!CacheKey::for_site("site-a:x", &["ab", "c"]).is_for_site(SITE_A));
    let long = "q".repeat(10_000);
    assert_eq!(
        CacheKey::for_site(SITE_A, &[&long]).as_str().len(),
        key.as_str().len()
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Whatever the data, the cap and the statement: at most `max_rows` rows, `truncated`
    /// exactly when the uncapped result was longer, and only the scope's own site's rows.
    #[test]
    fn the_cap_and_the_site_hold_for_any_data(
        prices_a in proptest::collection::vec(proptest::option::of(0i64..10), 0..30),
        prices_b in proptest::collection::vec(0i64..10, 0..30),
        threshold in 0i64..10,
        limit in proptest::option::of(0usize..40),
        max_rows in 0usize..40,
    ) {
        let sql = MemorySql::new();
        let fill = |site: &str, prices: Vec<Option<i64>>| {
            let mut table = MemoryTable::new(rooms_schema());
            for (i, price) in prices.into_iter().enumerate() {
                table = table.row(json!({"id": format!("{site}/{i}"), "price": price}));
            }
            sql.add_table(site, table);
        };
        fill(SITE_A, prices_a.clone());
        fill(SITE_B, prices_b.into_iter().map(Some).collect());
        let text = match limit {
            Some(n) => format!("SELECT id, price FROM rooms WHERE price >= ?1 ORDER BY id LIMIT {n}"),
            None => "SELECT id, price FROM rooms WHERE price >= ?1 ORDER BY id".into(),
        };
        let result = query(&sql, SqlScope::site(SITE_A), ReadOnlyQuery::new(text).bind(threshold), max_rows);

        let matching = prices_a.iter().filter(|p| p.is_some_and(|p| p >= threshold)).count();
        let uncapped = limit.map_or(matching, |n| matching.min(n));
        proptest::prop_assert_eq!(result.rows.len(), uncapped.min(max_rows));
        proptest::prop_assert_eq!(result.truncated, uncapped > max_rows);
        for row in &result.rows {
            proptest::prop_assert!(row[0].as_str().unwrap().starts_with("site-a/"));
            proptest::prop_assert!(row[1].as_i64().unwrap() >= threshold);
        }
    }
}
