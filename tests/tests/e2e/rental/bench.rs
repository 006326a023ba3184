//! Issue 14's benchmark: a canonical-hit turn and a filtered query over 5,000 listings.

use std::time::Instant;

use concierge_e2e::api::history;
use concierge_e2e::{agent, into_parts};
use serde_json::{Value, json};

use super::rental_site;

/// Benchmark (issue 14): a canonical-hit turn and a filtered query over 5,000 listings,
/// under `wrangler dev` with the scripted upstream (its replies take ~10 ms). Prints the
/// figures; run with `scripts/bench-rental.sh` (or `-- --ignored --nocapture`).
#[test]
#[ignore = "benchmark: run explicitly"]
#[allow(clippy::print_stdout)]
fn bench_a_canonical_hit_and_a_filtered_query_over_5000_listings() {
    let r = rental_site("Rental bench");
    let districts = ["Quận 1", "Quận 3", "Gò Vấp", "Cầu Giấy", "Đống Đa"];
    // The site starts with 3 rooms and holds at most 5,000: 4,997 more make 5,000.
    for batch in 0..5 {
        let size = if batch == 4 { 997 } else { 1000 };
        let rows: Vec<Value> = (0..size)
            .map(|i| {
                let n = batch * 1000 + i;
                json!({"id": format!("b{n}"), "title": format!("Phòng {n}"), "price": 1_000_000 + (n * 7919) % 5_000_000,
                    "area_m2": 10 + n % 40, "district": districts[n % 5], "city": "TP.HCM",
                    "status": if n % 4 == 0 { "rented" } else { "available" }, "created_at": "2026-10-01"})
            })
            .collect();
        let (status, body) = into_parts(
            agent()
                .put(&r.worker.url("/admin/rental/room"))
                .set("x-api-key", &r.site.secret_key)
                .send_json(json!({"rows": rows})),
        );
        assert_eq!(status, 200, "{body}");
    }
    let conversation = r.conversation(json!({}));
    let filtered = "SELECT id, title, price FROM rooms WHERE district = 'Quận 1' AND status = 'available' \
                    AND price < 3000000 ORDER BY price ASC LIMIT 20";
    let (mut cold, mut sql) = (Vec::new(), Vec::new());
    for round in 0..5 {
        r.orchestrate("QUERY", true, "LIST", "");
        r.reply(filtered);
        r.reply("Đây là các phòng\n---END\nLIST: null TABLE: null CHART: null");
        r.reply("{\"isValid\": false}");
        let started = Instant::now();
        let (_, payloads, end) = r.ask(
            &r.site.secret_key,
            &conversation,
            &format!("Phòng rẻ quận 1 lần {round}"),
        );
        cold.push(started.elapsed().as_millis());
        assert_eq!(end, "completed");
        assert_eq!(payloads[0]["data"]["total"], 20);
        let messages = history(r.worker, &r.site.secret_key, &conversation);
        let last = messages.last().expect("reply");
        sql.push(last["metadata"]["sql_ms"].as_u64().expect("sql_ms") as u128);
    }
    // Learn one question, then time its canonical reuse. Only a question that starts its
    // session is learned (it is read alone), so each of these turns opens a conversation.
    r.orchestrate("QUERY", true, "LIST", "");
    r.reply(filtered);
    r.reply("Đây là các phòng");
    r.reply("{\"isValid\": true}");
    let learning = r.conversation(json!({}));
    r.ask(&r.site.secret_key, &learning, "Phòng rẻ còn trống ở quận 1");
    let mut hits = Vec::new();
    for _ in 0..5 {
        let conversation = r.conversation(json!({}));
        r.orchestrate("QUERY", true, "LIST", "");
        r.reply("Đây là các phòng");
        let started = Instant::now();
        r.ask(
            &r.site.secret_key,
            &conversation,
            "Phòng rẻ còn trống ở quận 1",
        );
        hits.push(started.elapsed().as_millis());
        let messages = history(r.worker, &r.site.secret_key, &conversation);
        assert_eq!(
            messages.last().expect("reply")["metadata"]["canonical"],
            "hard"
        );
    }
    let median = |v: &mut Vec<u128>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    println!(
        "rental bench: generated-SQL turn over 5,000 listings (4 model calls): median {} ms of {:?}",
        median(&mut cold),
        cold
    );
    println!(
        "rental bench: the filtered query's SQL step (the validator Worker's hop over SQL_CHECK, then D1: 5,000 listings, site-scoped CTEs), per attempt: median {} ms of {:?}",
        median(&mut sql),
        sql
    );
    println!(
        "rental bench: canonical-hit turn (2 model calls, SQL reused): median {} ms of {:?}",
        median(&mut hits),
        hits
    );
}
