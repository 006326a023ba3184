//! The four agents in sequence (TEMPLATES.md §2.1), over one turn.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::agents::{Orchestration, RequestType, complete, parse_orchestration};
use super::config::{ORCHESTRATOR_PROMPT, RentalConfig, Role, session_context};
use super::data::RentalData;
use super::format::enforce_label;
use crate::boundary::{
    ChatRequest, Embedder, LogRecord, MetadataFilter, SqlReader, SqlRows, SqlScope, TableSchema,
    VectorIndex, VectorQuery,
};
use crate::chat::{ChatMessage, Role as ChatRole};
use crate::conversation::{MessageKind, Metadata};
use crate::engine::{Answer, Platform, Turn, store_reply};
use crate::error::Error;
use crate::payload::{ControlPayload, Payload};
use crate::prompt::fill;
use crate::turn::TurnEvent;

mod data;

/// The vector `source` of learned Q&A.
pub const QA_SOURCE: &str = "rental_qa";

/// How the SQL was obtained.
#[derive(Debug, Clone, PartialEq)]
struct SqlOutcome {
    /// The statement that answered, as the validator re-serialised it.
    sql: String,
    /// The first table it reads, as the validator found it.
    first_table: Option<String>,
    rows: SqlRows,
    attempts: usize,
    canonical: Option<&'static str>,
    reused: Option<String>,
    /// How long the statement that answered took to run (ms).
    sql_ms: u64,
}

struct Run<'p, 't, 'x, P: Platform, Q: SqlReader> {
    platform: &'p P,
    /// Read-only SQL over the site's data.
    sql: &'p Q,
    /// The site's roles and learned Q&A.
    data: Option<&'p dyn RentalData>,
    config: &'p RentalConfig,
    turn: &'t mut Turn<'x>,
    role: Role,
    question: String,
    /// Whether the session context holds an earlier turn of this visitor (anything but
    /// assistant text, such as the greeting). Such a question is read in its
    /// conversation, so the SQL written for it is never learned: another visitor asking
    /// the same words must not get SQL one visitor's conversation steered.
    contextual: bool,
    route: Vec<&'static str>,
}

/// Runs the rental turn.
pub async fn answer<P: Platform, Q: SqlReader>(
    config: &RentalConfig,
    sql: &Q,
    data: Option<&dyn RentalData>,
    platform: &P,
    turn: &mut Turn<'_>,
) -> Result<Answer, Error> {
    let question = turn
        .history
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let role = role_of(data, turn).await;
    let contextual = session_context(&turn.history)
        .iter()
        .skip(1)
        .any(|m| m.role != ChatRole::Assistant);
    let mut run = Run {
        platform,
        sql,
        data,
        config,
        turn,
        role,
        question,
        contextual,
        route: Vec::new(),
    };
    run.go().await
}

/// The role from code: the signed token's claim, else the merchant's upload, else GUEST.
async fn role_of(data: Option<&dyn RentalData>, turn: &Turn<'_>) -> Role {
    let Some(identity) = turn.identity() else {
        return Role::Guest;
    };
    if let Some(role) = identity.role.as_deref().and_then(Role::parse) {
        return role;
    }
    let Some(data) = data else {
        return Role::Guest;
    };
    match data.role(&turn.conversation.site_id, &identity.sub).await {
        Ok(Some(role)) => Role::parse(&role).unwrap_or(Role::Guest),
        _ => Role::Guest,
    }
}

impl<P: Platform, Q: SqlReader> Run<'_, '_, '_, P, Q> {
    fn scope(&self) -> SqlScope<'_> {
        let site = self.turn.conversation.site_id.as_str();
        match self.turn.identity() {
            Some(identity) => SqlScope::user(site, &identity.sub),
            None => SqlScope::site(site),
        }
    }

    fn language_line(&self) -> &str {
        self.config.sentence(self.turn.language, "answer_language")
    }

    fn warn(&self, code: &'static str, detail: &str) {
        let record = LogRecord::Warning {
            conversation_id: &self.turn.conversation.id,
            code,
            detail,
        };
        self.platform.logger().log(&record);
    }

    async fn go(&mut self) -> Result<Answer, Error> {
        let vector = self.embed().await;
        let business = self.business_context(vector.as_deref()).await;
        let tables = self.sql.schema(self.scope()).await.unwrap_or_default();
        let schema_text = schema_text(&tables);
        self.route.push("orchestrator");
        // A model that cannot be reached fails the turn (`failed`, the visitor's message
        // stays stored, the widget offers Retry) like every template; only a reply that is
        // not the orchestrator's JSON falls back to general chat (the seed's rule).
        let orchestration = self.orchestrate(&schema_text, &business).await?;
        let Some(orchestration) = orchestration else {
            self.route.push("content_response");
            let text = self
                .config
                .sentence(self.turn.language, "fallback_chat")
                .to_string();
            return self
                .reply(
                    "CONTENT",
                    RequestType::GeneralChat,
                    &text,
                    None,
                    Metadata::new(),
                )
                .await;
        };
        match orchestration.request_type {
            RequestType::Query if orchestration.ready_for_sql => {
                self.data_path(&orchestration, &schema_text, &business, vector)
                    .await
            }
            RequestType::Query | RequestType::Clarification => {
                self.route.push("control_response");
                let mut text = orchestration.message.clone();
                if text.is_empty() {
                    text = self.config.sentence(self.turn.language, "clarify").into();
                }
                let control = Payload::Control(ControlPayload {
                    reason: "CLARIFICATION".into(),
                    questions: Vec::new(),
                });
                let kind = orchestration.request_type;
                self.reply("CONTROL", kind, &text, Some(control), Metadata::new())
                    .await
            }
            RequestType::Greeting | RequestType::GeneralChat => {
                self.route.push("content_response");
                let mut text = orchestration.message.clone();
                if text.is_empty() {
                    text = self
                        .config
                        .sentence(self.turn.language, "fallback_chat")
                        .into();
                }
                let kind = orchestration.request_type;
                self.reply("CONTENT", kind, &text, None, Metadata::new())
                    .await
            }
        }
    }

    /// The question's embedding (business context and canonical lookup), if any.
    async fn embed(&self) -> Option<Vec<f32>> {
        match self
            .platform
            .embedder()
            .embed(&[self.question.as_str()])
            .await
        {
            Ok(mut vectors) if !vectors.is_empty() => Some(vectors.swap_remove(0)),
            Ok(_) => None,
            Err(error) => {
                self.warn("rental_embed_failed", &error.to_string());
                None
            }
        }
    }

    /// "buildRagContext includeBusiness": the site's knowledge passages.
    async fn business_context(&self, vector: Option<&[f32]>) -> String {
        let none = self
            .config
            .sentence(self.turn.language, "no_business")
            .to_string();
        let (Some(vector), true) = (vector, self.turn.retrievable) else {
            return none;
        };
        let query = VectorQuery {
            vector: vector.to_vec(),
            top_k: self.config.turn.retrieval.candidates,
            filter: MetadataFilter::new()
                .eq("site_id", self.turn.conversation.site_id.as_str())
                .eq("source", "knowledge"),
        };
        let Ok(matches) = self.platform.index().query(&query).await else {
            return none;
        };
        let passages =
            crate::retrieval::rerank(&self.question, matches, &self.config.turn.retrieval, &[]);
        if passages.is_empty() {
            return none;
        }
        let mut out = String::new();
        for passage in passages {
            crate::prompt::push_quoted(&mut out, &passage.text);
            out.push('\n');
        }
        out
    }

    fn request(&self, system: String, with_history: bool) -> ChatRequest {
        let mut messages = alloc::vec![ChatMessage::system(system)];
        if with_history {
            messages.extend(session_context(&self.turn.history).into_iter().skip(1));
        }
        messages.push(ChatMessage::user(self.question.clone()));
        ChatRequest {
            messages,
            tools: Vec::new(),
            temperature: self.config.turn.temperature,
            max_tokens: self.config.turn.max_tokens,
        }
    }

    /// Agent 1. `Ok(None)`: the model answered no JSON (seed: GENERAL_CHAT); `Err`: the
    /// model failed (unreachable, an upstream error), which ends the turn as a failure.
    async fn orchestrate(
        &self,
        schema: &str,
        business: &str,
    ) -> Result<Option<Orchestration>, Error> {
        let system = fill(
            ORCHESTRATOR_PROMPT,
            &[
                ("role", self.role.as_str()),
                ("schema", schema),
                ("business", business),
                ("language", self.language_line()),
            ],
        );
        let mut request = self.request(system, true);
        let base = super::config::SYSTEM_PROMPT_VI.trim();
        request.messages[0].content = format!("{}\n\n{base}", request.messages[0].content);
        match complete(self.platform.model(), &request).await {
            Ok(text) => Ok(parse_orchestration(&text)),
            Err(error) => {
                self.warn("rental_orchestrator_failed", &error.to_string());
                Err(error)
            }
        }
    }

    /// A reply without SQL: the text streamed with its label, stored.
    async fn reply(
        &mut self,
        kind: &str,
        request_type: RequestType,
        text: &str,
        payload: Option<Payload>,
        meta: Metadata,
    ) -> Result<Answer, Error> {
        let message = enforce_label(text, self.config.label(self.role));
        self.turn.sink.emit(TurnEvent::Chunk {
            text: message.clone(),
        });
        if let Some(payload) = payload {
            self.turn.payload(payload);
        }
        let _ = request_type;
        self.store(kind, request_type, message, meta).await
    }

    async fn store(
        &mut self,
        kind: &str,
        request_type: RequestType,
        message: String,
        mut meta: Metadata,
    ) -> Result<Answer, Error> {
        let message = enforce_label(&message, self.config.label(self.role));
        meta.insert("kind".into(), kind.into());
        meta.insert("request_type".into(), request_type.as_str().into());
        meta.insert("role".into(), self.role.as_str().into());
        meta.entry("canonical").or_insert(Value::Null);
        let reply = store_reply(
            self.platform,
            self.turn,
            MessageKind::Answer,
            message,
            meta,
            Vec::new(),
        )
        .await?;
        Ok(Answer {
            reply,
            intent: Some(request_type.as_str()),
            confidence: None,
            usage: None,
            route: core::mem::take(&mut self.route),
        })
    }
}

/// The vector id of a learned Q&A.
pub fn qa_vector_id(qa_id: &str) -> String {
    format!("rqa_{qa_id}")
}

/// The tables as the prompts describe them.
fn schema_text(tables: &[TableSchema]) -> String {
    let mut out = String::new();
    for table in tables {
        out.push_str(&format!("- {}(", table.name));
        let columns: Vec<String> = table
            .columns
            .iter()
            .map(|c| {
                let kind = serde_json::to_value(c.column_type).ok();
                let kind = kind.as_ref().and_then(Value::as_str).unwrap_or("text");
                if c.description.is_empty() {
                    format!("{} {kind}", c.name)
                } else {
                    format!("{} {kind} -- {}", c.name, c.description)
                }
            })
            .collect();
        out.push_str(&columns.join(", "));
        out.push_str(&format!(")  {}\n", table.description));
    }
    out
}
