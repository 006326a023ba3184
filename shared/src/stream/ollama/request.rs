//! Request bodies for `/api/chat` and `/api/embed`, and the `/api/embed` response.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::chat::{ChatMessage, Role, ToolSpec};
use crate::stream::StreamError;
use crate::stream::openai::RequestTool;

/// A `/api/chat` request body, borrowing from the domain messages and tools.
///
/// ```
/// use concierge_core::chat::ChatMessage;
/// use concierge_core::stream::ollama::OllamaChatRequest;
/// let messages = [ChatMessage::user("Hi")];
/// let body = OllamaChatRequest::new("llama3.2", &messages).temperature(0.0).to_json();
/// assert_eq!(
///     body,
///     r#"{"model":"llama3.2","messages":[{"role":"user","content":"Hi"}],"stream":true,"options":{"temperature":0.0}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OllamaChatRequest<'a> {
    /// Model name.
    pub model: &'a str,
    /// The conversation so far.
    pub messages: Vec<OllamaMessage<'a>>,
    /// Tools the model may call (same shape as OpenAI's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<RequestTool<'a>>>,
    /// Stream NDJSON lines (Ollama's default is `true`).
    pub stream: bool,
    /// Model options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<OllamaOptions>,
    /// Structured output: the JSON schema the reply must follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<serde_json::Value>,
}

/// `options` of an Ollama request.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct OllamaOptions {
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Maximum number of tokens to generate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_predict: Option<u32>,
}

/// One message of an Ollama chat request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OllamaMessage<'a> {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// Text content.
    pub content: &'a str,
    /// Tool calls an assistant message made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<OllamaToolCallOut<'a>>>,
    /// For a tool result: the name of the tool that produced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<&'a str>,
}

/// A tool call inside an assistant request message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OllamaToolCallOut<'a> {
    /// The function called.
    pub function: OllamaFunctionCall<'a>,
}

/// Name and arguments of a called function; Ollama wants the arguments as an object.
#[derive(Debug, Clone, Serialize)]
pub struct OllamaFunctionCall<'a> {
    /// Function name.
    pub name: &'a str,
    /// The argument object, as the exact JSON text of the call (or, if that text is not
    /// JSON, as a JSON string holding it).
    pub arguments: Arguments<'a>,
}

impl PartialEq for OllamaFunctionCall<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.arguments.as_str() == other.arguments.as_str()
    }
}

/// Tool-call arguments for a request: raw JSON when valid, a JSON string otherwise.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(untagged)]
pub enum Arguments<'a> {
    /// Valid JSON, written as is.
    Json(&'a RawValue),
    /// Not JSON: written as a string.
    Text(&'a str),
}

impl<'a> Arguments<'a> {
    fn new(text: &'a str) -> Self {
        serde_json::from_str::<&RawValue>(text).map_or(Self::Text(text), Self::Json)
    }

    fn as_str(&self) -> &'a str {
        match self {
            Self::Json(raw) => raw.get(),
            Self::Text(text) => text,
        }
    }
}

impl<'a> OllamaChatRequest<'a> {
    /// A streaming request for `model` with these messages. A tool result gets the
    /// `tool_name` of the call it answers, found among the earlier assistant messages.
    pub fn new(model: &'a str, messages: &'a [ChatMessage]) -> Self {
        let messages = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let tool_calls = (!m.tool_calls.is_empty()).then(|| {
                    m.tool_calls
                        .iter()
                        .map(|c| OllamaToolCallOut {
                            function: OllamaFunctionCall {
                                name: &c.name,
                                arguments: Arguments::new(&c.arguments),
                            },
                        })
                        .collect()
                });
                let tool_name = m.tool_call_id.as_deref().and_then(|id| {
                    messages[..i]
                        .iter()
                        .rev()
                        .flat_map(|earlier| &earlier.tool_calls)
                        .find(|call| call.id == id)
                        .map(|call| call.name.as_str())
                });
                OllamaMessage {
                    role: m.role,
                    content: &m.content,
                    tool_calls,
                    tool_name,
                }
            })
            .collect();
        Self {
            model,
            messages,
            tools: None,
            stream: true,
            options: None,
            format: None,
        }
    }

    /// Offers these tools (none: no `tools` field).
    pub fn tools(mut self, tools: &'a [ToolSpec]) -> Self {
        self.tools = (!tools.is_empty()).then(|| tools.iter().map(RequestTool::from).collect());
        self
    }

    /// Streams NDJSON (the default) or not.
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.options
            .get_or_insert_with(OllamaOptions::default)
            .temperature = Some(temperature);
        self
    }

    /// Caps the number of generated tokens (`num_predict`).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.options
            .get_or_insert_with(OllamaOptions::default)
            .num_predict = Some(max_tokens);
        self
    }

    /// Constrains the reply to a JSON object `{"choice": "<one of labels>"}`.
    pub fn one_of(mut self, labels: &[&str]) -> Self {
        self.format = Some(crate::stream::openai::choice_schema(labels));
        self
    }

    /// Constrains the reply to JSON following `schema`.
    pub fn json_schema(mut self, schema: serde_json::Value) -> Self {
        self.format = Some(schema);
        self
    }

    /// The JSON request body.
    pub fn to_json(&self) -> String {
        // Serialising these types cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A `/api/embed` request body.
///
/// ```
/// use concierge_core::stream::ollama::EmbedRequest;
/// let body = EmbedRequest::new("bge-m3", ["xin chào"]).to_json();
/// assert_eq!(body, r#"{"model":"bge-m3","input":["xin chào"]}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedRequest<'a> {
    /// Model name.
    pub model: &'a str,
    /// Texts to embed.
    pub input: Vec<&'a str>,
    /// Truncate inputs longer than the context instead of failing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncate: Option<bool>,
    /// Requested vector size, for models that can shorten their output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
}

impl<'a> EmbedRequest<'a> {
    /// Embeds `input` with `model`.
    pub fn new(model: &'a str, input: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            model,
            input: input.into_iter().collect(),
            truncate: None,
            dimensions: None,
        }
    }

    /// Sets `truncate`.
    pub fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = Some(truncate);
        self
    }

    /// Requests vectors of `dimensions` values.
    pub fn dimensions(mut self, dimensions: u32) -> Self {
        self.dimensions = Some(dimensions);
        self
    }

    /// The JSON request body.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A `/api/embed` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmbedResponse {
    /// Model that produced the vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// One vector per input, in input order.
    #[serde(default)]
    pub embeddings: Vec<Vec<f32>>,
    /// Total time in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_duration: Option<u64>,
    /// Model load time in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_duration: Option<u64>,
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_count: Option<u32>,
}

impl EmbedResponse {
    /// Parses a response body.
    pub fn from_json(body: &[u8]) -> Result<Self, StreamError> {
        Ok(serde_json::from_slice(body)?)
    }
}
