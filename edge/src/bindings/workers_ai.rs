//! Workers AI through the `AI` binding: the chat model and the embedder of sites whose
//! `llm.provider` is `workers-ai` (or of every site, with `LLM_PROVIDER = "workers-ai"`).
//!
//! workers-rs has no streaming wrapper for the binding, so it is called structurally:
//! `env.AI.run(model, inputs)`, as the documentation describes it.
//! - Chat: `inputs.messages` (`[{role, content}]`), `max_tokens`, `temperature`. With
//!   `stream: true` the call resolves to a `ReadableStream` of server-sent events
//!   `data: {"response": "…"}` ending `data: [DONE]` ([`WorkersAiStreamDecoder`]); the
//!   [`super::upstream`] loop reads it with the same deadlines, retry and error rules as an
//!   HTTP upstream. A request with tools or a constraint (structured output,
//!   `response_format`, which the service does not stream) resolves to one object
//!   `{response, tool_calls, usage}`, turned into the same events ([`reply_events`]).
//! - Embeddings: `{text: [...]}` resolves to `{shape: [n, dims], data: [[…], …]}`
//!   ([`vectors`]); `@cf/baai/bge-m3` gives 1024 dimensions. A reply of the wrong count or
//!   size is refused, never stored.
//!
//! A failed call rejects with an error whose message starts with the service's code
//! ([`call_error`]): input errors (5xxx) are the request's fault and are not retried;
//! capacity and internal errors (3xxx) are retried once, like an HTTP 5xx.
//!
//! Replies (streamed or whole) are read into chat events in `reply`.

use concierge_core::boundary::{ChatRequest, Constraint, tool_call_schema};
use concierge_core::chat::{ChatMessage, Role};
use concierge_core::error::{ChatModelError, ChatModelErrorKind};
use concierge_core::stream::openai::choice_schema;
use serde::Deserialize;
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use worker::Env;

mod reply;

pub(crate) use reply::{WorkersAiStreamDecoder, reply_events};

/// The provider's name in `llm.provider` and `LLM_PROVIDER`.
pub(crate) const PROVIDER: &str = "workers-ai";
/// The binding's name in `wrangler.toml` (`[ai] binding = "AI"`).
pub(crate) const BINDING: &str = "AI";
/// The chat model when neither the site nor `LLM_MODEL` names a Workers AI model.
pub(crate) const DEFAULT_CHAT_MODEL: &str = "@cf/meta/llama-3.1-8b-instruct";
/// The embedding model when neither the site nor `EMBED_MODEL` names a Workers AI model.
pub(crate) const DEFAULT_EMBED_MODEL: &str = "@cf/baai/bge-m3";
/// `@cf/baai/bge-m3`'s vector size.
pub(crate) const BGE_M3_DIMENSIONS: usize = 1024;
/// The most texts one embedding call takes (the `text` array's documented limit).
pub(crate) const MAX_EMBED_TEXTS: usize = 100;

/// Whether `name` is a Workers AI model name (`@cf/…`, `@hf/…`).
pub(crate) fn is_model_name(name: &str) -> bool {
    let mut parts = name.splitn(3, '/');
    matches!(parts.next(), Some("@cf" | "@hf"))
        && parts.next().is_some_and(|p| !p.is_empty())
        && parts.next().is_some_and(|p| !p.is_empty())
        && name.len() <= 128
        && name.bytes().all(|b| b.is_ascii_graphic())
}

/// The `AI` binding, when the Worker has one.
#[derive(Clone)]
pub(crate) struct WorkersAi {
    binding: JsValue,
}

impl std::fmt::Debug for WorkersAi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkersAi").finish_non_exhaustive()
    }
}

impl WorkersAi {
    /// The `AI` binding, if declared (`wrangler dev --local` leaves it out: the service
    /// cannot run locally; the tests bind a double in its place).
    pub(crate) fn from_env(env: &Env) -> Option<Self> {
        let binding = js_sys::Reflect::get(env, &BINDING.into()).ok()?;
        (!binding.is_undefined() && !binding.is_null()).then_some(Self { binding })
    }

    /// `env.AI.run(model, inputs)` (`inputs` as JSON text): what it resolves to, or the
    /// rejection's message.
    pub(crate) async fn run(&self, model: &str, inputs: &str) -> Result<JsValue, String> {
        let inputs = js_sys::JSON::parse(inputs).map_err(|e| describe(&e))?;
        let run = js_sys::Reflect::get(&self.binding, &"run".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| "the AI binding has no run method".to_string())?;
        // `Reflect.apply`, not `run.call(…)`: on a service binding's RPC stub (the tests'
        // double), `.call` would be taken for a remote method named `call`.
        let args = js_sys::Array::of2(&model.into(), &inputs);
        let promise =
            js_sys::Reflect::apply(&run, &self.binding, &args).map_err(|e| describe(&e))?;
        JsFuture::from(js_sys::Promise::resolve(&promise))
            .await
            .map_err(|e| describe(&e))
    }
}

/// A JS error's message (or its JSON), for logs and error kinds.
fn describe(error: &JsValue) -> String {
    if let Some(error) = error.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    error
        .as_string()
        .or_else(|| js_sys::JSON::stringify(error).ok().map(String::from))
        .unwrap_or_else(|| "Workers AI error".into())
}

/// The chat model error for a rejected call: the service's code decides whether it is
/// the request's fault (input errors, 5xxx: like an HTTP 400, not retried; a constrained
/// request is then asked plainly) or transient (3xxx: like a 503, retried once).
pub(crate) fn call_error(message: &str) -> ChatModelError {
    let code = message
        .split(|c: char| !c.is_ascii_digit())
        .find(|part| part.len() == 4)
        .and_then(|c| c.parse::<u32>().ok());
    let kind = match code {
        Some(5000..=5999) => ChatModelErrorKind::Status(400),
        Some(3036) => ChatModelErrorKind::Status(429),
        Some(3000..=3999) => ChatModelErrorKind::Status(503),
        _ => ChatModelErrorKind::Unreachable,
    };
    ChatModelError::new(kind, format!("Workers AI: {message}"))
}

/// Whether what `run` resolved to is a stream (`stream: true`) rather than one object.
pub(crate) fn as_stream(value: &JsValue) -> Option<worker::web_sys::ReadableStream> {
    let get_reader = js_sys::Reflect::get(value, &"getReader".into()).ok()?;
    get_reader
        .is_function()
        .then(|| value.clone().unchecked_into())
}

/// The JSON of a resolved non-stream value.
pub(crate) fn to_json(value: &JsValue) -> Result<Value, String> {
    let text = js_sys::JSON::stringify(value)
        .map(String::from)
        .map_err(|e| describe(&e))?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

fn message_json(message: &ChatMessage) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = json!({"role": role, "content": message.content});
    if !message.tool_calls.is_empty() {
        out["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect();
    }
    if let Some(id) = &message.tool_call_id {
        out["tool_call_id"] = id.as_str().into();
    }
    out
}

/// The `inputs` of a chat request under `constraint`. Streamed unless the request offers
/// tools or asks for structured output (`response_format`), which the service answers
/// whole; Workers AI has no `tool_choice`, so a required call is asked for with the tools
/// offered and checked by the caller as usual.
pub(crate) fn chat_inputs(request: &ChatRequest, constraint: &Constraint<'_>) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
    let mut inputs = json!({ "messages": messages });
    let as_json = constraint.tool_as_json && !request.tools.is_empty();
    let mut whole = false;
    if !request.tools.is_empty() && !as_json {
        inputs["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function":
                    {"name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        whole = true;
    }
    if as_json {
        inputs["response_format"] =
            json!({"type": "json_schema", "json_schema": tool_call_schema(&request.tools)});
        whole = true;
    } else if !constraint.one_of.is_empty() {
        inputs["response_format"] =
            json!({"type": "json_schema", "json_schema": choice_schema(constraint.one_of)});
        whole = true;
    }
    if let Some(t) = request.temperature {
        inputs["temperature"] = json!(t);
    }
    if let Some(n) = request.max_tokens {
        inputs["max_tokens"] = n.into();
    }
    inputs["stream"] = (!whole).into();
    inputs
}

/// The `inputs` of an embedding call.
pub(crate) fn embed_inputs(texts: &[&str]) -> Value {
    json!({ "text": texts })
}

/// The vectors of an embedding reply `{shape: [n, dims], data: [[…]]}`: exactly `count`
/// vectors of one size (`dimensions` when given), every value a finite number, or why not.
pub(crate) fn vectors(
    reply: Value,
    count: usize,
    dimensions: Option<usize>,
) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    struct Reply {
        #[serde(default)]
        shape: Option<Vec<usize>>,
        data: Vec<Vec<f64>>,
    }
    let reply: Reply =
        serde_json::from_value(reply).map_err(|e| format!("embedding reply: {e}"))?;
    if reply.data.len() != count {
        return Err(format!(
            "embedding reply has {} vectors for {count} texts",
            reply.data.len()
        ));
    }
    let size = reply.data.first().map_or(0, Vec::len);
    if size == 0 || reply.data.iter().any(|v| v.len() != size) {
        return Err("embedding reply's vectors differ in size".into());
    }
    if let Some(expected) = dimensions
        && size != expected
    {
        return Err(format!(
            "embedding reply has {size} dimensions, {expected} expected"
        ));
    }
    if reply
        .shape
        .as_deref()
        .is_some_and(|shape| shape != [count, size])
    {
        return Err("embedding reply's shape does not match its data".into());
    }
    if reply.data.iter().flatten().any(|x| !x.is_finite()) {
        return Err("embedding reply has a value that is not a number".into());
    }
    Ok(reply
        .data
        .into_iter()
        .map(|v| v.into_iter().map(|x| x as f32).collect())
        .collect())
}
