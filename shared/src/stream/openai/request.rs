//! Request bodies for `/v1/chat/completions` and `/v1/embeddings`, and the embeddings
//! response.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize, Serializer};

use crate::chat::{ChatMessage, Role, ToolSpec};
use crate::stream::StreamError;

/// A `/v1/chat/completions` request body, borrowing from the domain messages and tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatCompletionRequest<'a> {
    /// Model name.
    pub model: &'a str,
    /// The conversation so far.
    pub messages: Vec<RequestMessage<'a>>,
    /// Tools the model may call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<RequestTool<'a>>>,
    /// Whether and which tool the model must call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice<'a>>,
    /// Stream the answer as SSE.
    pub stream: bool,
    /// Streaming options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Maximum number of tokens to generate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Structured output: `{"type":"json_schema","json_schema":{…}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<serde_json::Value>,
}

impl ChatCompletionRequest<'_> {
    /// The JSON request body.
    pub fn to_json(&self) -> String {
        // Serialising these types cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestMessage<'a> {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// Text content; omitted for an assistant message that only calls tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
    /// The tool calls an assistant message made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<RequestToolCall<'a>>>,
    /// For a tool result: the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<&'a str>,
}

impl<'a> From<&'a ChatMessage> for RequestMessage<'a> {
    fn from(m: &'a ChatMessage) -> Self {
        let tool_calls = (!m.tool_calls.is_empty()).then(|| {
            m.tool_calls
                .iter()
                .map(|c| RequestToolCall {
                    id: &c.id,
                    kind: "function",
                    function: RequestFunction {
                        name: &c.name,
                        arguments: &c.arguments,
                    },
                })
                .collect()
        });
        let content = (tool_calls.is_none() || !m.content.is_empty()).then_some(m.content.as_str());
        Self {
            role: m.role,
            content,
            tool_calls,
            tool_call_id: m.tool_call_id.as_deref(),
        }
    }
}

/// A tool call inside an assistant request message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestToolCall<'a> {
    /// Call id.
    pub id: &'a str,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// Name and argument text.
    pub function: RequestFunction<'a>,
}

/// Name and JSON argument text of a function call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestFunction<'a> {
    /// Function name.
    pub name: &'a str,
    /// Arguments as JSON text.
    pub arguments: &'a str,
}

/// A tool offered to the model: `{"type":"function","function":{...}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestTool<'a> {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// The function's name, description and parameter schema.
    pub function: &'a ToolSpec,
}

impl<'a> From<&'a ToolSpec> for RequestTool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Self {
            kind: "function",
            function: spec,
        }
    }
}

/// `tool_choice`: whether the model may, must or must not call tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice<'a> {
    /// The model decides (`"auto"`).
    Auto,
    /// No tool calls (`"none"`).
    None,
    /// At least one tool call (`"required"`).
    Required,
    /// This function must be called.
    Function(&'a str),
}

impl Serialize for ToolChoice<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Named<'a> {
            #[serde(rename = "type")]
            kind: &'a str,
            function: Name<'a>,
        }
        #[derive(Serialize)]
        struct Name<'a> {
            name: &'a str,
        }
        match self {
            Self::Auto => s.serialize_str("auto"),
            Self::None => s.serialize_str("none"),
            Self::Required => s.serialize_str("required"),
            Self::Function(name) => Named {
                kind: "function",
                function: Name { name },
            }
            .serialize(s),
        }
    }
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StreamOptions {
    /// Send a final chunk with the token usage and empty `choices`.
    pub include_usage: bool,
}

/// Builds a [`ChatCompletionRequest`].
///
/// ```
/// use concierge_core::chat::ChatMessage;
/// use concierge_core::stream::openai::ChatRequestBuilder;
/// let messages = [ChatMessage::user("Hi")];
/// let body = ChatRequestBuilder::new("smollm2", &messages).stream(true).max_tokens(64).build();
/// assert_eq!(
///     body.to_json(),
///     r#"{"model":"smollm2","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":64}"#
/// );
/// ```
#[derive(Debug, Clone)]
pub struct ChatRequestBuilder<'a> {
    request: ChatCompletionRequest<'a>,
}

impl<'a> ChatRequestBuilder<'a> {
    /// A non-streaming request for `model` with these messages.
    pub fn new(model: &'a str, messages: &'a [ChatMessage]) -> Self {
        Self {
            request: ChatCompletionRequest {
                model,
                messages: messages.iter().map(RequestMessage::from).collect(),
                tools: None,
                tool_choice: None,
                stream: false,
                stream_options: None,
                temperature: None,
                max_tokens: None,
                response_format: None,
            },
        }
    }

    /// Offers these tools (none: no `tools` field).
    pub fn tools(mut self, tools: &'a [ToolSpec]) -> Self {
        self.request.tools =
            (!tools.is_empty()).then(|| tools.iter().map(RequestTool::from).collect());
        self
    }

    /// Sets `tool_choice`.
    pub fn tool_choice(mut self, choice: ToolChoice<'a>) -> Self {
        self.request.tool_choice = Some(choice);
        self
    }

    /// Streams the answer; with `include_usage` the last chunk carries the token usage.
    pub fn stream(mut self, include_usage: bool) -> Self {
        self.request.stream = true;
        self.request.stream_options = include_usage.then_some(StreamOptions { include_usage });
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.request.temperature = Some(temperature);
        self
    }

    /// Caps the number of generated tokens.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.request.max_tokens = Some(max_tokens);
        self
    }

    /// Constrains the reply to a JSON object `{"choice": "<one of labels>"}` (strict
    /// `json_schema` structured output).
    pub fn one_of(mut self, labels: &[&str]) -> Self {
        self.request.response_format = Some(serde_json::json!({
            "type": "json_schema",
            "json_schema": {"name": "choice", "strict": true, "schema": choice_schema(labels)},
        }));
        self
    }

    /// Constrains the reply to JSON following `schema` (`json_schema` structured output).
    pub fn json_schema(mut self, name: &str, schema: serde_json::Value) -> Self {
        self.request.response_format = Some(serde_json::json!({
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema},
        }));
        self
    }

    /// The request.
    pub fn build(self) -> ChatCompletionRequest<'a> {
        self.request
    }
}

/// A `/v1/embeddings` request body.
///
/// ```
/// use concierge_core::stream::openai::EmbeddingsRequest;
/// let body = EmbeddingsRequest::new("bge-m3", ["xin chào", "hello"]).to_json();
/// assert_eq!(body, r#"{"model":"bge-m3","input":["xin chào","hello"],"encoding_format":"float"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbeddingsRequest<'a> {
    /// Model name.
    pub model: &'a str,
    /// Texts to embed.
    pub input: Vec<&'a str>,
    /// Always `float`: vectors as JSON numbers.
    pub encoding_format: &'a str,
    /// Requested vector size, for models that can shorten their output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u32>,
}

impl<'a> EmbeddingsRequest<'a> {
    /// Embeds `input` with `model`.
    pub fn new(model: &'a str, input: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            model,
            input: input.into_iter().collect(),
            encoding_format: "float",
            dimensions: None,
        }
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

/// A `/v1/embeddings` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmbeddingsResponse {
    /// One entry per input.
    #[serde(default)]
    pub data: Vec<EmbeddingData>,
    /// Model that produced the vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Token counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<EmbeddingsUsage>,
}

/// One vector of an embeddings response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmbeddingData {
    /// Position of the input this vector embeds.
    #[serde(default)]
    pub index: u32,
    /// The vector.
    pub embedding: Vec<f32>,
}

/// Token counts of an embeddings request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EmbeddingsUsage {
    /// Tokens in the input.
    #[serde(default)]
    pub prompt_tokens: u32,
    /// Tokens billed.
    #[serde(default)]
    pub total_tokens: u32,
}

impl EmbeddingsResponse {
    /// Parses a response body.
    pub fn from_json(body: &[u8]) -> Result<Self, StreamError> {
        Ok(serde_json::from_slice(body)?)
    }

    /// The vectors in input order.
    pub fn into_vectors(mut self) -> Vec<Vec<f32>> {
        self.data.sort_by_key(|d| d.index);
        self.data.into_iter().map(|d| d.embedding).collect()
    }
}

/// The JSON schema of `{"choice": "<one of labels>"}`, for structured output.
pub fn choice_schema(labels: &[&str]) -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": labels}},
        "required": ["choice"],
        "additionalProperties": false,
    })
}
