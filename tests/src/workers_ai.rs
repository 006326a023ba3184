//! The Workers AI double's script server, and the `wrangler dev` configs that run the
//! double (`tests/doubles/workers-ai/`) beside the Worker as its `AI` binding.
//!
//! The double keeps to the binding's documented request and response shapes; what it
//! answers comes from here: before each `run`, it posts `{model, inputs, options}` to this
//! server's `/run`, which records the call and answers with a plan (stream these pieces,
//! fail before or mid-stream, a bad embedding reply…). Tests share one Worker, so plans are
//! routed by a marker: the first plan queued for a marker found in the call's inputs (a
//! word of the site's persona, of a document) is used; calls matching no marker get the
//! default (chat: a reply streamed in word-sized pieces; embeddings: the double's hashed
//! bag of words, so texts sharing words are near).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::upstream::split_tokens;

/// What the double does with one `run` call.
#[derive(Debug, Clone)]
pub enum AiPlan {
    /// Chat: stream these pieces (`data: {"response"}` events, then `[DONE]`), or answer
    /// them whole when the request did not ask for a stream.
    Stream(Vec<String>),
    /// Chat: stream these pieces, then fail the stream (no `[DONE]`).
    CutAfter(Vec<String>),
    /// Reject the call before any answer, with this message (the service's code first,
    /// e.g. `3040: Capacity temporarily exceeded`).
    Error(String),
    /// Chat: answer with these tool calls `(name, arguments)`, whole.
    ToolCalls(Vec<(String, Value)>),
    /// Embeddings: the double's vectors, cut to 3 dimensions.
    BadShape,
    /// Embeddings: one vector fewer than texts.
    ShortBatch,
    /// Embeddings: the double's vectors.
    Embed,
}

impl AiPlan {
    /// Stream `text` in word-sized pieces.
    pub fn text(text: &str) -> Self {
        Self::Stream(split_tokens(text))
    }

    fn to_json(&self) -> Value {
        match self {
            Self::Stream(pieces) => json!({"action": "stream", "pieces": pieces}),
            Self::CutAfter(pieces) => json!({"action": "cut", "pieces": pieces}),
            Self::Error(message) => json!({"action": "error", "message": message}),
            Self::ToolCalls(calls) => json!({"action": "tool_calls", "calls":
                calls.iter().map(|(n, a)| json!({"name": n, "arguments": a})).collect::<Vec<_>>()}),
            Self::BadShape => json!({"action": "bad_shape"}),
            Self::ShortBatch => json!({"action": "short_batch"}),
            Self::Embed => json!({"action": "embed"}),
        }
    }
}

/// One `env.AI.run(model, inputs, options)` call the double received.
#[derive(Debug, Clone)]
pub struct AiCall {
    /// The model name.
    pub model: String,
    /// The inputs object.
    pub inputs: Value,
}

impl AiCall {
    /// Whether this was an embedding call (`inputs.text`).
    pub fn is_embedding(&self) -> bool {
        self.inputs.get("text").is_some()
    }
}

#[derive(Debug)]
struct Route {
    marker: String,
    plans: VecDeque<AiPlan>,
    /// Used for every matching call once the queue is empty.
    always: Option<AiPlan>,
}

#[derive(Debug, Default)]
struct State {
    routes: Vec<Route>,
    calls: Vec<AiCall>,
}

/// The script server the double asks, on `127.0.0.1:<port>` until the process exits.
#[derive(Debug, Clone)]
pub struct AiScript {
    /// `http://127.0.0.1:<port>` (the double's `SCRIPT_URL`).
    pub base_url: String,
    state: Arc<Mutex<State>>,
}

impl AiScript {
    /// Start listening on a free port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the AI script server");
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                thread::spawn(move || {
                    let _ = serve(stream, &state);
                });
            }
        });
        Self {
            base_url: format!("http://127.0.0.1:{port}"),
            state,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with_route(&self, marker: &str, change: impl FnOnce(&mut Route)) {
        let mut state = self.lock();
        if !state.routes.iter().any(|r| r.marker == marker) {
            state.routes.push(Route {
                marker: marker.to_string(),
                plans: VecDeque::new(),
                always: None,
            });
            // Longest marker first: a marker inside another never steals its calls.
            state
                .routes
                .sort_by_key(|r| std::cmp::Reverse(r.marker.len()));
        }
        if let Some(route) = state.routes.iter_mut().find(|r| r.marker == marker) {
            change(route);
        }
    }

    /// Queue `plan` for the next call whose inputs contain `marker`.
    pub fn push(&self, marker: &str, plan: AiPlan) -> &Self {
        self.with_route(marker, |r| r.plans.push_back(plan));
        self
    }

    /// Use `plan` for every call whose inputs contain `marker` (after any queued ones).
    pub fn always(&self, marker: &str, plan: AiPlan) -> &Self {
        self.with_route(marker, |r| r.always = Some(plan));
        self
    }

    /// Every call so far whose inputs contain `marker`.
    pub fn calls(&self, marker: &str) -> Vec<AiCall> {
        self.lock()
            .calls
            .iter()
            .filter(|c| c.inputs.to_string().contains(marker))
            .cloned()
            .collect()
    }

    fn plan_for(&self, call: &AiCall) -> Option<AiPlan> {
        let text = call.inputs.to_string();
        let mut state = self.lock();
        state.calls.push(call.clone());
        let route = state
            .routes
            .iter_mut()
            .find(|r| text.contains(r.marker.as_str()))?;
        route.plans.pop_front().or_else(|| route.always.clone())
    }
}

fn serve(stream: TcpStream, script: &Arc<Mutex<State>>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let call = AiCall {
        model: request["model"].as_str().unwrap_or_default().to_string(),
        inputs: request["inputs"].clone(),
    };
    let server = AiScript {
        base_url: String::new(),
        state: Arc::clone(script),
    };
    let plan = server.plan_for(&call);
    let answer = match plan {
        Some(plan) => plan.to_json(),
        None if call.is_embedding() => AiPlan::Embed.to_json(),
        None => AiPlan::text("Dạ, em là trợ lý của cửa hàng ạ.").to_json(),
    }
    .to_string();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    stream.flush()
}

/// The `wrangler dev` configs running the Worker with the double as its `AI` binding:
/// `wrangler.toml` with `[ai]` replaced by a service binding to the double (and its paths
/// made absolute, since the copy lives in `dir`), and the double's own config with
/// `SCRIPT_URL` set to `script_url`.
pub fn configs(root: &Path, dir: &Path, script_url: &str) -> Vec<PathBuf> {
    let source = std::fs::read_to_string(root.join("wrangler.toml")).expect("read wrangler.toml");
    assert!(
        source.contains("[ai]\nbinding = \"AI\"\n"),
        "wrangler.toml declares the AI binding"
    );
    let root_text = root.to_string_lossy();
    let absolute = |value: &str| format!("{root_text}/{}", value.trim_start_matches("./"));
    let mut out = String::new();
    for line in source.lines() {
        let quoted = |key: &str| {
            line.strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(" = \""))
                .and_then(|rest| rest.strip_suffix('"'))
                .map(str::to_string)
        };
        if let Some(value) = quoted("main")
            .or_else(|| quoted("directory"))
            .or_else(|| quoted("migrations_dir"))
        {
            let key = line.split(" = ").next().unwrap_or_default();
            out.push_str(&format!("{key} = \"{}\"\n", absolute(&value)));
        } else if line.starts_with("watch_dir = ") {
            let dirs: Vec<String> = line
                .split('"')
                .skip(1)
                .step_by(2)
                .map(|d| format!("\"{}\"", absolute(d)))
                .collect();
            out.push_str(&format!("watch_dir = [{}]\n", dirs.join(", ")));
        } else if line == "[build]" {
            out.push_str(&format!("[build]\ncwd = \"{root_text}\"\n"));
        } else if line == "[ai]" {
            out.push_str("[[services]]\nservice = \"concierge-workers-ai-double\"\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    let main = dir.join("wrangler.toml");
    std::fs::write(&main, out).expect("write the Worker's test config");
    let double = std::fs::read_to_string(root.join("tests/doubles/workers-ai/wrangler.toml"))
        .expect("read the double's config")
        .replace(
            "main = \"index.js\"",
            &format!("main = \"{root_text}/tests/doubles/workers-ai/index.js\""),
        )
        .replace(
            "SCRIPT_URL = \"\"",
            &format!("SCRIPT_URL = \"{script_url}\""),
        );
    let double_path = dir.join("workers-ai-double.toml");
    std::fs::write(&double_path, double).expect("write the double's config");
    vec![main, double_path]
}
