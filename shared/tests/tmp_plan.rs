#![allow(clippy::unwrap_used, clippy::print_stdout)]
use concierge_core::flows::rental::schema::RentalSchema;
use rusqlite::{Connection, params};
#[test]
fn plan() {
    let db = Connection::open_in_memory().unwrap();
    db.execute_batch(include_str!("../../migrations-listings/0001_rental_rows.sql")).unwrap();
    db.execute_batch(&std::fs::read_to_string("/tmp/hsql/seed.sql").unwrap()).unwrap();
    let v: String = db.query_row("select sqlite_version()", [], |r| r.get(0)).unwrap();
    println!("{v}");
    for q in std::env::var("Q").unwrap().split(";;") {
        let s = RentalSchema::default().scoped_sql(q, true);
        let mut p = db.prepare(&format!("EXPLAIN QUERY PLAN {s}")).unwrap();
        let rows: Vec<(i64, i64, String)> = p.query_map(params!["site_rental_demo", 51, "landlord-7"], |r| Ok((r.get(0)?, r.get(1)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
        for r in rows { println!("{r:?}"); }
        let t = std::time::Instant::now();
        let mut st = db.prepare(&s).unwrap();
        let n = st.query_map(params!["site_rental_demo", 51, "landlord-7"], |_| Ok(())).unwrap().count();
        println!("{n} rows {:?}", t.elapsed());
    }
}
