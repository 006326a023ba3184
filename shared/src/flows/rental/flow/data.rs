//! Agents 2–4 (SQL generation, response generator, result validator) and the
//! persistence of a valid Q&A.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

use super::{QA_SOURCE, Run, SqlOutcome, qa_vector_id};
use crate::boundary::{
    MetadataFilter, ModelCall, ReadOnlyQuery, SqlReader, SqlRows, VectorIndex, VectorQuery,
    VectorRecord,
};
use crate::conversation::Metadata;
use crate::engine::{Answer, Platform, fail_answer, stream_text};
use crate::error::Error;
use crate::error::{ServiceError, ServiceErrorKind};
use crate::flows::rental::QaRecord;
use crate::flows::rental::agents::{
    Orchestration, RequestType, complete, extract_sql, parse_validation, rows_json,
};
use crate::flows::rental::build::{Mode, build, wanted_mode};
use crate::flows::rental::config::{
    CANONICAL_HARD, CANONICAL_SOFT, RESPONSE_PROMPT, SQL_ATTEMPTS, SQL_PROMPT, VALIDATOR_PROMPT,
};
use crate::flows::rental::format::{ResponseGates, parse};
use crate::flows::rental::sql::FUNCTIONS;
use crate::prompt::fill;

/// A model-written statement that ran: as the validator re-serialised it, its first
/// table, its rows and how long it took (ms; validation included).
struct Ran {
    sql: String,
    first_table: Option<String>,
    rows: SqlRows,
    sql_ms: u64,
}

/// Learned questions read for one canonical lookup: the same words may have been learned
/// once per role.
const REUSE_CANDIDATES: usize = 3;

impl<P: Platform, Q: SqlReader> Run<'_, '_, '_, P, Q> {
    /// Agents 2–4 and the persistence of a valid Q&A.
    pub(super) async fn data_path(
        &mut self,
        orchestration: &Orchestration,
        schema: &str,
        business: &str,
        vector: Option<Vec<f32>>,
    ) -> Result<Answer, Error> {
        self.route.push("sql_generation");
        let outcome = self.sql(schema, business, vector.as_deref()).await?;
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
        let table = outcome.first_table.clone();
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
        let sections = parsed.sections.as_ref();
        let (mode, payload) = build(&outcome.rows, mode, entity, sections, self.turn.language);
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
        let learned = valid && self.persist(&outcome, mode, vector).await;
        let mut meta = Metadata::new();
        meta.insert("sql_attempts".into(), outcome.attempts.into());
        meta.insert("mode".into(), mode.as_str().into());
        meta.insert(
            "canonical".into(),
            outcome.canonical.map_or(Value::Null, Value::from),
        );
        meta.insert("valid".into(), valid.into());
        meta.insert("learned".into(), learned.into());
        meta.insert("sql_ms".into(), outcome.sql_ms.into());
        self.turn.payload(payload);
        self.store("DATA", RequestType::Query, message, meta).await
    }

    /// Agent 2: canonical reuse, else up to five attempts with the error fed back.
    async fn sql(
        &self,
        schema: &str,
        business: &str,
        vector: Option<&[f32]>,
    ) -> Result<Option<SqlOutcome>, Error> {
        let site = self.turn.conversation.site_id.clone();
        let mut hint = String::new();
        if let Some((score, record)) = self.learned_match(vector).await {
            if score >= CANONICAL_HARD
                && let Ok(ran) = self.run_sql(&record.sql).await?
            {
                if let Some(data) = self.data {
                    let _ = data.qa_hit(&site, &record.id).await;
                }
                return Ok(Some(SqlOutcome {
                    sql: record.sql.clone(),
                    first_table: ran.first_table,
                    rows: ran.rows,
                    attempts: 0,
                    canonical: Some("hard"),
                    reused: Some(record.id),
                    sql_ms: ran.sql_ms,
                }));
            }
            hint = format!(
                "\nCâu hỏi tương tự đã được xác nhận: {}\nSQL: {}\n",
                record.question, record.sql
            );
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
            // A question that starts its session is read alone: the prompt holds nothing
            // of any conversation, so what it yields may be learned for everyone.
            let request = self.request(system, self.contextual);
            let text = complete(self.platform.model(), &request).await?;
            let written = extract_sql(&text);
            match self.run_sql(&written).await? {
                Ok(ran) => {
                    return Ok(Some(SqlOutcome {
                        sql: ran.sql,
                        first_table: ran.first_table,
                        rows: ran.rows,
                        attempts: attempt,
                        canonical,
                        reused: None,
                        sql_ms: ran.sql_ms,
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

    /// Runs one model-written statement through the SQL reader, which validates it
    /// against the site's tables right before it runs (`boundary::sql`). The inner error
    /// is a sentence for the model's next attempt: the validator's refusal or the
    /// database's error. The outer error fails the turn: the reader (or the validator
    /// behind it) could not be reached, or it did not say what it ran — no statement runs
    /// unvalidated, and none is learned from the model's raw text.
    async fn run_sql(&self, written: &str) -> Result<Result<Ran, String>, Error> {
        let query = ReadOnlyQuery::written(written);
        let started = self.platform.clock().now_ms();
        let result = self
            .sql
            .query(self.scope(), &query, self.config.row_cap)
            .await;
        let mut rows = match result {
            Ok(rows) => rows,
            Err(error) if error.kind == ServiceErrorKind::Invalid => {
                return Ok(Err(error.detail));
            }
            Err(error) => return Err(Error::Records(error)),
        };
        let took = self.platform.clock().now_ms().saturating_sub(started);
        let Some(sql) = rows.statement.take() else {
            return Err(Error::Records(ServiceError::new(
                ServiceErrorKind::Other,
                "the SQL reader did not return the validated statement it ran",
            )));
        };
        let first_table = rows.first_table.take();
        Ok(Ok(Ran {
            sql,
            first_table,
            rows,
            sql_ms: took,
        }))
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
        let shown_label = self.config.label(self.role);
        let mut gates = ResponseGates::new(shown_label, &orchestration.message);
        let call = ModelCall::new(&request);
        let sink = &mut *self.turn.sink;
        let mut streamed = stream_text(self.platform, sink, &call, &mut gates).await;
        if let Some(error) = streamed.failure.take() {
            let (shown, finish, none) = (streamed.shown, streamed.finish, Metadata::new());
            let kept = fail_answer(
                self.platform,
                self.turn,
                shown,
                none,
                Vec::new(),
                finish,
                error,
            );
            return Err(kept.await);
        }
        Ok(gates.into_raw())
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

    /// Reusable Q&A of the site for this visitor's role: the best match at or above the
    /// soft threshold among the nearest learned questions (one per role can share the
    /// same words), read back from the store (a purged one is gone) and context-free.
    async fn learned_match(&self, vector: Option<&[f32]>) -> Option<(f32, QaRecord)> {
        let (vector, data) = (vector?, self.data?);
        let site = self.turn.conversation.site_id.as_str();
        let query = VectorQuery {
            vector: vector.to_vec(),
            top_k: REUSE_CANDIDATES,
            filter: MetadataFilter::new()
                .eq("site_id", site)
                .eq("source", QA_SOURCE),
        };
        let matches = self.platform.index().query(&query).await.ok()?;
        for candidate in matches {
            if candidate.score < CANONICAL_SOFT {
                break;
            }
            let Some(qa_id) = candidate.metadata.get("qa_id").and_then(Value::as_str) else {
                continue;
            };
            if let Ok(Some(record)) = data.qa(site, qa_id).await
                && record.reusable_by(self.role.as_str())
            {
                return Some((candidate.score, record));
            }
        }
        None
    }

    /// Stores a valid Q&A and its question's vector, when the SQL came from the question
    /// alone (not a reuse, not read in a conversation); whether it was stored.
    async fn persist(&self, outcome: &SqlOutcome, mode: Mode, vector: Option<Vec<f32>>) -> bool {
        if self.contextual || outcome.reused.is_some() {
            return false;
        }
        let (Some(data), Some(vector)) = (self.data, vector) else {
            return false;
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
            role: Some(self.role.as_str().into()),
            context_free: true,
        };
        if let Err(error) = data.save_qa(site, &record).await {
            self.warn("rental_qa_save_failed", &error.to_string());
            return false;
        }
        let mut metadata = Metadata::new();
        metadata.insert("site_id".into(), site.into());
        metadata.insert("source".into(), QA_SOURCE.into());
        metadata.insert("qa_id".into(), record.id.clone().into());
        metadata.insert("role".into(), self.role.as_str().into());
        let vector = VectorRecord {
            id: qa_vector_id(&record.id),
            values: vector,
            metadata,
        };
        if let Err(error) = self.platform.index().upsert(&[vector]).await {
            self.warn("rental_qa_index_failed", &error.to_string());
            return false;
        }
        true
    }
}
