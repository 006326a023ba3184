//! The store's reads for the console's review tools: the conversation filter (search,
//! votes, no answer, dates) shared by the list and the export, the export's rows, and the
//! dashboard's figures. Every statement is scoped to one site and takes its values as
//! bound parameters only.

use concierge_core::error::ServiceError;
use concierge_core::template::Template;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::d1_store::{D1Store, service_error};

/// Which conversations a list or an export takes (all optional; the site always).
#[derive(Debug, Default, Clone)]
pub(crate) struct ConversationFilter {
    /// Text any message of the conversation contains (a `LIKE` pattern is built from it,
    /// its wildcards escaped).
    pub search: Option<String>,
    /// Conversations with at least one vote of this rating (`-1` down, `1` up).
    pub rating: Option<i32>,
    /// Only conversations with a visitor message left without a complete answer.
    pub unanswered: bool,
    /// Active at or after this time (Unix milliseconds).
    pub from_ms: Option<f64>,
    /// Started before this time (Unix milliseconds).
    pub to_ms: Option<f64>,
    /// Answered by this template ([`TemplateFilter`]).
    pub template: Option<TemplateFilter>,
}

/// The template a conversation was answered by, as the filter takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TemplateFilter {
    /// This template (recorded when the conversation was created).
    Is(Template),
    /// None recorded: the conversation was created before templates were recorded.
    Unknown,
}

/// The filter's conditions over `conversations c`; parameters `?1` (site) to `?7`.
/// Conversations with no visitor message (a panel opened, nothing asked) are never taken.
/// A conversation's messages are found by its id (`+x.site_id`, `+x.role`: no index on
/// those, so SQLite reads each conversation's own rows; by the `(site_id, role,
/// created_at)` index it scanned every visitor message of the site for each conversation,
/// 1.7 s for a page of 100 of 600 conversations).
pub(crate) const FILTER_SQL: &str = "c.site_id = ?1 \
     AND EXISTS (SELECT 1 FROM messages u WHERE u.conversation_id = c.id AND +u.site_id = ?1 AND +u.role = 'user') \
     AND (?2 IS NULL OR EXISTS (SELECT 1 FROM messages s WHERE s.conversation_id = c.id AND +s.site_id = ?1 \
          AND s.content LIKE ?2 ESCAPE '\\')) \
     AND (?3 IS NULL OR EXISTS (SELECT 1 FROM message_feedback f WHERE f.conversation_id = c.id \
          AND f.site_id = ?1 AND f.rating = ?3)) \
     AND (?4 IS NULL OR (SELECT l.role FROM messages l WHERE l.conversation_id = c.id AND +l.site_id = ?1 \
          ORDER BY l.seq DESC LIMIT 1) = 'user' \
          OR EXISTS (SELECT 1 FROM messages i WHERE i.conversation_id = c.id AND +i.site_id = ?1 \
          AND json_extract(i.metadata, '$.incomplete') = 1)) \
     AND (?5 IS NULL OR c.updated_at >= ?5) \
     AND (?6 IS NULL OR c.created_at < ?6) \
     AND (?7 IS NULL OR (?7 = '' AND c.template IS NULL) OR c.template = ?7)";

impl ConversationFilter {
    /// The bound values for `?1`..`?7` (`?7`: the template's name, `''` for none recorded).
    pub(crate) fn params(&self, site_id: &str) -> Vec<JsValue> {
        let optional = |v: Option<f64>| v.map_or(JsValue::NULL, JsValue::from_f64);
        vec![
            site_id.into(),
            self.search
                .as_deref()
                .map_or(JsValue::NULL, |s| like_pattern(s).into()),
            optional(self.rating.map(f64::from)),
            if self.unanswered {
                JsValue::from_f64(1.0)
            } else {
                JsValue::NULL
            },
            optional(self.from_ms),
            optional(self.to_ms),
            match self.template {
                None => JsValue::NULL,
                Some(TemplateFilter::Unknown) => "".into(),
                Some(TemplateFilter::Is(template)) => template.as_str().into(),
            },
        ]
    }
}

/// `%text%` with `%`, `_` and `\` escaped (`ESCAPE '\'`): the text matches literally.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// One message of an exported conversation.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ExportRow {
    pub conversation_id: String,
    pub user_id: Option<String>,
    pub seq: f64,
    pub role: String,
    pub kind: String,
    pub content: String,
    pub created_at: f64,
    pub down_votes: f64,
    pub up_votes: f64,
    /// The votes' comments, joined with " | ".
    pub comments: Option<String>,
    /// On a person's reply (kind `human`): the person's name.
    #[serde(default)]
    pub author: Option<String>,
    /// When the message's conversation was created: the export's cursor, not exported.
    #[serde(default, skip_serializing)]
    pub conversation_created_at: f64,
}

/// Visitor activity on one day (in the caller's time zone).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DayRow {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Conversations with a visitor message that day.
    pub conversations: f64,
    /// Visitor messages that day.
    pub messages: f64,
}

/// Visitor messages of the period by outcome, votes, and requests for a person: those
/// that started a wait (a `requested` line in the log), the waits a person took
/// (`joined`), those nobody took (`timeout`), and the median time from a request to its
/// take-over (ms, over the latest [`MAX_TAKE_TIMES`] taken waits; `None` when none was
/// taken; the middle one, or the mean of the middle two).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Outcomes {
    pub answered: f64,
    pub unanswered: f64,
    pub down_votes: f64,
    pub up_votes: f64,
    pub handoff_requested: f64,
    pub handoff_taken: f64,
    pub handoff_timed_out: f64,
    pub median_take_ms: Option<f64>,
}

/// A question visitors asked, and how often (same text, letter case and spaces aside).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct TopQuestion {
    pub question: String,
    pub count: f64,
}

/// The most taken waits whose duration the dashboard's median reads.
pub(crate) const MAX_TAKE_TIMES: u32 = 500;

impl D1Store {
    /// A page of the export: the messages of the next `conversations` conversations
    /// `filter` takes, newest first (by creation, a stable order: a conversation active
    /// while the export runs is neither missed nor repeated), after `after` (the last
    /// page's last conversation: its creation time and id), oldest message first within
    /// each. Every conversation taken has a visitor message, so each has rows.
    pub(crate) async fn export_page(
        &self,
        site_id: &str,
        filter: &ConversationFilter,
        after: Option<&(f64, String)>,
        conversations: u32,
    ) -> Result<Vec<ExportRow>, ServiceError> {
        let sql = format!(
            "WITH picked AS (SELECT c.id, c.user_id, c.created_at FROM conversations c WHERE {FILTER_SQL} \
             AND (?9 IS NULL OR c.created_at < ?9 OR (c.created_at = ?9 AND c.id > ?10)) \
             ORDER BY c.created_at DESC, c.id LIMIT ?8) \
             SELECT m.conversation_id, p.user_id, m.seq, m.role, m.kind, m.content, m.created_at, \
             p.created_at AS conversation_created_at, \
             (SELECT COUNT(*) FROM message_feedback f WHERE f.message_id = m.id AND f.site_id = ?1 AND f.rating < 0) AS down_votes, \
             (SELECT COUNT(*) FROM message_feedback f WHERE f.message_id = m.id AND f.site_id = ?1 AND f.rating > 0) AS up_votes, \
             (SELECT group_concat(f.comment, ' | ') FROM message_feedback f WHERE f.message_id = m.id \
                AND f.site_id = ?1 AND f.comment IS NOT NULL AND f.comment <> '') AS comments, \
             json_extract(m.metadata, '$.author.name') AS author \
             FROM messages m JOIN picked p ON p.id = m.conversation_id \
             WHERE +m.site_id = ?1 AND +m.role IN ('user', 'assistant') \
             ORDER BY p.created_at DESC, m.conversation_id, m.seq"
        );
        let mut params = filter.params(site_id);
        params.push(JsValue::from_f64(f64::from(conversations)));
        match after {
            Some((at, id)) => {
                params.push(JsValue::from_f64(*at));
                params.push(id.as_str().into());
            }
            None => params.extend([JsValue::NULL, JsValue::NULL]),
        }
        let statement = self
            .site_reader(site_id)?
            .db()
            .prepare(sql)
            .bind(&params)
            .map_err(service_error)?;
        statement
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)
    }

    /// Visitor activity per day since `since_ms`, days counted `offset_minutes` east of UTC.
    pub(crate) async fn activity_by_day(
        &self,
        site_id: &str,
        since_ms: f64,
        offset_minutes: i32,
    ) -> Result<Vec<DayRow>, ServiceError> {
        self.site_reader(site_id)?
            .db()
            .prepare(
                "SELECT date(m.created_at / 1000 + ?3 * 60, 'unixepoch') AS day, \
                 COUNT(DISTINCT m.conversation_id) AS conversations, COUNT(*) AS messages \
                 FROM messages m WHERE m.site_id = ?1 AND m.role = 'user' AND m.created_at >= ?2 \
                 GROUP BY day ORDER BY day",
            )
            .bind(&[
                site_id.into(),
                JsValue::from_f64(since_ms),
                JsValue::from_f64(f64::from(offset_minutes)),
            ])
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)
    }

    /// Since `since_ms`: visitor messages whose next message is a complete answer, those
    /// without one, votes down and up, and the handoff figures (from the handoff lines
    /// the log keeps: kind `handoff`, metadata `handoff`).
    pub(crate) async fn outcomes(
        &self,
        site_id: &str,
        since_ms: f64,
    ) -> Result<Outcomes, ServiceError> {
        let row = self.site_reader(site_id)?
            .db()
            .prepare(
                "WITH asked AS (SELECT m.id, (SELECT n.role || CASE WHEN json_extract(n.metadata, '$.incomplete') = 1 \
                    THEN '!' ELSE '' END FROM messages n WHERE n.conversation_id = m.conversation_id \
                    AND n.site_id = ?1 AND n.seq > m.seq ORDER BY n.seq LIMIT 1) AS next \
                  FROM messages m WHERE m.site_id = ?1 AND m.role = 'user' AND m.created_at >= ?2), \
                 h AS (SELECT json_extract(metadata, '$.handoff') AS step FROM messages \
                  WHERE site_id = ?1 AND kind = 'handoff' AND created_at >= ?2), \
                 t AS (SELECT j.created_at - (SELECT MAX(r.created_at) FROM messages r \
                  WHERE r.site_id = ?1 AND r.conversation_id = j.conversation_id \
                  AND r.kind = 'handoff' AND r.seq < j.seq \
                  AND json_extract(r.metadata, '$.handoff') = 'requested') AS ms \
                  FROM messages j WHERE j.site_id = ?1 AND j.kind = 'handoff' \
                  AND j.created_at >= ?2 AND json_extract(j.metadata, '$.handoff') = 'joined' \
                  ORDER BY j.created_at DESC LIMIT ?3), \
                 k AS (SELECT ms FROM t WHERE ms >= 0), n AS (SELECT COUNT(*) AS n FROM k) \
                 SELECT (SELECT COUNT(*) FROM asked WHERE next = 'assistant') AS answered, \
                 (SELECT COUNT(*) FROM asked WHERE next IS NULL OR next <> 'assistant') AS unanswered, \
                 (SELECT COUNT(*) FROM message_feedback f WHERE f.site_id = ?1 AND f.rating < 0 AND f.updated_at >= ?2) AS down_votes, \
                 (SELECT COUNT(*) FROM message_feedback f WHERE f.site_id = ?1 AND f.rating > 0 AND f.updated_at >= ?2) AS up_votes, \
                 (SELECT COUNT(*) FROM h WHERE step = 'requested') AS handoff_requested, \
                 (SELECT COUNT(*) FROM h WHERE step = 'joined') AS handoff_taken, \
                 (SELECT COUNT(*) FROM h WHERE step = 'timeout') AS handoff_timed_out, \
                 (SELECT AVG(ms) FROM (SELECT ms FROM k ORDER BY ms \
                   LIMIT 2 - (SELECT n FROM n) % 2 OFFSET ((SELECT n FROM n) - 1) / 2)) AS median_take_ms",
            )
            .bind(&[
                site_id.into(),
                JsValue::from_f64(since_ms),
                JsValue::from_f64(f64::from(MAX_TAKE_TIMES)),
            ])
            .map_err(service_error)?
            .first::<Outcomes>(None)
            .await
            .map_err(service_error)?;
        Ok(row.unwrap_or_default())
    }

    /// The `limit` questions asked most often since `since_ms`; a request for a person
    /// answered with a handoff notice (the panel's "Gặp nhân viên") is not a question.
    pub(crate) async fn top_questions(
        &self,
        site_id: &str,
        since_ms: f64,
        limit: u32,
    ) -> Result<Vec<TopQuestion>, ServiceError> {
        self.site_reader(site_id)?.db()
            .prepare(
                "SELECT substr(min(trim(m.content)), 1, 200) AS question, COUNT(*) AS count \
                 FROM messages m WHERE m.site_id = ?1 AND m.role = 'user' AND m.created_at >= ?2 \
                 AND NOT EXISTS (SELECT 1 FROM messages n WHERE n.site_id = ?1 \
                   AND n.conversation_id = m.conversation_id AND n.kind = 'handoff' \
                   AND n.seq = (SELECT MIN(x.seq) FROM messages x WHERE x.site_id = ?1 \
                     AND x.conversation_id = m.conversation_id AND x.seq > m.seq)) \
                 GROUP BY lower(trim(m.content)) ORDER BY count DESC, max(m.created_at) DESC LIMIT ?3",
            )
            .bind(&[
                site_id.into(),
                JsValue::from_f64(since_ms),
                JsValue::from_f64(f64::from(limit)),
            ])
            .map_err(service_error)?
            .all()
            .await
            .map_err(service_error)?
            .results()
            .map_err(service_error)
    }
}
