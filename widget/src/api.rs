//! The Worker's conversation API, over `fetch` (web-sys).
//!
//! The panel is served from the Worker's origin, so every call is same-origin; the site's
//! public key goes in `X-API-Key`, and the origin of the page framing the panel in
//! `X-Embedder-Origin` (the Worker accepts the key from its own origin only on behalf of
//! an embedder the site allows). JSON is read and written with the browser's own `JSON`
//! object rather than serde_json, which keeps the wasm small.
//!
//! | call | route |
//! |---|---|
//! | [`Api::config`] | `GET /widget/config` |
//! | [`Api::create`] | `POST /conversations` |
//! | [`Api::history`] | `GET /conversations/{id}/history` |
//! | [`Api::send`] | `POST /conversations/{id}/messages` (`Idempotency-Key`) → `text/event-stream` |
//! | [`Api::regenerate`] | `POST /conversations/{id}/regenerate` → `text/event-stream` |

use js_sys::{Array, JSON, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, Headers, ReadableStreamDefaultReader, RequestInit, Response};

use crate::i18n::Lang;
use crate::options::Options;

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// No response (offline, DNS, CORS, …).
    Network,
    /// The caller aborted the request.
    Aborted,
    /// An HTTP error status.
    Status(u16),
    /// The response was not what the contract says.
    Body,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The visitor.
    User,
    /// The assistant.
    Assistant,
}

impl Role {
    /// The API's name for the role.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// `GET /widget/config`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SiteConfig {
    /// The panel's title.
    pub title: Option<String>,
    /// The site's default language.
    pub language: Option<Lang>,
    /// Suggested first questions.
    pub starter_prompts: Vec<String>,
    /// The site turns handoff on ("talk to a person").
    pub handoff: bool,
}

/// A stored message.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text (markdown for the assistant).
    pub content: String,
    /// The message as the API sent it (`id`, `kind`, `payloads`, `feedback`, …).
    pub raw: JsValue,
}

/// A conversation as created or loaded.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    /// Its id.
    pub id: String,
    /// Its messages, oldest first.
    pub messages: Vec<Message>,
}

/// A client for one site's public key, on behalf of the page framing the panel.
#[derive(Debug, Clone)]
pub(crate) struct Api {
    key: String,
    embedder: String,
    /// The visitor's signed user token, when the page gave one.
    user_token: Option<String>,
}

impl Api {
    /// A client sending the options' key and (verified) parent origin.
    pub(crate) fn new(options: &Options) -> Self {
        Self {
            key: options.site_key.clone(),
            embedder: options.parent_origin.clone().unwrap_or_default(),
            user_token: options.user_token.clone(),
        }
    }

    /// The headers feedback is sent with: the key, the embedder's origin, the user token.
    pub(crate) fn headers(&self) -> [&str; 3] {
        [
            &self.key,
            &self.embedder,
            self.user_token.as_deref().unwrap_or_default(),
        ]
    }

    /// Speak for the user of `token` from now on (`None`: anonymously).
    pub(crate) fn set_user_token(&mut self, token: Option<String>) {
        self.user_token = token;
    }

    /// The site's widget settings.
    pub(crate) async fn config(&self) -> Result<SiteConfig, ApiError> {
        let json = json_body(self.fetch("GET", "/widget/config", None, None, &[]).await?).await?;
        Ok(SiteConfig {
            title: field(&json, &["title"]),
            language: field(&json, &["language"]).and_then(|l| Lang::parse(&l)),
            starter_prompts: items(&json, "starter_prompts")
                .iter()
                .filter_map(|p| p.as_string())
                .filter(|p| !p.trim().is_empty())
                .collect(),
            handoff: Reflect::get(&json, &JsValue::from_str("handoff"))
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
        })
    }

    /// Start a conversation in `lang`; it comes with its greeting.
    pub(crate) async fn create(&self, lang: Lang) -> Result<Conversation, ApiError> {
        let body = json_object(&[("language", lang.code())]);
        let response = self
            .fetch("POST", "/conversations", Some(&body), None, &[])
            .await?;
        conversation(&json_body(response).await?)
    }

    /// A conversation's messages; `Err(Status(404))` when it no longer exists.
    pub(crate) async fn history(&self, id: &str) -> Result<Conversation, ApiError> {
        let path = format!("/conversations/{}/history", encode(id));
        conversation(&json_body(self.fetch("GET", &path, None, None, &[]).await?).await?)
    }

    /// Send the visitor's message; the answer streams back as native SSE events. A retry
    /// sends the same `idempotency_key`, so the message is stored once.
    pub(crate) async fn send(
        &self,
        id: &str,
        content: &str,
        idempotency_key: &str,
        signal: Option<&AbortSignal>,
    ) -> Result<ReadableStreamDefaultReader, ApiError> {
        let path = format!("/conversations/{}/messages", encode(id));
        let body = json_object(&[("content", content)]);
        let key = [("idempotency-key", idempotency_key)];
        let response = self.fetch("POST", &path, Some(&body), signal, &key).await?;
        let stream = response.body().ok_or(ApiError::Body)?;
        ReadableStreamDefaultReader::new(&stream).map_err(|_| ApiError::Body)
    }

    /// Answer the conversation's last visitor's message again, in place of its answer.
    pub(crate) async fn regenerate(
        &self,
        id: &str,
        signal: Option<&AbortSignal>,
    ) -> Result<ReadableStreamDefaultReader, ApiError> {
        let path = format!("/conversations/{}/regenerate", encode(id));
        let response = self.fetch("POST", &path, Some("{}"), signal, &[]).await?;
        let stream = response.body().ok_or(ApiError::Body)?;
        ReadableStreamDefaultReader::new(&stream).map_err(|_| ApiError::Body)
    }

    async fn fetch(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        signal: Option<&AbortSignal>,
        extra_headers: &[(&str, &str)],
    ) -> Result<Response, ApiError> {
        let headers = Headers::new().map_err(|_| ApiError::Network)?;
        let _ = headers.set("x-api-key", &self.key);
        let _ = headers.set("x-embedder-origin", &self.embedder);
        if let Some(token) = &self.user_token {
            let _ = headers.set("x-user-token", token);
        }
        for (name, value) in extra_headers {
            let _ = headers.set(name, value);
        }
        let init = RequestInit::new();
        init.set_method(method);
        if let Some(body) = body {
            let _ = headers.set("content-type", "application/json");
            let _ = headers.set("accept", "text/event-stream, application/json");
            init.set_body(&JsValue::from_str(body));
        }
        init.set_headers(&headers);
        init.set_signal(signal);
        let promise = web_sys::window()
            .ok_or(ApiError::Network)?
            .fetch_with_str_and_init(path, &init);
        let response: Response = JsFuture::from(promise)
            .await
            .map_err(|_| {
                if signal.is_some_and(AbortSignal::aborted) {
                    ApiError::Aborted
                } else {
                    ApiError::Network
                }
            })?
            .unchecked_into();
        if response.ok() {
            Ok(response)
        } else {
            Err(ApiError::Status(response.status()))
        }
    }
}

async fn json_body(response: Response) -> Result<JsValue, ApiError> {
    let promise = response.json().map_err(|_| ApiError::Body)?;
    JsFuture::from(promise).await.map_err(|_| ApiError::Body)
}

fn conversation(json: &JsValue) -> Result<Conversation, ApiError> {
    let id = field(json, &["conversation_id"]).ok_or(ApiError::Body)?;
    // A greeting the template does not store comes beside the messages; it is shown first.
    let greeting = Reflect::get(json, &JsValue::from_str("greeting"))
        .ok()
        .filter(JsValue::is_object);
    let messages = greeting
        .into_iter()
        .chain(items(json, "messages").iter())
        .filter_map(|m| {
            let role = match field(&m, &["role"])?.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => return None,
            };
            let content = field(&m, &["content"])?;
            Some(Message {
                role,
                content,
                raw: m,
            })
        })
        .collect();
    Ok(Conversation { id, messages })
}

/// The string at `path` in a parsed JSON value.
pub(crate) fn field(value: &JsValue, path: &[&str]) -> Option<String> {
    let mut value = value.clone();
    for key in path {
        if !value.is_object() {
            return None;
        }
        value = Reflect::get(&value, &JsValue::from_str(key)).ok()?;
    }
    value.as_string()
}

/// The array under `key` (empty when absent).
fn items(value: &JsValue, key: &str) -> Array {
    Reflect::get(value, &JsValue::from_str(key))
        .ok()
        .filter(Array::is_array)
        .map(|v| v.unchecked_into())
        .unwrap_or_default()
}

/// Parse JSON text; `None` when malformed.
pub(crate) fn parse_json(text: &str) -> Option<JsValue> {
    JSON::parse(text).ok()
}

/// `{"key": "value", …}` as JSON text.
pub(crate) fn json_object(pairs: &[(&str, &str)]) -> String {
    let object = Object::new();
    for (key, value) in pairs {
        let _ = Reflect::set(&object, &(*key).into(), &(*value).into());
    }
    JSON::stringify(&object)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// Percent-encode a path segment.
fn encode(segment: &str) -> String {
    js_sys::encode_uri_component(segment).into()
}
