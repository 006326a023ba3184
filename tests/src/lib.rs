//! # concierge-e2e
//!
//! End-to-end test harness: starts the real Worker under `wrangler dev` (local workerd,
//! local D1 and KV) on a free port with its own state directory, applies the D1
//! migrations, and waits until `/health` answers. The Worker must have been built
//! (`make build`; `make test` does it).
//!
//! `wrangler dev` runs under a small supervisor shell that holds a pipe from this
//! process: when the test process exits — normally, by panic or by signal — the pipe
//! closes and the supervisor stops the whole wrangler/workerd process group. No test
//! run leaves a Worker behind.

pub mod api;
pub mod bench;
pub mod host_page;
pub mod upstream;
pub mod workers_ai;

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A free TCP port on loopback.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind an ephemeral port on 127.0.0.1")
}

/// The operator token the shared test Worker is started with.
pub const OPERATOR_TOKEN: &str = "op_test_7f3c9a1e5b2d4c6a8e0f";

/// The operator's upstream key (`LLM_API_KEY`) in the shared test Worker: it must reach
/// only the operator's endpoint, never a site's own.
pub const OPERATOR_LLM_KEY: &str = "op-llm-key-3b8e61d07c2f49a5";

/// The secret the shared test Worker seals sites' own LLM keys with (`SITE_KEYS_SECRET`).
pub const SITE_KEYS_SECRET: &str = "test-site-keys-secret-5d2c8f1a9e7b4630b1c4";

/// The vars every test Worker runs with: the operator token and upstream key, the
/// development flags (loopback http endpoints, the debug stream), the secret sealing site
/// keys, the local retrieval path (Vectorize cannot run locally), quick embedding and
/// background-turn retries and short upstream timeouts.
pub fn test_vars() -> Vec<(String, String)> {
    [
        ("OPERATOR_TOKEN", OPERATOR_TOKEN),
        ("LLM_API_KEY", OPERATOR_LLM_KEY),
        ("SITE_KEYS_SECRET", SITE_KEYS_SECRET),
        ("DEV_MODE", "on"),
        ("DEBUG_ROUTES", "on"),
        ("RETRIEVAL_BACKEND", "local"),
        ("EMBED_MAX_ATTEMPTS", "3"),
        ("EMBED_RETRY_BASE_SECONDS", "0"),
        ("TURN_MAX_ATTEMPTS", "2"),
        ("TURN_RETRY_BASE_SECONDS", "1"),
        ("LLM_FIRST_TOKEN_TIMEOUT_MS", "3000"),
        ("LLM_IDLE_TIMEOUT_MS", "3000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain(commit().map(|c| ("CONCIERGE_COMMIT".to_string(), c)))
    .collect()
}

/// The checked-out commit, when git knows it.
pub fn commit() -> Option<String> {
    let output = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(repo_root())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// A site created through the admin API, with its keys.
#[derive(Debug, Clone)]
pub struct TestSite {
    /// Site id.
    pub id: String,
    /// Public (widget) key.
    pub public_key: String,
    /// Secret (server) key.
    pub secret_key: String,
}

/// A running `wrangler dev`.
#[derive(Debug)]
pub struct Worker {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    /// The V8 inspector port of the Worker (for profiling with the DevTools protocol).
    pub inspector_port: u16,
    state_dir: PathBuf,
    supervisor: Child,
}

/// Options for [`Worker::start`].
#[derive(Debug, Clone, Default)]
pub struct WorkerOptions {
    /// Extra `--var NAME:VALUE` bindings.
    pub vars: Vec<(String, String)>,
    /// SQL files executed against local D1 after the migrations.
    pub seed_files: Vec<PathBuf>,
    /// Keep wrangler's local trace collector (the local explorer's observability view,
    /// `X_LOCAL_OBSERVABILITY`) on. Off by default: it records every call the Worker
    /// makes, which the tests do not read, and costs more CPU than the Worker itself.
    pub local_traces: bool,
    /// Seed the demo data (`scripts/seed.sql`) with the demo site allowing this Worker's
    /// own origin, as `make dev` does, so the Worker's own demo page (`/`, key `pk_demo`)
    /// can open its panel.
    pub demo_site: bool,
    /// Run the production retrieval path (`RETRIEVAL_BACKEND=vectorize`) against the local
    /// Vectorize double (tests/doubles/vectorize/), bound as `VECTORIZE` in the same
    /// `wrangler dev` session; `None` keeps the local fallback (the site's object).
    pub vectorize_double: Option<VectorizeDouble>,
    /// Run the Workers AI double (`tests/doubles/workers-ai/`) beside the Worker as its `AI`
    /// binding, asking this script server ([`workers_ai::AiScript`]'s `base_url`) what to
    /// answer. Without it the Worker has no `AI` binding (`wrangler dev --local`).
    pub workers_ai_script: Option<String>,
    /// Leave the SQL validator Worker (sqlcheck/, `concierge-sql`) out of the session, with
    /// the Worker's `SQL_CHECK` service binding aimed at a Worker that runs nowhere: it
    /// then reaches nothing.
    pub without_sql_check: bool,
}

/// The local Vectorize double a [`Worker`] runs against ([`WorkerOptions::vectorize_double`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorizeDouble {
    /// How long a write takes to become visible to queries (Vectorize is eventually
    /// consistent).
    pub delay_ms: u64,
    /// The index's dimensions; `None`: the deployment's (scripts/vectorize-setup.sh).
    pub dimensions: Option<u32>,
}

impl Default for VectorizeDouble {
    fn default() -> Self {
        Self {
            delay_ms: 1_000,
            dimensions: None,
        }
    }
}

/// The `wrangler dev` arguments that bind the Vectorize double (`-c <Concierge config> -c
/// <double config>`), from scripts/vectorize-double.sh writing the configs under `dir`.
pub fn vectorize_double_args(dir: &Path, double: &VectorizeDouble) -> Vec<String> {
    let output = Command::new("sh")
        .arg(repo_root().join("scripts/vectorize-double.sh"))
        .arg(dir)
        .arg(double.delay_ms.to_string())
        .arg(double.dimensions.map(|d| d.to_string()).unwrap_or_default())
        .env("CONCIERGE_ROOT", repo_root())
        .output()
        .expect("run scripts/vectorize-double.sh");
    assert!(
        output.status.success(),
        "scripts/vectorize-double.sh failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The `wrangler dev` arguments that start the SQL validator Worker (sqlcheck/, behind the
/// Worker's `SQL_CHECK` service binding) in the same session, after the Concierge config
/// (the first `-c` is the one served on the port): with `primary`, `-c wrangler.toml`
/// first (when no double wrote its own copy of it).
pub fn dev_configs_tail(root: &Path, primary: bool) -> Vec<String> {
    let mut args = Vec::new();
    if primary {
        args.push("-c".into());
        args.push(root.join("wrangler.toml").to_string_lossy().into_owned());
    }
    args.push("-c".into());
    args.push(
        root.join("sqlcheck/wrangler.toml")
            .to_string_lossy()
            .into_owned(),
    );
    args
}

/// wrangler.toml with its `SQL_CHECK` service binding aimed at a Worker no session runs
/// (`concierge-sql-absent`: a binding to `concierge-sql` would find another session's
/// validator through wrangler's dev registry), written beside it so its relative paths
/// hold (`wrangler.no-sql-check.toml`, ignored by git; replaced only when it changed).
fn config_without_sql_check(root: &Path) -> PathBuf {
    let source = std::fs::read_to_string(root.join("wrangler.toml")).expect("read wrangler.toml");
    let binding = "binding = \"SQL_CHECK\"\nservice = \"concierge-sql\"\n";
    assert!(
        source.contains(binding),
        "wrangler.toml binds SQL_CHECK to concierge-sql"
    );
    let text = source.replace(
        binding,
        "binding = \"SQL_CHECK\"\nservice = \"concierge-sql-absent\"\n",
    );
    let path = root.join("wrangler.no-sql-check.toml");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        let tmp = root.join(format!("wrangler.no-sql-check.toml.{}", std::process::id()));
        std::fs::write(&tmp, &text).expect("write the config without SQL_CHECK");
        std::fs::rename(&tmp, &path).expect("replace the config without SQL_CHECK");
    }
    path
}

impl Worker {
    /// The Worker shared by every test in this test binary, started on first use.
    pub fn shared() -> &'static Worker {
        static SHARED: OnceLock<Worker> = OnceLock::new();
        SHARED.get_or_init(|| {
            Worker::start(&WorkerOptions {
                vars: test_vars(),
                demo_site: true,
                ..WorkerOptions::default()
            })
        })
    }

    /// The Worker shared by the tests that run retrieval through the Vectorize double
    /// ([`WorkerOptions::vectorize_double`], default delay), started on first use.
    pub fn shared_vectorize() -> &'static Worker {
        static SHARED: OnceLock<Worker> = OnceLock::new();
        SHARED.get_or_init(|| {
            Worker::start(&WorkerOptions {
                vars: test_vars(),
                vectorize_double: Some(VectorizeDouble::default()),
                ..WorkerOptions::default()
            })
        })
    }

    /// Start a Worker with its own port and state directory. Unless `options.vars` sets
    /// `WORKER_ORIGINS`, the Worker's own origin is `http://127.0.0.1:<port>`.
    pub fn start(options: &WorkerOptions) -> Worker {
        let root = repo_root();
        let port = free_port();
        let base_url = format!("http://127.0.0.1:{port}");
        for built in ["edge/build/index.js", "sqlcheck/build/sqlcheck_bg.wasm"] {
            let built = root.join(built);
            assert!(
                built.exists(),
                "{} is missing: run `make build` first",
                built.display()
            );
        }
        let state_dir = scratch_dir("wrangler-state");
        let persist = state_dir.to_string_lossy().into_owned();

        let status = wrangler(&[
            "d1",
            "migrations",
            "apply",
            "DB",
            "--local",
            "--persist-to",
            &persist,
        ])
        .stdout(Stdio::null())
        .status()
        .expect("run wrangler d1 migrations apply");
        assert!(status.success(), "wrangler d1 migrations apply failed");
        // `rental`'s listings database (its own binding and migrations directory).
        let status = wrangler(&[
            "d1",
            "migrations",
            "apply",
            "LISTINGS",
            "--local",
            "--persist-to",
            &persist,
        ])
        .stdout(Stdio::null())
        .status()
        .expect("run wrangler d1 migrations apply LISTINGS");
        assert!(
            status.success(),
            "wrangler d1 migrations apply LISTINGS failed"
        );
        let mut seed_files = options.seed_files.clone();
        if options.demo_site {
            // The demo data allows the dev server's origins (port 8787): use this port.
            let demo = std::fs::read_to_string(root.join("scripts/seed.sql"))
                .expect("read scripts/seed.sql")
                .replace(":8787", &format!(":{port}"));
            let file = state_dir.join("demo-seed.sql");
            std::fs::write(&file, demo).expect("write the demo seed");
            seed_files.push(file);
        }
        for file in &seed_files {
            let file = file.to_string_lossy().into_owned();
            let status = wrangler(&[
                "d1",
                "execute",
                "DB",
                "--local",
                "--persist-to",
                &persist,
                "--file",
                &file,
            ])
            .stdout(Stdio::null())
            .status()
            .expect("run wrangler d1 execute");
            assert!(status.success(), "seeding {file} failed");
        }

        let inspector = free_port();
        let configs = options
            .workers_ai_script
            .as_deref()
            .map(|script| workers_ai::configs(&root, &state_dir, script))
            .unwrap_or_default();
        let mut args: Vec<String> = [
            "dev",
            "--local",
            "--ip",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--inspector-port",
            &inspector.to_string(),
            "--persist-to",
            &persist,
            "--show-interactive-dev-session=false",
            "--log-level",
            "log",
            // Serves `/__scheduled?cron=…`, so tests can fire the Cron Trigger.
            "--test-scheduled",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        // One double at a time: each writes its own copy of the Worker's config.
        assert!(
            options.vectorize_double.is_none() || configs.is_empty(),
            "the Vectorize and Workers AI doubles cannot run in one Worker yet"
        );
        if let Some(double) = &options.vectorize_double {
            args.extend(vectorize_double_args(&state_dir, double));
        }
        for config in &configs {
            args.push("-c".into());
            args.push(config.to_string_lossy().into_owned());
        }
        if options.without_sql_check {
            assert!(
                options.vectorize_double.is_none() && configs.is_empty(),
                "a Worker without the SQL validator runs without doubles"
            );
            args.push("-c".into());
            args.push(
                config_without_sql_check(&root)
                    .to_string_lossy()
                    .into_owned(),
            );
        } else {
            let primary = options.vectorize_double.is_none() && configs.is_empty();
            args.extend(dev_configs_tail(&root, primary));
        }
        for (name, value) in &options.vars {
            if options.vectorize_double.is_some() && name == "RETRIEVAL_BACKEND" {
                continue;
            }
            args.push("--var".into());
            args.push(format!("{name}:{value}"));
        }
        if options.vectorize_double.is_some() {
            args.push("--var".into());
            args.push("RETRIEVAL_BACKEND:vectorize".into());
        }
        if !options
            .vars
            .iter()
            .any(|(name, _)| name == "WORKER_ORIGINS")
        {
            args.push("--var".into());
            args.push(format!("WORKER_ORIGINS:{base_url}"));
        }
        let log = state_dir.join("wrangler.log");
        let supervisor = supervise(&args, &log, options.local_traces);
        let worker = Worker {
            base_url,
            inspector_port: inspector,
            state_dir,
            supervisor,
        };
        worker.wait_healthy(Duration::from_secs(90));
        worker
    }

    /// The wrangler/workerd output so far (for assertions on logs and for failures).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.state_dir.join("wrangler.log")).unwrap_or_default()
    }

    /// Its `--persist-to` directory (local D1, KV and Durable Object files).
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Process ids of every process this Worker started (wrangler, workerd, …).
    pub fn process_ids(&self) -> Vec<u32> {
        descendants(self.supervisor.id())
    }

    /// `base_url` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Run `sql` against this Worker's local D1 (`wrangler d1 execute`), returning its rows
    /// (none for a write): to assert what is stored beyond what the API shows, or to plant
    /// rows the API cannot make (data written by an older version).
    ///
    /// A write can find the database busy with the Worker's own writes (many tests run at
    /// once): it is tried again, at most four times in all.
    pub fn d1_rows(&self, sql: &str) -> Vec<serde_json::Value> {
        self.d1_rows_in("DB", sql)
    }

    /// [`d1_rows`](Self::d1_rows) on the local D1 database bound as `database` (`DB`, or
    /// `LISTINGS`, where the `rental` listings lived before their objects).
    pub fn d1_rows_in(&self, database: &str, sql: &str) -> Vec<serde_json::Value> {
        let persist = self.state_dir.to_string_lossy().into_owned();
        let mut attempt = 0;
        let output = loop {
            attempt += 1;
            let output = wrangler(&[
                "d1",
                "execute",
                database,
                "--local",
                "--persist-to",
                &persist,
                "--json",
                "--command",
                sql,
            ])
            .output()
            .expect("run wrangler d1 execute");
            if output.status.success() || attempt == 4 {
                break output;
            }
            std::thread::sleep(Duration::from_millis(500 * attempt));
        };
        assert!(
            output.status.success(),
            "wrangler d1 execute failed ({attempt} attempts): {sql}\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let json: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("wrangler d1 execute --json output");
        json[0]["results"].as_array().cloned().unwrap_or_default()
    }

    /// Run `sql` in `site`'s own object (`POST /debug/site-sql`, with its secret key),
    /// returning its rows: what the site holds there (e.g. `rental`'s sessions and learned
    /// Q&A), or a change an older version or the passing of time would have made.
    pub fn site_rows(&self, site: &TestSite, sql: &str) -> Vec<serde_json::Value> {
        let (status, body) = into_parts(
            agent()
                .post(&self.url("/debug/site-sql"))
                .set("x-api-key", &site.secret_key)
                .send_json(serde_json::json!({ "sql": sql })),
        );
        assert_eq!(status, 200, "{sql}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        json["rows"].as_array().cloned().unwrap_or_default()
    }

    /// Create a site with the operator token; `config` is the creation body.
    pub fn create_site(&self, config: serde_json::Value) -> TestSite {
        let (status, body) = into_parts(
            agent()
                .post(&self.url("/admin/sites"))
                .set("authorization", &format!("Bearer {OPERATOR_TOKEN}"))
                .send_json(config),
        );
        assert_eq!(status, 201, "create site: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        TestSite {
            id: json["site"]["id"].as_str().expect("site id").to_string(),
            public_key: json["public_key"].as_str().expect("public key").to_string(),
            secret_key: json["secret_key"].as_str().expect("secret key").to_string(),
        }
    }

    fn wait_healthy(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let agent = agent();
        loop {
            if let Ok(response) = agent.get(&self.url("/health")).call()
                && response.status() == 200
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "wrangler dev did not become healthy within {timeout:?}; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the supervisor's stdin makes it stop the wrangler process group.
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
    }
}

/// An HTTP client that reports 4xx/5xx as responses, not errors.
pub fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(5))
        .build()
}

/// GET `url`, returning status and body text (whatever the status).
pub fn get(url: &str) -> (u16, String) {
    into_parts(agent().get(url).call())
}

/// Status and body of a ureq result, treating HTTP error statuses as answers.
pub fn into_parts(result: Result<ureq::Response, ureq::Error>) -> (u16, String) {
    match result {
        Ok(r) | Err(ureq::Error::Status(_, r)) => {
            let status = r.status();
            (status, r.into_string().unwrap_or_default())
        }
        Err(err) => panic!("request failed: {err}"),
    }
}

/// One server-sent event as received, with the time it arrived.
#[derive(Debug, Clone)]
pub struct ReceivedEvent {
    /// `event:` field (empty for the default `message` type).
    pub event: String,
    /// `id:` field.
    pub id: Option<String>,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// When the blank line ending the event arrived.
    pub arrived: Instant,
}

/// Read an SSE body line by line, timestamping each event as its last line arrives.
/// This is deliberately independent of the product's own decoder, so a bug there
/// cannot hide here.
pub fn read_events(body: impl Read) -> Vec<ReceivedEvent> {
    read_events_until(&mut BufReader::new(body), |_| false)
}

/// [`read_events`] from `reader`, stopping as soon as `stop` says so after an event (the
/// rest of the body stays unread: a client that goes away mid-stream).
pub fn read_events_until(
    reader: &mut impl BufRead,
    mut stop: impl FnMut(&[ReceivedEvent]) -> bool,
) -> Vec<ReceivedEvent> {
    let mut events = Vec::new();
    let (mut event, mut id, mut data) = (String::new(), None, Vec::<String>::new());
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            if !data.is_empty() || !event.is_empty() {
                events.push(ReceivedEvent {
                    event: std::mem::take(&mut event),
                    id: id.take(),
                    data: data.join("\n"),
                    arrived: Instant::now(),
                });
                data.clear();
                if stop(&events) {
                    break;
                }
            }
            continue;
        }
        let (field, value) = text.split_once(':').unwrap_or((text, ""));
        let value = value.strip_prefix(' ').unwrap_or(value).to_string();
        match field {
            "event" => event = value,
            "id" => id = Some(value),
            "data" => data.push(value),
            _ => {}
        }
    }
    events
}

fn wrangler(args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\" 2>/dev/null; exec wrangler \"$@\"")
        .arg("wrangler")
        .args(args)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("CONCIERGE_SKIP_BUILD", "1")
        .env("WRANGLER_SEND_METRICS", "false");
    command
}

/// Start `wrangler dev` in its own process group under a supervisor shell that stops
/// the group when its stdin (held by this process) closes.
fn supervise(args: &[String], log: &Path, local_traces: bool) -> Child {
    let mut command = vec![
        "env".to_string(),
        format!("X_LOCAL_OBSERVABILITY={local_traces}"),
        "wrangler".to_string(),
    ];
    command.extend(args.iter().cloned());
    supervise_command(&command, log)
}

/// Process ids of every descendant of process `root`.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parents = std::collections::HashMap::<u32, Vec<u32>>::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let after = stat
            .rsplit_once(") ")
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        if let Some(ppid) = after
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u32>().ok())
        {
            parents.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for &child in parents.get(&pid).into_iter().flatten() {
            found.push(child);
            stack.push(child);
        }
    }
    found
}

/// Start `command` (program and arguments, run with the project's tool PATH) in its own
/// process group under a supervisor shell that stops the group when its stdin (held by
/// this process) closes.
pub fn supervise_command(command: &[String], log: &Path) -> Child {
    let script = r#". "$CONCIERGE_ROOT/scripts/env.sh" 2>/dev/null
log="$1"; shift
setsid "$@" </dev/null >"$log" 2>&1 &
pid=$!
cat >/dev/null
kill -TERM -"$pid" 2>/dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -"$pid" 2>/dev/null || exit 0; sleep 0.3; done
kill -KILL -"$pid" 2>/dev/null
exit 0"#;
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("supervisor")
        .arg(log)
        .args(command)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .env("CONCIERGE_SKIP_BUILD", "1")
        .env("WRANGLER_SEND_METRICS", "false")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("start wrangler dev")
}

/// A real llama.cpp `llama-server` with SmolLM2-135M (installed by `scripts/install-llm.sh`),
/// on a free loopback port, stopped with the test process.
#[derive(Debug)]
pub struct LlmServer {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    supervisor: Child,
}

impl LlmServer {
    /// Start the server and wait until it has loaded the model.
    pub fn start() -> LlmServer {
        let port = free_port();
        let dir = scratch_dir("llama-server");
        let log = dir.join("llama-server.log");
        let script = repo_root()
            .join("scripts/llm-server.sh")
            .to_string_lossy()
            .into_owned();
        let supervisor = supervise_command(&["sh".into(), script, port.to_string()], &log);
        let server = LlmServer {
            base_url: format!("http://127.0.0.1:{port}"),
            supervisor,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(response) = agent().get(&format!("{}/health", server.base_url)).call()
                && response.status() == 200
            {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "llama-server did not start within 60 s; log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
    }
}

/// A fresh directory under `target/e2e/`.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = repo_root()
        .join("target/e2e")
        .join(format!("{prefix}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}
