//! `make dev` as a newcomer runs it: `scripts/dev.sh` with the LLM endpoint given in the
//! environment (`LLM_BASE_URL=… make dev`) and other settings in a vars file (`.dev.vars`).
//! The demo site must answer from that endpoint, with the vars file's model, and embed
//! through the same endpoint (the embeddings default is `LLM_BASE_URL`); the `guarded`
//! demo (a dental advisor) answers with its seeded search pages as sources.
//!
//! "Concierge is running" is a promise: the Worker answers and every demo is there (the
//! analyst data sets stored whole, the demo knowledge bases indexed). A Worker slow to
//! come up (as under a first, cold build) is waited for; one that never does, or a demo
//! that cannot be prepared, ends `make dev` with a non-zero status, a message naming what
//! failed, and nothing left running. Ctrl-C stops everything it started.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use concierge_e2e::api::{eventually, fixed_sentence, streamed_text, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{
    agent, descendants, free_port, into_parts, read_events, repo_root, scratch_dir,
    supervise_command,
};
use serde_json::{Value, json};

/// The demo site's secret key (scripts/seed.sql), local only.
const DEMO_SECRET: &str = "sk_demo_local_only";
/// The `knowledge` demo site's secret key (scripts/seed.sql), local only.
const KB_DEMO_SECRET: &str = "sk_kb_demo_local_only";
/// The `analyst` demo site's secret key (scripts/seed-analyst.sql), local only.
const ANALYST_SECRET: &str = "sk_analyst_demo_local_only";
/// What `make dev` prints once everything is ready.
const RUNNING: &str = "Concierge is running";

#[test]
fn make_dev_takes_the_llm_endpoint_from_the_environment_and_the_vars_file() {
    let upstream = ScriptedUpstream::start();
    upstream.set_default(Reply::text("Dạ, cửa hàng có PC gaming ạ."));
    let dir = scratch_dir("make-dev");
    let vars = dir.join("dev.vars");
    std::fs::write(
        &vars,
        "LLM_MODEL=model-from-vars-file\nEMBED_MODEL=embed-from-vars-file\n",
    )
    .expect("write the vars file");
    let dev = DevRun::start(
        &dir,
        &[
            ("LLM_BASE_URL", format!("{}/v1", upstream.base_url)),
            ("CONCIERGE_DEV_VARS", vars.display().to_string()),
        ],
    );
    let base = dev.base.clone();
    dev.expect_running(Duration::from_secs(300));
    let dev_log = || dev.log();
    assert!(
        !dev_log().contains("model-from-vars-file"),
        "settings from files are not printed:\n{}",
        dev_log()
    );

    let (status, body) = into_parts(
        agent()
            .post(&format!("{base}/conversations"))
            .set("x-api-key", DEMO_SECRET)
            .send_json(json!({})),
    );
    assert_eq!(status, 201, "{body}\n{}", dev_log());
    let created: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = created["conversation_id"].as_str().expect("id");
    let response = agent()
        .post(&format!("{base}/conversations/{conversation}/messages"))
        .set("x-api-key", DEMO_SECRET)
        .send_json(json!({"content": "Shop có bán PC gaming không?"}))
        .expect("the turn streams");
    let events = read_events(response.into_reader());
    let (name, data) = terminal(&events);
    assert_eq!(name, "completed", "{data}\n{}", dev_log());
    assert_eq!(streamed_text(&events), "Dạ, cửa hàng có PC gaming ạ.");
    let chats = upstream.chat_requests();
    assert_eq!(chats.len(), 1, "one call to the configured endpoint");
    assert_eq!(chats[0].body["model"], "model-from-vars-file");
    // The visitor's message is embedded in the background, through LLM_BASE_URL.
    let embed = eventually(
        Duration::from_secs(30),
        "the visitor's message embedded",
        || {
            upstream.recorded().into_iter().find(|r| {
                r.path == "/v1/embeddings"
                    && r.body["input"]
                        .to_string()
                        .contains("Shop có bán PC gaming")
            })
        },
    );
    assert_eq!(embed.body["model"], "embed-from-vars-file");
    guarded_demo(&base, &upstream, dev_log);
}

/// The `guarded` demo `make dev` seeds (a Vietnamese dental advisor, keys printed): the
/// seed's model id `dental-duckduckgo` answers an in-domain question with the seeded local
/// search pages as sources, and refuses an off-domain one.
fn guarded_demo(base: &str, upstream: &ScriptedUpstream, dev_log: impl Fn() -> String) {
    eventually(
        Duration::from_secs(30),
        "the dental demo's keys printed",
        || dev_log().contains("sk_dental_local_only").then_some(()),
    );
    let complete = |question: &str| {
        let (status, body) = into_parts(
            agent()
                .post(&format!("{base}/v1/chat/completions"))
                .set("authorization", "Bearer sk_dental_local_only")
                .send_json(json!({"model": "dental-duckduckgo",
                    "messages": [{"role": "user", "content": question}]})),
        );
        assert_eq!(status, 200, "{body}");
        let json: Value = serde_json::from_str(&body).expect("JSON");
        json["choices"][0]["message"]["content"]
            .as_str()
            .expect("content")
            .to_string()
    };
    upstream.push(Reply::text("YES"));
    upstream.push(Reply::text("Bạn nên cạo vôi răng 6 tháng một lần."));
    upstream.push(Reply::text("Hỏi về cạo vôi răng."));
    let answer = complete("Bao lâu nên cạo vôi răng một lần?");
    assert!(
        answer.starts_with("Bạn nên cạo vôi răng 6 tháng một lần.\n\nNguồn tham khảo:\n\n1. "),
        "{answer}"
    );
    assert!(
        answer.contains(
            "Cạo vôi răng định kỳ: bao lâu một lần? - https://nhakhoa-demo.example/dich-vu/cao-voi-rang"
        ),
        "{answer}"
    );
    upstream.push(Reply::text("NO"));
    let refusal = fixed_sentence("guarded_fixed_vi.md", "refusal").replace("{domain}", "nha khoa");
    assert_eq!(complete("Giá vàng hôm nay bao nhiêu?"), refusal);
}

/// The file the README tells a newcomer to put `LLM_API_KEY` in is never committed by
/// accident; its documented example is.
#[test]
fn the_local_secrets_file_is_ignored_by_git_and_its_example_is_not() {
    let ignored = |path: &str| {
        std::process::Command::new("git")
            .args(["check-ignore", "-q", "--no-index", path])
            .current_dir(repo_root())
            .status()
            .expect("run git check-ignore")
            .success()
    };
    for secret in [".dev.vars", ".dev.vars.production", ".env"] {
        assert!(ignored(secret), "{secret} must be gitignored");
    }
    assert!(
        !ignored(".dev.vars.example"),
        "the example settings file is committed"
    );
    assert!(
        repo_root().join(".dev.vars.example").is_file(),
        "the example the README points to exists"
    );
}

/// The Worker slow to come up, as it is when wrangler builds it cold inside its own start
/// (minutes): `make dev` waits for it, and once it says "Concierge is running" the analyst
/// demo's data sets are stored whole and the demo knowledge bases indexed and searchable.
/// Then Ctrl-C stops everything it started.
#[test]
fn make_dev_waits_for_a_slow_worker_and_announces_only_a_seeded_demo() {
    let upstream = ScriptedUpstream::start();
    let dir = scratch_dir("make-dev-slow");
    // Longer than any fixed wait a script might hope is enough (it was 60 s).
    let dev = DevRun::start(
        &dir,
        &[
            ("LLM_BASE_URL", format!("{}/v1", upstream.base_url)),
            (
                "NODE_OPTIONS",
                hold_wrangler_dev(&dir, Duration::from_secs(75)),
            ),
        ],
    );
    dev.expect_running(Duration::from_secs(480));
    let log = dev.log();
    assert!(
        !log.contains("could not"),
        "nothing failed on the way:\n{log}"
    );

    // The analyst demo: both data sets, every generated row.
    let listed = dev.admin_get(ANALYST_SECRET, "/admin/data");
    let stored = |name: &str, user: &str| {
        listed["connections"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["name"] == name && c["user_id"] == user)
            .unwrap_or_else(|| panic!("data set {name} of {user} missing: {listed}\n{log}"))
            .clone()
    };
    for (name, user, kind) in [
        ("don_hang", "shop-owner", "orders"),
        ("luong_nhan_vien", "hr-manager", "salaries"),
    ] {
        let set = stored(name, user);
        let rows = generated_rows(kind);
        assert!(rows > 0, "the generator writes rows for {kind}");
        assert_eq!(set["row_count"], rows, "{name}: {set}");
    }

    // The demo knowledge bases: every document indexed, and found by retrieval.
    for key in [DEMO_SECRET, KB_DEMO_SECRET] {
        let documents = dev.admin_get(key, "/admin/knowledge")["documents"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!documents.is_empty(), "{key}: documents seeded");
        for document in &documents {
            assert_eq!(document["index_status"], "done", "{key}: {document}\n{log}");
        }
    }
    let (status, body) = into_parts(
        agent()
            .post(&format!("{}/admin/search", dev.base))
            .set("x-api-key", DEMO_SECRET)
            .send_json(json!({"query": "PC Gaming AP-4060 RTX 4060"})),
    );
    assert_eq!(status, 200, "{body}");
    let results: Value = serde_json::from_str(&body).expect("JSON");
    assert!(
        results["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|p| p["source"] == "knowledge")),
        "the shop demo's knowledge is searchable: {results}"
    );

    // Ctrl-C (SIGINT to the terminal's process group) stops everything.
    let started = dev.processes();
    assert!(
        started.len() >= 2,
        "make dev and the Worker run: {started:?}"
    );
    dev.interrupt();
    eventually(
        Duration::from_secs(30),
        "everything make dev started to stop after Ctrl-C",
        || started.iter().all(|&pid| !alive(pid)).then_some(()),
    );
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", dev.port)).is_err(),
        "nothing serves port {} after Ctrl-C",
        dev.port
    );
}

/// A Worker that never answers: `make dev` gives up at its readiness deadline with a
/// non-zero status, says so with the end of wrangler's log, and leaves nothing running.
#[test]
fn make_dev_fails_loudly_when_the_worker_never_comes_up() {
    let upstream = ScriptedUpstream::start();
    let dir = scratch_dir("make-dev-never");
    let dev = DevRun::start(
        &dir,
        &[
            ("LLM_BASE_URL", format!("{}/v1", upstream.base_url)),
            (
                "NODE_OPTIONS",
                hold_wrangler_dev(&dir, Duration::from_secs(900)),
            ),
            ("CONCIERGE_DEV_READY_TIMEOUT", "20".to_string()),
        ],
    );
    let status = dev.expect_exit(Duration::from_secs(240));
    let log = dev.log();
    assert_ne!(status, 0, "make dev fails:\n{log}");
    assert!(
        log.contains("did not answer") && log.contains("within 20 s"),
        "it says the Worker did not come up:\n{log}"
    );
    assert!(!log.contains(RUNNING), "nothing is announced:\n{log}");
    dev.expect_nothing_left();
}

/// A demo that cannot be prepared (the embeddings endpoint fails, so the demo knowledge
/// bases cannot be indexed): `make dev` ends with a non-zero status and a message naming
/// the knowledge base, never announcing the demo, and leaves nothing running.
#[test]
fn make_dev_fails_loudly_when_a_demo_cannot_be_prepared() {
    let upstream = ScriptedUpstream::start();
    upstream.fail_embeddings(true);
    let dir = scratch_dir("make-dev-unseeded");
    let dev = DevRun::start(
        &dir,
        &[
            ("LLM_BASE_URL", format!("{}/v1", upstream.base_url)),
            ("EMBED_MAX_ATTEMPTS", "1".to_string()),
        ],
    );
    let status = dev.expect_exit(Duration::from_secs(300));
    let log = dev.log();
    assert_ne!(status, 0, "make dev fails:\n{log}");
    assert!(
        log.contains("knowledge base could not be indexed"),
        "it names what failed:\n{log}"
    );
    assert!(!log.contains(RUNNING), "nothing is announced:\n{log}");
    dev.expect_nothing_left();
}

/// `NODE_OPTIONS` that hold `wrangler dev` (not the other wrangler commands) for `hold`
/// before it starts: the Worker comes up that much later, as behind a cold build.
fn hold_wrangler_dev(dir: &Path, hold: Duration) -> String {
    let preload = dir.join("hold-wrangler-dev.cjs");
    std::fs::write(
        &preload,
        format!(
            "if (process.argv[2] === \"dev\" && !process.env.HELD_WRANGLER_DEV) {{\n\
             process.env.HELD_WRANGLER_DEV = \"1\";\n\
             Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, {});\n}}\n",
            hold.as_millis()
        ),
    )
    .expect("write the preload");
    format!("--require={}", preload.display())
}

/// Data rows `scripts/seed-analyst.mjs <kind>` generates.
fn generated_rows(kind: &str) -> usize {
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; node \"$CONCIERGE_ROOT/scripts/seed-analyst.mjs\" \"$1\"")
        .arg("seed-analyst")
        .arg(kind)
        .env("CONCIERGE_ROOT", repo_root())
        .output()
        .expect("run the analyst generator");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
        - 1
}

/// Whether process `pid` is alive (a zombie is not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// `scripts/dev.sh` run as `make dev` runs it, with its own port, state and log, in its
/// own process group (as in a terminal); the group is stopped when this is dropped.
struct DevRun {
    supervisor: Child,
    base: String,
    port: u16,
    log: PathBuf,
    /// Where dev.sh's exit status is written when it ends.
    status: PathBuf,
    /// The process group (dev.sh's wrapper's pid).
    group: u32,
}

impl DevRun {
    fn start(dir: &Path, settings: &[(&str, String)]) -> DevRun {
        let port = free_port();
        let log = dir.join("dev.log");
        let status = dir.join("exit-status");
        let mut command = vec![
            "env".to_string(),
            format!("PORT={port}"),
            format!("CONCIERGE_STATE_DIR={}", dir.join("state").display()),
        ];
        command.extend(settings.iter().map(|(k, v)| format!("{k}={v}")));
        command.extend([
            "sh".to_string(),
            "-c".to_string(),
            "sh \"$1\"; echo $? >\"$2\"".to_string(),
            "make-dev".to_string(),
            repo_root().join("scripts/dev.sh").display().to_string(),
            status.display().to_string(),
        ]);
        let supervisor = supervise_command(&command, &log);
        let root = supervisor.id();
        // The group leader: the supervisor's child that leads its own process group.
        let group = eventually(Duration::from_secs(10), "make dev to start", || {
            descendants(root)
                .into_iter()
                .find(|&pid| group_of(pid) == Some(pid))
        });
        DevRun {
            supervisor,
            base: format!("http://127.0.0.1:{port}"),
            port,
            log,
            status,
            group,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// dev.sh's exit status once it has ended.
    fn exit_status(&self) -> Option<i32> {
        std::fs::read_to_string(&self.status)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// Waits for "Concierge is running"; fails if dev.sh ends first or takes longer.
    fn expect_running(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            if self.log().contains(RUNNING) {
                return;
            }
            if let Some(status) = self.exit_status() {
                panic!(
                    "make dev ended (status {status}) before it ran:\n{}",
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "make dev did not say it runs within {timeout:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Waits for dev.sh to end; its exit status.
    fn expect_exit(&self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exit_status() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "make dev did not end within {timeout:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Every live process of make dev's group and below (its wrapper included).
    fn processes(&self) -> Vec<u32> {
        std::iter::once(self.group)
            .chain(descendants(self.group))
            .filter(|&pid| alive(pid))
            .collect()
    }

    /// Ctrl-C in make dev's terminal: SIGINT to its process group.
    fn interrupt(&self) {
        let status = std::process::Command::new("kill")
            .args(["-INT", "--", &format!("-{}", self.group)])
            .status()
            .expect("run kill");
        assert!(status.success(), "SIGINT sent");
    }

    /// After make dev ended: none of its processes (of its group, or anything serving its
    /// port) are left.
    fn expect_nothing_left(&self) {
        eventually(
            Duration::from_secs(15),
            "nothing make dev started to be left running",
            || live_members_of_group(self.group).is_empty().then_some(()),
        );
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err(),
            "nothing serves port {}:\n{}",
            self.port,
            self.log()
        );
    }

    /// GET an admin route with a site's secret key; its JSON (fails, with the log, when
    /// the Worker does not answer 200).
    fn admin_get(&self, key: &str, path: &str) -> Value {
        let response = agent()
            .get(&format!("{}{path}", self.base))
            .set("x-api-key", key)
            .call();
        let (status, body) = match response {
            Ok(r) | Err(ureq::Error::Status(_, r)) => {
                (r.status(), r.into_string().unwrap_or_default())
            }
            Err(err) => panic!(
                "the Worker does not answer {path} although make dev says it runs: {err}\n{}",
                self.log()
            ),
        };
        assert_eq!(status, 200, "{path}: {body}\n{}", self.log());
        serde_json::from_str(&body).expect("JSON")
    }
}

impl Drop for DevRun {
    fn drop(&mut self) {
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
    }
}

/// The process group of `pid`.
fn group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// Live processes of process group `group`.
fn live_members_of_group(group: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| group_of(pid) == Some(group) && alive(pid))
        .collect()
}
