//! `make dev` as a newcomer runs it: `scripts/dev.sh` with the LLM endpoint given in the
//! environment (`LLM_BASE_URL=… make dev`) and other settings in a vars file (`.dev.vars`).
//! The demo site must answer from that endpoint, with the vars file's model, and embed
//! through the same endpoint (the embeddings default is `LLM_BASE_URL`); the `guarded`
//! demo (a dental advisor) answers with its seeded search pages as sources.

use std::time::Duration;

use concierge_e2e::api::{eventually, fixed_sentence, streamed_text, terminal};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{
    agent, free_port, into_parts, read_events, repo_root, scratch_dir, supervise_command,
};
use serde_json::{Value, json};

/// The demo site's secret key (scripts/seed.sql), local only.
const DEMO_SECRET: &str = "sk_demo_local_only";

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
    let port = free_port();
    let script = repo_root().join("scripts/dev.sh");
    let command: Vec<String> = [
        "env".to_string(),
        format!("PORT={port}"),
        format!("LLM_BASE_URL={}/v1", upstream.base_url),
        format!("CONCIERGE_DEV_VARS={}", vars.display()),
        format!("CONCIERGE_STATE_DIR={}", dir.join("state").display()),
        "sh".to_string(),
        script.to_string_lossy().into_owned(),
    ]
    .into();
    let log = dir.join("dev.log");
    let _dev = DevCommand(supervise_command(&command, &log));
    let base = format!("http://127.0.0.1:{port}");
    eventually(
        Duration::from_secs(120),
        "make dev to serve /health",
        || {
            agent()
                .get(&format!("{base}/health"))
                .call()
                .ok()
                .filter(|r| r.status() == 200)
                .map(|_| ())
        },
    );
    let dev_log = || std::fs::read_to_string(&log).unwrap_or_default();
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
    eventually(Duration::from_secs(30), "an embeddings request", || {
        upstream
            .recorded()
            .into_iter()
            .find(|r| r.path == "/v1/embeddings")
    });
    let embed = upstream
        .recorded()
        .into_iter()
        .find(|r| r.path == "/v1/embeddings")
        .expect("embeddings request");
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

/// Stops `make dev` (its whole process group) when the test ends.
struct DevCommand(std::process::Child);

impl Drop for DevCommand {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
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
