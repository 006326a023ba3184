//! Seeding many sites fast: one prototype site per template created through the operator
//! API, a sample through the API too, and the rest copied from the prototypes' own rows by
//! generated SQL (`INSERT … SELECT` joined with a table of new ids, names and key digests,
//! run once with `wrangler d1 execute --local --file`). Every text column of the copied
//! rows has the prototype's id, name and key digests replaced by the new site's, so a copy
//! is the row the API would have written. Sites created both ways are read back through
//! `GET /admin/site` and compared.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The five templates and their share of the sites (per 20).
pub const TEMPLATES: [(&str, usize); 5] = [
    ("shop", 12),
    ("knowledge", 4),
    ("analyst", 2),
    ("rental", 1),
    ("guarded", 1),
];

/// The origin every site allows (the widget's page).
pub const ORIGIN: &str = "https://shop.example";

/// One seeded site.
#[derive(Debug, Clone)]
pub struct Site {
    pub keys: TestSite,
    pub template: &'static str,
    /// Created through the operator API (not copied by SQL).
    pub by_api: bool,
}

/// The template of site number `i` (site 0 is the busiest under Zipf: a shop).
pub fn template_of(i: usize) -> &'static str {
    let mut slot = i % 20;
    for (name, share) in TEMPLATES {
        if slot < share {
            return name;
        }
        slot -= share;
    }
    "shop"
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn digest(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// The creation body of a site of `template` whose model is the scripted upstream.
fn creation_body(name: &str, template: &str, upstream: &str) -> Value {
    let mut body = json!({
        "name": name,
        "template": template,
        "allowed_origins": [ORIGIN],
        // The Vectorize double's index has the deployment's 1,024 dimensions.
        "llm": {"provider": "openai", "base_url": format!("{upstream}/v1"), "model": "scripted",
                "embed_model": "scripted-embed", "embed_dimensions": 1024},
    });
    if template == "guarded" {
        // No `assistant_id`: its OpenAI model id stays `concierge-<site id>`, as every site's.
        body["guarded"] = json!({"allowed_models": ["scripted"], "search": {"provider": "local"}});
    }
    body
}

fn create(worker: &Worker, name: &str, template: &'static str, upstream: &str) -> Site {
    let keys = worker.create_site(creation_body(name, template, upstream));
    Site {
        keys,
        template,
        by_api: true,
    }
}

/// `GET /admin/site` without what differs between any two sites (ids, names, keys, times).
pub fn comparable(worker: &Worker, site: &TestSite) -> Value {
    let (status, body) = into_parts(
        agent()
            .get(&worker.url("/admin/site"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "GET /admin/site: {body}");
    let mut json: Value = serde_json::from_str(&body).expect("JSON");
    strip(&mut json, site);
    json
}

fn strip(value: &mut Value, site: &TestSite) {
    match value {
        Value::Object(map) => {
            for key in [
                "id",
                "name",
                "public_key",
                "created_at",
                "updated_at",
                "published_at",
            ] {
                map.remove(key);
            }
            for v in map.values_mut() {
                strip(v, site);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip(v, site)),
        Value::String(s) if s.contains(&site.id) || s.contains(&site.public_key) => {
            *s = s
                .replace(&site.id, "<id>")
                .replace(&site.public_key, "<public key>");
        }
        _ => {}
    }
}

/// The columns of the copied tables (from the database itself, so new migrations are
/// followed), in one `wrangler d1 execute`.
fn columns(worker: &Worker) -> Vec<(String, String)> {
    worker
        .d1_rows(
            "SELECT m.name AS t, c.name AS c FROM sqlite_master m, pragma_table_info(m.name) c \
             WHERE m.type = 'table' AND m.name IN ('sites', 'site_origins', 'site_config_versions') \
             ORDER BY m.name, c.cid",
        )
        .iter()
        .filter_map(|r| Some((r["t"].as_str()?.to_string(), r["c"].as_str()?.to_string())))
        .collect()
}

/// Seed `total` sites: a prototype and `api_per_template` more of each template through the
/// API, the rest by SQL; then compare a sample of each kind through the API.
pub fn seed(worker: &Worker, upstream: &str, total: usize, api_per_template: usize) -> Vec<Site> {
    let started = std::time::Instant::now();
    let mut prototypes = Vec::new();
    for (template, _) in TEMPLATES {
        let name = format!("Bench prototype {template}");
        prototypes.push(create(worker, &name, template, upstream));
    }
    let mut api_made = std::collections::HashMap::<&str, usize>::new();
    let mut sites = Vec::with_capacity(total);
    let mut map = String::new();
    for i in 0..total {
        let template = template_of(i);
        let made = api_made.entry(template).or_default();
        let name = format!("Bench {template} {i:05}");
        if *made < api_per_template {
            *made += 1;
            sites.push(create(worker, &name, template, upstream));
            continue;
        }
        let id = format!("site_bl{i:05}");
        let public_key = format!("pk_{}", &digest(&format!("bench-load public {i}"))[..48]);
        let secret_key = format!("sk_{}", &digest(&format!("bench-load secret {i}"))[..48]);
        let proto = &prototypes[TEMPLATES
            .iter()
            .position(|(t, _)| *t == template)
            .unwrap_or(0)]
        .keys;
        let _ = writeln!(
            map,
            "('{id}','{}','{name}','{}','{}','{}','{public_key}'),",
            proto.id,
            digest(&public_key),
            digest(&secret_key),
            proto.public_key,
        );
        sites.push(Site {
            keys: TestSite {
                id,
                public_key,
                secret_key,
            },
            template,
            by_api: false,
        });
    }
    let by_sql = sites.iter().filter(|s| !s.by_api).count();
    if by_sql > 0 {
        copy_by_sql(worker, &map, by_sql);
    }
    println!(
        "seeded {} sites ({} through the operator API, {by_sql} by SQL) in {:.1} s",
        sites.len() + prototypes.len(),
        sites.len() - by_sql + prototypes.len(),
        started.elapsed().as_secs_f64()
    );
    check_copies(worker, &prototypes, &sites);
    sites
}

/// The generated SQL: a table of new sites, then one `INSERT … SELECT` per table.
fn copy_by_sql(worker: &Worker, map: &str, count: usize) {
    let mut sql = String::from(
        "CREATE TABLE bench_load_map (id TEXT PRIMARY KEY, proto TEXT, name TEXT, pk_hash TEXT, sk_hash TEXT, proto_pk TEXT, pk TEXT);\n",
    );
    // D1 refuses long statements: 200 rows an INSERT.
    let rows: Vec<&str> = map.lines().collect();
    for chunk in rows.chunks(200) {
        sql.push_str("INSERT INTO bench_load_map VALUES\n");
        sql.push_str(chunk.join("\n").trim_end_matches(','));
        sql.push_str(";\n");
    }
    // Each text column: the prototype's id, name and key digests replaced by the copy's.
    let swap = |col: &str| {
        format!(
            "CASE WHEN typeof(t.{col}) = 'text' THEN \
             replace(replace(replace(replace(replace(t.{col}, p.id, m.id), p.name, m.name), \
             p.public_key_hash, m.pk_hash), p.secret_key_hash, m.sk_hash), m.proto_pk, m.pk) \
             ELSE t.{col} END"
        )
    };
    let all = columns(worker);
    for (table, key) in [
        ("sites", "id"),
        ("site_origins", "site_id"),
        ("site_config_versions", "site_id"),
    ] {
        let cols: Vec<&String> = all
            .iter()
            .filter(|(t, _)| t == table)
            .map(|(_, c)| c)
            .collect();
        assert!(!cols.is_empty(), "table {table} has columns");
        let exprs: Vec<String> = cols.iter().map(|c| swap(c)).collect();
        let _ = writeln!(
            sql,
            "INSERT INTO {table} ({}) SELECT {} FROM bench_load_map m \
             JOIN sites p ON p.id = m.proto JOIN {table} t ON t.{key} = m.proto;",
            cols.iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            exprs.join(", ")
        );
    }
    sql.push_str("DROP TABLE bench_load_map;\n");
    let file = worker.state_dir().join("bench-load-sites.sql");
    std::fs::write(&file, sql).expect("write the generated SQL");
    let status = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\" 2>/dev/null; exec wrangler \"$@\"")
        .arg("wrangler")
        .args(["d1", "execute", "DB", "--local", "--persist-to"])
        .arg(worker.state_dir())
        .arg("--file")
        .arg(&file)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("WRANGLER_SEND_METRICS", "false")
        .stdout(Stdio::null())
        .status()
        .expect("run wrangler d1 execute");
    assert!(status.success(), "the generated SQL failed");
    let rows =
        worker.d1_rows("SELECT count(*) AS n FROM sites WHERE id LIKE 'site\\_bl%' ESCAPE '\\'");
    assert_eq!(
        rows[0]["n"].as_u64(),
        Some(count as u64),
        "every generated site is stored"
    );
}

/// Every template: two sites created by SQL read back through the API equal to two created
/// through it (and to the prototype), apart from ids, names, keys and times.
fn check_copies(worker: &Worker, prototypes: &[Site], sites: &[Site]) {
    let mut compared = 0;
    for proto in prototypes {
        let expected = comparable(worker, &proto.keys);
        let sample = sites
            .iter()
            .filter(|s| s.template == proto.template && s.by_api)
            .take(2)
            .chain(
                sites
                    .iter()
                    .filter(|s| s.template == proto.template && !s.by_api)
                    .take(2),
            );
        for site in sample {
            let got = comparable(worker, &site.keys);
            assert_eq!(
                got,
                expected,
                "site {} ({}, by {}) read back differs from the API's",
                site.keys.id,
                site.template,
                if site.by_api { "API" } else { "SQL" }
            );
            compared += 1;
        }
    }
    println!(
        "read back {compared} sites of both kinds: they match the API's (ids, names, keys and times aside)"
    );
}
