//! The four agents in sequence (TEMPLATES.md §2.1), over one turn.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::agents::{
    Orchestration, RequestType, complete, extract_sql, parse_orchestration, parse_validation,
    rows_json,
};
use super::build::{Mode, build, wanted_mode};
use super::config::{
    CANONICAL_HARD, CANONICAL_SOFT, ORCHESTRATOR_PROMPT, RESPONSE_PROMPT, RentalConfig, Role,
    SQL_ATTEMPTS, SQL_PROMPT, VALIDATOR_PROMPT, session_context,
};
use super::format::{EndGate, LabelGate, enforce_label, parse};
use super::sql::{FUNCTIONS, validate};
use crate::boundary::{
    ChatModel, ChatRequest, Embedder, LogRecord, MetadataFilter, QaRecord, ReadOnlyQuery,
    SqlReader, SqlRows, SqlScope, TableSchema, VectorIndex, VectorQuery, VectorRecord,
};
use crate::chat::{ChatEvent, ChatMessage};
use crate::conversation::{MessageKind, Metadata};
use crate::engine::{Answer, Platform, Turn, store_reply};
use crate::error::{ChatModelError, ChatModelErrorKind, Error};
use crate::payload::{ControlPayload, Payload};
use crate::prompt::fill;
use crate::turn::TurnEvent;

/// The vector `source` of learned Q&A.
pub const QA_SOURCE: &str = "rental_qa";

/// How the SQL was obtained.
#[derive(Debug, Clone, PartialEq)]
struct SqlOutcome {
    sql: String,
    rows: SqlRows,
    attempts: usize,
    canonical: Option<&'static str>,
    reused: Option<String>,
    /// How long the statement that answered took to run (ms).
    sql_ms: u64,
}

struct Run<'p, 't, 'x, P: Platform> {
    platform: &'p P,
    config: &'p RentalConfig,
    turn: &'t mut Turn<'x>,
    role: Role,
    question: String,
    route: Vec<&'static str>,
}

/// Runs the rental turn.
pub async fn answer<P: Platform>(
    config: &RentalConfig,
    platform: &P,
    turn: &mut Turn<'_>,
) -> Result<Answer, Error> {
    let question = turn
        .history
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let role = role_of(platform, turn).await;
    let mut run = Run {
        platform,
        config,
        turn,
        role,
        question,
        route: Vec::new(),
    };
    run.go().await
}

/// The role from code: the signed token's claim, else the merchant's upload, else GUEST.
async fn role_of<P: Platform>(platform: &P, turn: &Turn<'_>) -> Role {
    let Some(identity) = turn.identity() else {
        return Role::Guest;
    };
    if let Some(role) = identity.role.as_deref().and_then(Role::parse) {
        return role;
    }
    let Some(data) = platform.rental() else {
        return Role::Guest;
    };
    match data.role(&turn.conversation.site_id, &identity.sub).await {
        Ok(Some(role)) => Role::parse(&role).unwrap_or(Role::Guest),
        _ => Role::Guest,
    }
}

impl<P: Platform> Run<'_, '_, '_, P> {
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
        let tables = self
            .platform
            .sql()
            .schema(self.scope())
            .await
            .unwrap_or_default();
        let schema_text = schema_text(&tables);
        self.route.push("orchestrator");
        let orchestration = self.orchestrate(&schema_text, &business).await;
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
                self.data_path(&orchestration, &tables, &schema_text, &business, vector)
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

    /// Agent 1. `None`: the model failed or answered no JSON (seed: GENERAL_CHAT).
    async fn orchestrate(&self, schema: &str, business: &str) -> Option<Orchestration> {
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
            Ok(text) => parse_orchestration(&text),
            Err(error) => {
                self.warn("rental_orchestrator_failed", &error.to_string());
                None
            }
        }
    }

    /// Agents 2–4 and the persistence of a valid Q&A.
    async fn data_path(
        &mut self,
        orchestration: &Orchestration,
        tables: &[TableSchema],
        schema: &str,
        business: &str,
        vector: Option<Vec<f32>>,
    ) -> Result<Answer, Error> {
        self.route.push("sql_generation");
        let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        let outcome = self
            .sql(&names, schema, business, vector.as_deref())
            .await?;
        let Some(outcome) = outcome else {
            self.route.push("content_response");
            let text = self
                .config
                .sentence(self.turn.language, "sql_failed")
                .to_string();
            let mut meta = Metadata::new();
            meta.insert("sql_attempts".into(), SQL_ATTEMPTS.into());
            return self
                .reply("CONTENT", RequestType::Query, &text, None, meta)
                .await;
        };
        self.route.push("response_generator");
        let table = super::sql::first_table(&outcome.sql);
        let entity = orchestration
            .entity_hint
            .as_deref()
            .and_then(|e| self.config.schema.entity(e))
            .or_else(|| {
                table
                    .as_deref()
                    .and_then(|t| self.config.schema.entity_of_table(t))
            });
        let desired = orchestration.mode_hint;
        let text = self.respond(orchestration, &outcome, desired).await?;
        let parsed = parse(&text);
        let mode = wanted_mode(parsed.sections.as_ref(), desired, &outcome.rows);
        let (mode, payload) = build(&outcome.rows, mode, entity, parsed.sections.as_ref());
        let message = if parsed.message.is_empty() {
            orchestration.message.clone()
        } else {
            parsed.message
        };
        self.route.push("result_validator");
        let valid = if outcome.canonical == Some("hard") {
            true
        } else {
            self.validate_result(&outcome).await
        };
        if valid {
            self.persist(&outcome, mode, vector).await;
        }
        let mut meta = Metadata::new();
        meta.insert("sql_attempts".into(), outcome.attempts.into());
        meta.insert("mode".into(), mode.as_str().into());
        meta.insert(
            "canonical".into(),
            outcome.canonical.map_or(Value::Null, Value::from),
        );
        meta.insert("valid".into(), valid.into());
        meta.insert("sql_ms".into(), outcome.sql_ms.into());
        self.turn.payload(payload);
        self.store("DATA", RequestType::Query, message, meta).await
    }

    /// Agent 2: canonical reuse, else up to five attempts with the error fed back.
    async fn sql(
        &self,
        tables: &[&str],
        schema: &str,
        business: &str,
        vector: Option<&[f32]>,
    ) -> Result<Option<SqlOutcome>, Error> {
        let site = self.turn.conversation.site_id.clone();
        let mut hint = String::new();
        if let (Some(vector), Some(data)) = (vector, self.platform.rental()) {
            let query = VectorQuery {
                vector: vector.to_vec(),
                top_k: 1,
                filter: MetadataFilter::new()
                    .eq("site_id", site.as_str())
                    .eq("source", QA_SOURCE),
            };
            let best = self
                .platform
                .index()
                .query(&query)
                .await
                .ok()
                .and_then(|m| m.into_iter().next());
            let qa_id = best
                .as_ref()
                .and_then(|m| m.metadata.get("qa_id"))
                .and_then(Value::as_str);
            if let (Some(best), Some(qa_id)) = (&best, qa_id)
                && best.score >= CANONICAL_SOFT
                && let Ok(Some(record)) = data.qa(&site, qa_id).await
            {
                if best.score >= CANONICAL_HARD
                    && let Ok(rows) = self.run_sql(&record.sql, tables).await
                {
                    let _ = data.qa_hit(&site, &record.id).await;
                    return Ok(Some(SqlOutcome {
                        sql: record.sql.clone(),
                        rows: rows.1,
                        attempts: 0,
                        canonical: Some("hard"),
                        reused: Some(record.id),
                        sql_ms: rows.2,
                    }));
                }
                hint = format!(
                    "\nCâu hỏi tương tự đã được xác nhận: {}\nSQL: {}\n",
                    record.question, record.sql
                );
            }
        }
        let canonical = (!hint.is_empty()).then_some("soft");
        let functions = FUNCTIONS.join(", ");
        let mut error = String::new();
        for attempt in 1..=SQL_ATTEMPTS {
            let system = fill(
                SQL_PROMPT,
                &[
                    ("role", self.role.as_str()),
                    ("schema", schema),
                    ("functions", &functions),
                    ("business", business),
                    ("hint", &hint),
                    ("error", &error),
                ],
            );
            let text = complete(self.platform.model(), &self.request(system, true)).await?;
            let written = extract_sql(&text);
            match self.run_sql(&written, tables).await {
                Ok((sql, rows, sql_ms)) => {
                    return Ok(Some(SqlOutcome {
                        sql,
                        rows,
                        attempts: attempt,
                        canonical,
                        reused: None,
                        sql_ms,
                    }));
                }
                Err(why) => {
                    self.warn(
                        "rental_sql_attempt_failed",
                        &format!("attempt {attempt}: {why}"),
                    );
                    error = format!(
                        "\nLần thử trước bị lỗi (attempt {attempt}):\nSQL: {written}\nLỗi: {why}\nHãy sửa lại.\n"
                    );
                }
            }
        }
        Ok(None)
    }

    /// Validates and runs one statement; returns the statement that ran, its rows and how
    /// long it took (ms).
    async fn run_sql(
        &self,
        written: &str,
        tables: &[&str],
    ) -> Result<(String, SqlRows, u64), String> {
        let valid = validate(written, tables).map_err(|r| r.0)?;
        let query = ReadOnlyQuery::new(valid.sql());
        let started = self.platform.clock().now_ms();
        let rows = self
            .platform
            .sql()
            .query(self.scope(), &query, self.config.row_cap)
            .await
            .map_err(|e| e.to_string())?;
        let took = self.platform.clock().now_ms().saturating_sub(started);
        Ok((valid.sql().to_string(), rows, took))
    }

    /// Agent 3, streamed through the `---END` gate and the label gate.
    async fn respond(
        &mut self,
        orchestration: &Orchestration,
        outcome: &SqlOutcome,
        desired: Option<Mode>,
    ) -> Result<String, Error> {
        let label = self.role.label();
        let count = outcome.rows.rows.len().to_string();
        let rows = rows_json(&outcome.rows, 20);
        let system = fill(
            RESPONSE_PROMPT,
            &[
                ("role", self.role.as_str()),
                ("label", label),
                ("draft", &orchestration.message),
                ("count", &count),
                ("mode", desired.map_or("LIST", Mode::as_str)),
                ("rows", &rows),
                ("language", self.language_line()),
            ],
        );
        let request = self.request(system, false);
        let mut text = String::new();
        let mut failure: Option<String> = None;
        let mut end = EndGate::default();
        let mut labels = LabelGate::new(self.config.label(self.role));
        let sink = &mut *self.turn.sink;
        let mut on_event = |event: ChatEvent| match event {
            ChatEvent::TextDelta(delta) if failure.is_none() => {
                text.push_str(&delta);
                let shown = labels.push(&end.push(&delta));
                if !shown.is_empty() {
                    sink.emit(TurnEvent::Chunk { text: shown });
                }
            }
            ChatEvent::Error(error) if failure.is_none() => failure = Some(error.message),
            _ => {}
        };
        let streamed = self.platform.model().stream(&request, &mut on_event).await;
        streamed.map_err(Error::ChatModel)?;
        if let Some(message) = failure {
            let error = ChatModelError::new(ChatModelErrorKind::Upstream, message);
            return Err(Error::ChatModel(error));
        }
        let mut rest = end.finish();
        if parse(&text).message.is_empty() {
            // Nothing usable: the orchestrator's draft is the message (fallback).
            rest.push_str(&orchestration.message);
        }
        let shown = labels.push(&rest) + &labels.finish();
        if !shown.is_empty() {
            self.turn.sink.emit(TurnEvent::Chunk { text: shown });
        }
        Ok(text)
    }

    /// Agent 4 (seed: an error or unreadable answer counts as valid).
    async fn validate_result(&self, outcome: &SqlOutcome) -> bool {
        let rows = rows_json(&outcome.rows, 5);
        let system = fill(
            VALIDATOR_PROMPT,
            &[
                ("question", &self.question),
                ("request_type", "QUERY"),
                ("sql", &outcome.sql),
                ("rows", &rows),
            ],
        );
        match complete(self.platform.model(), &self.request(system, false)).await {
            Ok(text) => {
                let (valid, reason) = parse_validation(&text);
                if !valid {
                    self.warn(
                        "rental_result_invalid",
                        reason.as_deref().unwrap_or_default(),
                    );
                }
                valid
            }
            Err(error) => {
                self.warn("rental_validator_failed", &error.to_string());
                true
            }
        }
    }

    /// Stores a valid Q&A and its question's vector (a canonical hit is already stored).
    async fn persist(&self, outcome: &SqlOutcome, mode: Mode, vector: Option<Vec<f32>>) {
        let (Some(data), Some(vector), None) = (self.platform.rental(), vector, &outcome.reused)
        else {
            return;
        };
        let site = self.turn.conversation.site_id.as_str();
        let record = QaRecord {
            id: self.platform.ids().new_id(),
            question: self.question.clone(),
            sql: outcome.sql.clone(),
            request_type: "QUERY".into(),
            mode: Some(mode.as_str().into()),
            created_at: self.platform.clock().now_ms(),
            hits: 0,
        };
        if let Err(error) = data.save_qa(site, &record).await {
            self.warn("rental_qa_save_failed", &error.to_string());
            return;
        }
        let mut metadata = Metadata::new();
        metadata.insert("site_id".into(), site.into());
        metadata.insert("source".into(), QA_SOURCE.into());
        metadata.insert("qa_id".into(), record.id.clone().into());
        let vector = VectorRecord {
            id: qa_vector_id(&record.id),
            values: vector,
            metadata,
        };
        if let Err(error) = self.platform.index().upsert(&[vector]).await {
            self.warn("rental_qa_index_failed", &error.to_string());
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
