//! One visitor's requests on each surface, timed from their scheduled send time, read with
//! a reader of its own (not the product's decoder).

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use concierge_e2e::TestSite;
use serde_json::{Value, json};

use crate::seed::ORIGIN;

/// The surfaces a visit uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Surface {
    /// The widget: public key from the allowed origin, SSE.
    Widget,
    /// The AI SDK UI message stream (`?format=ai-sdk`), public key.
    AiSdk,
    /// A background turn (`Prefer: respond-async`, secret key): 202, answered by the queue.
    Async,
    /// The OpenAI-compatible API with `chat_id` (secret key).
    OpenAi,
}

impl Surface {
    pub const ALL: [Surface; 4] = [
        Surface::Widget,
        Surface::AiSdk,
        Surface::Async,
        Surface::OpenAi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Surface::Widget => "widget",
            Surface::AiSdk => "AI SDK",
            Surface::Async => "async",
            Surface::OpenAi => "OpenAI chat_id",
        }
    }

    /// The mix: widget 80%, AI SDK 10%, async 5%, OpenAI 5% (`u` uniform in 0..1).
    pub fn pick(u: f64) -> Surface {
        match u {
            u if u < 0.80 => Surface::Widget,
            u if u < 0.90 => Surface::AiSdk,
            u if u < 0.95 => Surface::Async,
            _ => Surface::OpenAi,
        }
    }
}

/// What one request came to.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// HTTP status (0: no answer at all).
    pub status: u16,
    /// From the scheduled send time to the first token (streams), or to the answer.
    pub first: Duration,
    /// From the scheduled time to the request actually leaving (the driver's lag).
    pub lag: Duration,
    /// The stream ended as it should (terminal `completed` / `finish` / `[DONE]`, or 202).
    pub complete: bool,
    /// The error code of a 4xx/5xx JSON body.
    pub error_code: String,
    /// The conversation (created, or named by the OpenAI answer).
    pub conversation: Option<String>,
}

fn outcome(status: u16, scheduled: Instant, sent: Instant) -> Outcome {
    Outcome {
        status,
        first: sent.saturating_duration_since(scheduled),
        lag: sent.saturating_duration_since(scheduled),
        complete: false,
        error_code: String::new(),
        conversation: None,
    }
}

/// A client on its own address (each visitor is one).
#[derive(Debug, Clone)]
pub struct Client {
    pub agent: ureq::Agent,
    pub base: String,
    pub ip: String,
}

impl Client {
    fn request(&self, method: &str, path: &str) -> ureq::Request {
        self.agent
            .request(method, &format!("{}{path}", self.base))
            .set("cf-connecting-ip", &self.ip)
            .timeout(Duration::from_secs(60))
    }

    fn finish(
        &self,
        result: Result<ureq::Response, ureq::Error>,
        scheduled: Instant,
        sent: Instant,
        surface: Option<Surface>,
    ) -> Outcome {
        match result {
            Ok(response) => {
                let mut out = outcome(response.status(), scheduled, sent);
                if let Some(id) = response.header("x-concierge-chat-id") {
                    out.conversation = Some(id.to_string());
                }
                match surface {
                    None => {
                        let body: Value =
                            serde_json::from_str(&response.into_string().unwrap_or_default())
                                .unwrap_or(Value::Null);
                        out.first = scheduled.elapsed();
                        out.complete = true;
                        if let Some(id) = body["conversation_id"].as_str() {
                            out.conversation = Some(id.to_string());
                        }
                    }
                    Some(Surface::Async) => {
                        let _ = response.into_string();
                        out.first = scheduled.elapsed();
                        out.complete = out.status == 202;
                    }
                    Some(surface) => read_stream(response, surface, scheduled, &mut out),
                }
                out
            }
            Err(ureq::Error::Status(status, response)) => {
                let mut out = outcome(status, scheduled, sent);
                let body: Value = serde_json::from_str(&response.into_string().unwrap_or_default())
                    .unwrap_or(Value::Null);
                out.error_code = body["error"]["code"].as_str().unwrap_or("").to_string();
                out.first = scheduled.elapsed();
                out
            }
            Err(err) => {
                let mut out = outcome(0, scheduled, sent);
                out.error_code = format!("transport: {err}");
                out.first = scheduled.elapsed();
                out
            }
        }
    }

    /// `POST /conversations` for a visit on `surface`.
    pub fn create(&self, site: &TestSite, surface: Surface, scheduled: Instant) -> Outcome {
        wait_until(scheduled);
        let sent = Instant::now();
        let request = self.request("POST", "/conversations");
        let request = match surface {
            Surface::Widget | Surface::AiSdk => request
                .set("x-api-key", &site.public_key)
                .set("origin", ORIGIN),
            Surface::Async | Surface::OpenAi => request.set("x-api-key", &site.secret_key),
        };
        self.finish(request.send_json(json!({})), scheduled, sent, None)
    }

    /// One turn: `text` sent on `conversation` (`None` on OpenAI: `chat_id: "new"`).
    pub fn turn(
        &self,
        site: &TestSite,
        surface: Surface,
        conversation: Option<&str>,
        text: &str,
        scheduled: Instant,
    ) -> Outcome {
        wait_until(scheduled);
        let sent = Instant::now();
        let body = json!({"content": text});
        let path = |suffix: &str| {
            format!(
                "/conversations/{}/messages{suffix}",
                conversation.unwrap_or("")
            )
        };
        let result = match surface {
            Surface::Widget => self
                .request("POST", &path(""))
                .set("x-api-key", &site.public_key)
                .set("origin", ORIGIN)
                .send_json(body),
            Surface::AiSdk => self
                .request("POST", &path("?format=ai-sdk"))
                .set("x-api-key", &site.public_key)
                .set("origin", ORIGIN)
                .send_json(body),
            Surface::Async => self
                .request("POST", &path(""))
                .set("x-api-key", &site.secret_key)
                .set("prefer", "respond-async")
                .send_json(body),
            Surface::OpenAi => self
                .request("POST", "/v1/chat/completions")
                .set("authorization", &format!("Bearer {}", site.secret_key))
                .send_json(json!({
                    "model": format!("concierge-{}", site.id), "stream": true,
                    "chat_id": conversation.unwrap_or("new"),
                    "messages": [{"role": "user", "content": text}],
                })),
        };
        self.finish(result, scheduled, sent, Some(surface))
    }

    /// A stateless OpenAI-compatible stream (no `chat_id`: nothing stored): CPU-only noise.
    pub fn stateless(&self, site: &TestSite, scheduled: Instant) -> Outcome {
        wait_until(scheduled);
        let sent = Instant::now();
        let result = self
            .request("POST", "/v1/chat/completions")
            .set("authorization", &format!("Bearer {}", site.secret_key))
            .send_json(json!({
                "model": format!("concierge-{}", site.id), "stream": true,
                "messages": [{"role": "user", "content": "Shop có giao hàng không?"}],
            }));
        self.finish(result, scheduled, sent, Some(Surface::OpenAi))
    }
}

/// Read a streamed answer to its end: the first token's arrival and whether it ended well.
fn read_stream(response: ureq::Response, surface: Surface, scheduled: Instant, out: &mut Outcome) {
    let mut reader = BufReader::new(response.into_reader());
    let mut line = String::new();
    let mut first = None;
    let mut last_event = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = line.trim_end();
        if let Some(event) = text.strip_prefix("event:") {
            last_event = event.trim().to_string();
            continue;
        }
        let Some(data) = text.strip_prefix("data:").map(str::trim) else {
            if text.is_empty() {
                last_event.clear();
            }
            continue;
        };
        let token = match surface {
            Surface::Widget | Surface::Async => last_event.is_empty() && data.contains("\"chunk\""),
            Surface::AiSdk => data.contains("\"text-delta\""),
            Surface::OpenAi => {
                data.contains("\"content\":\"") && !data.contains("\"content\":\"\"")
            }
        };
        if token && first.is_none() {
            first = Some(scheduled.elapsed());
        }
        let end = match surface {
            Surface::Widget | Surface::Async => last_event == "completed",
            Surface::AiSdk => data.contains("\"type\":\"finish\""),
            Surface::OpenAi => data == "[DONE]",
        };
        if end {
            out.complete = true;
        }
        if (surface == Surface::Widget && last_event == "failed")
            || (surface == Surface::AiSdk && data.contains("\"type\":\"error\""))
        {
            // The failure's code, when the event names one.
            let code = serde_json::from_str::<serde_json::Value>(data)
                .ok()
                .and_then(|v| {
                    v["code"]
                        .as_str()
                        .or(v["errorText"].as_str())
                        .map(str::to_string)
                })
                .unwrap_or_default();
            out.error_code = format!("stream_failed {code}");
            out.complete = false;
        }
    }
    out.first = first.unwrap_or_else(|| scheduled.elapsed());
    if first.is_none() && out.error_code.is_empty() {
        out.error_code = "no_token".into();
    }
}

/// Sleep until `at` (at once when it is past).
pub fn wait_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}
