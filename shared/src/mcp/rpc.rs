//! JSON-RPC 2.0 as MCP uses it: what a POSTed body holds, which methods the server knows,
//! and the objects it answers with.
//!
//! MCP narrows JSON-RPC: request ids are strings or numbers (never `null`), and `params`,
//! when present, is an object. A body is one message, or (protocol 2025-03-26 only) a
//! batch: an array of them.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value, json};

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Not a valid JSON-RPC message.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist here.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The method's params are wrong.
pub const INVALID_PARAMS: i64 = -32602;
/// The server failed.
pub const INTERNAL_ERROR: i64 = -32603;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// One of the codes above.
    pub code: i64,
    /// What went wrong, for the client's developer.
    pub message: String,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The body is not JSON.
    pub fn parse_error() -> Self {
        Self::new(PARSE_ERROR, "Parse error: the body is not valid JSON.")
    }

    /// `method` does not exist here.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            METHOD_NOT_FOUND,
            alloc::format!("Method not found: {method}"),
        )
    }
}

/// One JSON-RPC message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: it gets a response.
    Request {
        /// Its id (a string or a number), echoed in the response.
        id: Value,
        /// The method.
        method: String,
        /// Its params (an object), if any.
        params: Option<Value>,
    },
    /// A notification: no id, no response.
    Notification {
        /// The method.
        method: String,
    },
    /// A response to a request of the server's (this server sends none, so it is only
    /// acknowledged).
    Response,
}

/// A message that is not valid JSON-RPC, with the id to answer under (`null` when its id
/// could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The id to answer with.
    pub id: Value,
    /// Why it is invalid.
    pub error: RpcError,
}

/// What a POSTed body holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// One message.
    Single(Result<Message, Invalid>),
    /// A batch (an array of at least one message).
    Batch(Vec<Result<Message, Invalid>>),
}

/// Reads a POSTed body: `Err` only when it is not JSON at all (answered with
/// [`PARSE_ERROR`]); an empty array or a value that is neither an object nor an array is
/// a single invalid message.
pub fn parse(bytes: &[u8]) -> Result<Body, RpcError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|_| RpcError::parse_error())?;
    Ok(match value {
        Value::Array(items) if items.is_empty() => Body::Single(Err(Invalid {
            id: Value::Null,
            error: RpcError::new(INVALID_REQUEST, "Invalid request: an empty batch."),
        })),
        Value::Array(items) => Body::Batch(items.into_iter().map(message).collect()),
        other => Body::Single(message(other)),
    })
}

/// One message of a body.
pub fn message(value: Value) -> Result<Message, Invalid> {
    let Value::Object(mut object) = value else {
        return Err(invalid(Value::Null, "a message must be a JSON object."));
    };
    let id = object.remove("id");
    let readable_id = match &id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(readable_id, "`jsonrpc` must be \"2.0\"."));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return Err(invalid(readable_id, "`method` must be a string.")),
        None if object.contains_key("result") || object.contains_key("error") => {
            return Ok(Message::Response);
        }
        None => return Err(invalid(readable_id, "`method` is missing.")),
    };
    let params = match object.remove("params") {
        None => None,
        Some(params @ Value::Object(_)) => Some(params),
        Some(_) => return Err(invalid(readable_id, "`params` must be an object.")),
    };
    match id {
        None => Ok(Message::Notification { method }),
        Some(id @ (Value::String(_) | Value::Number(_))) => {
            Ok(Message::Request { id, method, params })
        }
        Some(_) => Err(invalid(Value::Null, "`id` must be a string or a number.")),
    }
}

fn invalid(id: Value, why: &str) -> Invalid {
    Invalid {
        id,
        error: RpcError::new(INVALID_REQUEST, alloc::format!("Invalid request: {why}")),
    }
}

/// The methods this server answers; everything else is [`Method::Unknown`], answered at
/// once with [`METHOD_NOT_FOUND`] (clients probe methods such as `server/discover` and
/// wait on silence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `initialize`: the handshake, which opens a session.
    Initialize,
    /// `ping`.
    Ping,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// Any other method.
    Unknown,
}

impl Method {
    /// The method named `name`.
    pub fn of(name: &str) -> Self {
        match name {
            "initialize" => Self::Initialize,
            "ping" => Self::Ping,
            "tools/list" => Self::ToolsList,
            "tools/call" => Self::ToolsCall,
            _ => Self::Unknown,
        }
    }

    /// Whether the method needs an initialized session (`initialize` opens one; `ping`
    /// and unknown methods are answered without).
    pub fn needs_session(self) -> bool {
        matches!(self, Self::ToolsList | Self::ToolsCall)
    }
}

/// `initialize`'s requested protocol version (`params.protocolVersion`, a string).
pub fn requested_version(params: Option<&Value>) -> Result<&str, RpcError> {
    params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::new(
                INVALID_PARAMS,
                "Invalid params: `protocolVersion` (a string) is required.",
            )
        })
}

/// A successful response.
pub fn success(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn failure(id: &Value, error: &RpcError) -> Value {
    let mut object = Map::new();
    object.insert("code".to_string(), error.code.into());
    object.insert("message".to_string(), error.message.clone().into());
    json!({"jsonrpc": "2.0", "id": id, "error": object})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn single(body: &str) -> Result<Message, Invalid> {
        match parse(body.as_bytes()).expect("JSON") {
            Body::Single(message) => message,
            Body::Batch(_) => panic!("a batch"),
        }
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert_eq!(
            single(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}"#),
            Ok(Message::Request {
                id: "a".into(),
                method: "tools/list".into(),
                params: Some(json!({}))
            })
        );
        assert_eq!(
            single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification {
                method: "notifications/initialized".into()
            })
        );
        assert_eq!(
            single(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Ok(Message::Response)
        );
    }

    #[test]
    fn a_body_that_is_not_json_is_a_parse_error() {
        assert_eq!(parse(b"{\"jsonrpc\":").unwrap_err().code, PARSE_ERROR);
        assert_eq!(parse(b"").unwrap_err().code, PARSE_ERROR);
    }

    #[test]
    fn invalid_messages_are_invalid_requests_answered_under_their_id_when_readable() {
        for (body, id) in [
            (r#"{"id":1,"method":"ping"}"#, json!(1)),
            (r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#, json!("x")),
            (r#"{"jsonrpc":"2.0","id":2,"method":5}"#, json!(2)),
            (r#"{"jsonrpc":"2.0","id":3}"#, json!(3)),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
                json!(4),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, Value::Null),
            ("42", Value::Null),
            ("[]", Value::Null),
        ] {
            let invalid = single(body).expect_err(body);
            assert_eq!(invalid.error.code, INVALID_REQUEST, "{body}");
            assert_eq!(invalid.id, id, "{body}");
        }
    }

    #[test]
    fn arrays_are_batches_of_individually_checked_messages() {
        let body = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0"}]"#;
        let Body::Batch(messages) = parse(body).expect("JSON") else {
            panic!("a batch")
        };
        assert!(matches!(messages[0], Ok(Message::Request { .. })));
        assert!(messages[1].is_err());
    }

    #[test]
    fn only_the_known_methods_are_known_and_only_tools_need_a_session() {
        assert_eq!(Method::of("initialize"), Method::Initialize);
        assert_eq!(Method::of("server/discover"), Method::Unknown);
        assert_eq!(Method::of("resources/list"), Method::Unknown);
        assert!(Method::of("tools/call").needs_session());
        assert!(!Method::of("ping").needs_session());
        assert!(!Method::of("initialize").needs_session());
    }

    #[test]
    fn responses_echo_the_id() {
        assert_eq!(
            success(&json!(5), json!({})),
            json!({"jsonrpc":"2.0","id":5,"result":{}})
        );
        let error = failure(&json!("q"), &RpcError::method_not_found("x/y"));
        assert_eq!(error["id"], "q");
        assert_eq!(error["error"]["code"], METHOD_NOT_FOUND);
        assert!(error["error"]["message"].as_str().unwrap().contains("x/y"));
    }

    #[test]
    fn initialize_needs_a_requested_version() {
        let params = json!({"protocolVersion": "2025-06-18"});
        assert_eq!(requested_version(Some(&params)), Ok("2025-06-18"));
        assert_eq!(
            requested_version(Some(&json!({}))).unwrap_err().code,
            INVALID_PARAMS
        );
        assert_eq!(requested_version(None).unwrap_err().code, INVALID_PARAMS);
    }
}
