//! Talk to the `shop` template in a terminal, against any OpenAI-compatible endpoint
//! (for instance a local `llama-server`), with in-memory stores.
//!
//! ```text
//! scripts/install-llm.sh && scripts/llm-server.sh 8080 &
//! cargo run -p concierge-core --features memory --example chat -- [OPTIONS]
//!   --url URL      the endpoint's base URL (default http://127.0.0.1:8080)
//!   --model NAME   the model name to send (default smollm2-135m-instruct)
//!   --key KEY      a bearer token, for hosted endpoints
//!   --max-tokens N cap on each answer's tokens (default 256; small models ramble)
//! ```
//!
//! Type a message per line; the answer streams as it is generated. Routing details (intent,
//! confidence, route, usage) go to stderr. Seed 000's demo warranty record is loaded
//! (serial `0979825281`), and a few knowledge documents are indexed for retrieval.

use std::io::{BufRead, Read, Write};
use std::process::ExitCode;

use concierge_core::boundary::{ChatModel, ChatSink, ModelCall};
use concierge_core::engine::NewConversation;
use concierge_core::error::{ChatModelError, ChatModelErrorKind};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::MemoryBackend;
use concierge_core::retrieval::index_document;
use concierge_core::stream::ChatStreamDecoder;
use concierge_core::stream::openai::{ChatRequestBuilder, OpenAiStreamDecoder};
use concierge_core::turn::{TurnEvent, TurnInput};

const SITE: &str = "demo";

const KNOWLEDGE: &[(&str, &str, &str)] = &[
    (
        "doi-tra",
        "Chính sách đổi trả",
        "Quý khách được đổi trả trong 7 ngày nếu sản phẩm còn nguyên hộp và hóa đơn.",
    ),
    (
        "bao-hanh",
        "Chính sách bảo hành",
        "Linh kiện được bảo hành 36 tháng tại trung tâm bảo hành của hãng. Lỗi do nhà sản xuất được 1 đổi 1 trong 30 ngày.",
    ),
    (
        "rtx-4060",
        "RTX 4060",
        "Card đồ họa RTX 4060 8GB giá 8.490.000 VND, còn hàng.",
    ),
    (
        "giao-hang",
        "Giao hàng",
        "Giao hàng miễn phí nội thành cho đơn từ 2 triệu, thanh toán khi nhận hàng.",
    ),
];

/// An OpenAI-compatible chat model over blocking HTTP (ureq): the request body comes from
/// the core's request builder, the SSE response is fed to the core's decoder as it arrives.
struct OpenAiChatModel {
    agent: ureq::Agent,
    url: String,
    model: String,
    key: Option<String>,
}

impl ChatModel for OpenAiChatModel {
    async fn stream(
        &self,
        call: &ModelCall<'_>,
        sink: &mut dyn ChatSink,
    ) -> Result<(), ChatModelError> {
        let request = call.request;
        let model = call.model.unwrap_or(&self.model);
        let mut builder = ChatRequestBuilder::new(model, &request.messages)
            .tools(&request.tools)
            .stream(true);
        if let Some(temperature) = request.temperature {
            builder = builder.temperature(temperature);
        }
        if let Some(max_tokens) = request.max_tokens {
            builder = builder.max_tokens(max_tokens);
        }
        let body = builder.build().to_json();
        let mut call = self
            .agent
            .post(&format!("{}/v1/chat/completions", self.url))
            .set("content-type", "application/json")
            .set("accept", "text/event-stream");
        if let Some(key) = &self.key {
            call = call.set("authorization", &format!("Bearer {key}"));
        }
        let response = match call.send_string(&body) {
            Ok(response) => response,
            Err(ureq::Error::Status(status, response)) => {
                let detail = response.into_string().unwrap_or_default();
                return Err(ChatModelError::new(
                    ChatModelErrorKind::Status(status),
                    detail,
                ));
            }
            Err(error) => {
                return Err(ChatModelError::new(
                    ChatModelErrorKind::Unreachable,
                    error.to_string(),
                ));
            }
        };
        let mut reader = response.into_reader();
        let mut decoder = OpenAiStreamDecoder::new();
        let mut buffer = [0u8; 4096];
        loop {
            let read = reader.read(&mut buffer).map_err(|error| {
                ChatModelError::new(ChatModelErrorKind::Unreachable, error.to_string())
            })?;
            if read == 0 {
                decoder.finish();
            } else {
                decoder.feed(&buffer[..read]);
            }
            while let Some(event) = decoder.next_event() {
                match event {
                    Ok(event) => sink.event(event),
                    Err(error) => {
                        return Err(ChatModelError::new(
                            ChatModelErrorKind::Decode,
                            format!("{error:?}"),
                        ));
                    }
                }
            }
            if read == 0 {
                return Ok(());
            }
        }
    }
}

fn main() -> ExitCode {
    let mut url = "http://127.0.0.1:8080".to_string();
    let mut model = "smollm2-135m-instruct".to_string();
    let mut key = std::env::var("LLM_API_KEY").ok();
    let mut max_tokens = 256;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value) {
            ("--url", Some(v)) => url = v.trim_end_matches('/').to_string(),
            ("--model", Some(v)) => model = v,
            ("--key", Some(v)) => key = Some(v),
            ("--max-tokens", Some(v)) if v.parse::<u32>().is_ok() => {
                max_tokens = v.parse().unwrap_or(256)
            }
            _ => {
                eprintln!("usage: chat [--url URL] [--model NAME] [--key KEY] [--max-tokens N]");
                return ExitCode::from(2);
            }
        }
    }
    // No connection reuse: llama-server may close an idle keep-alive connection, and a POST
    // on a stale pooled connection fails instead of being retried.
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(std::time::Duration::from_secs(5))
        .max_idle_connections(0)
        .build();
    let llm = OpenAiChatModel {
        agent,
        url,
        model,
        key,
    };

    let backend = MemoryBackend::demo(SITE);
    for (id, title, text) in KNOWLEDGE {
        if let Err(error) = block_on(index_document(
            &backend.embedder,
            &backend.index,
            SITE,
            id,
            title,
            text,
        )) {
            eprintln!("chat: indexing {id}: {error}");
        }
    }
    let services = backend.with_model(&llm);
    let mut config = ShopConfig::default();
    config.turn.max_tokens = Some(max_tokens);
    let new = NewConversation {
        site_id: SITE.into(),
        user_id: Some("terminal".into()),
        identity: None,
        language: None,
    };
    let created = match block_on(concierge_core::engine::create_conversation(
        &services,
        &shop(&backend, &config),
        new,
    )) {
        Ok(created) => created,
        Err(error) => {
            eprintln!("chat: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "assistant: {}", created.greeting.content);

    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let input = TurnInput {
            site_id: SITE.into(),
            conversation_id: created.conversation.id.clone(),
            text: line,
            idempotency_key: None,
        };
        let _ = write!(out, "assistant: ");
        let _ = out.flush();
        let mut on_event = |event: TurnEvent| match event {
            TurnEvent::Chunk { text } => {
                let _ = write!(out, "{text}");
                let _ = out.flush();
            }
            TurnEvent::Completed {
                kind,
                intent,
                confidence,
                usage,
                ..
            } => {
                let _ = writeln!(out);
                eprintln!(
                    "  [{} · intent {} · confidence {:?} · usage {usage:?}]",
                    kind.as_str(),
                    intent.unwrap_or("-"),
                    confidence
                );
            }
            TurnEvent::Failed { code, message } => {
                let _ = writeln!(out, "({message})");
                eprintln!("  [failed: {code}]");
            }
            TurnEvent::ToolStart { name, input, .. } => eprintln!("  [tool {name} {input}]"),
            TurnEvent::ToolEnd { name, ok, .. } => eprintln!("  [tool {name} ok={ok}]"),
            TurnEvent::Progress { message, .. } => eprintln!("  [{message}]"),
            TurnEvent::Payload { kind, .. } => eprintln!("  [payload {kind}]"),
            TurnEvent::Started { .. } => {}
        };
        match block_on(concierge_core::engine::run_turn(
            &services,
            &shop(&backend, &config),
            &input,
            &mut on_event,
        )) {
            Ok(outcome) => eprintln!("  [route: {}]", outcome.route.join(" → ")),
            Err(error) => eprintln!("  [error: {error}]"),
        }
        // What the Worker's embedding queue consumer does: index the stored messages.
        if let Err(error) = block_on(backend.index_queued()) {
            eprintln!("  [indexing: {error}]");
        }
    }
    ExitCode::SUCCESS
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn shop<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::shop::ShopConfig,
) -> concierge_core::flows::shop::ShopAssistant<&'b concierge_core::memory::MemoryWarrantyRecords> {
    concierge_core::flows::shop::ShopAssistant::new(config.clone(), &backend.warranty)
}
