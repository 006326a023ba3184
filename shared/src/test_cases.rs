//! A site's test cases (issue 42, item 2): questions a merchant writes, each with the
//! checks its answer must pass, kept per site (at most [`MAX_CASES`]) to run against the
//! draft or the live configuration before publishing. This module holds their shape and
//! their bounds ([`TestCase::checked`]); the Worker stores them (`/admin/tests`).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// Test cases a site keeps at most.
pub const MAX_CASES: usize = 100;
/// The longest question or conversation message, in characters.
pub const MAX_TEXT_CHARS: usize = 4000;
/// Messages a case's conversation before its question has at most.
pub const MAX_TURNS: usize = 20;
/// Texts one text check lists at most.
pub const MAX_TEXTS: usize = 20;
/// The longest text a check looks for, in characters.
pub const MAX_CHECK_CHARS: usize = 500;
/// The longest rubric, in characters.
pub const MAX_RUBRIC_CHARS: usize = 2000;
/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The highest latency ceiling, in milliseconds.
pub const MAX_LATENCY_MS: u64 = 300_000;
/// The highest token ceiling.
pub const MAX_TOKENS: u64 = 1_000_000;

/// A test case: a question (optionally after a short conversation, and as a user of the
/// site) and the checks its answer must pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    /// A short name for the console (default: the question).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The question the case asks.
    pub question: String,
    /// The conversation before the question, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversation: Vec<Turn>,
    /// The user of the site the case runs as (anonymous when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<CaseUser>,
    /// What the answer must do.
    pub checks: Checks,
}

/// One message of a case's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// The user a case runs as (the fields of a user token's claims).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseUser {
    pub user_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub department: Option<String>,
}

/// The checks of a case; every one given must pass (at least one is given).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checks {
    /// The answer contains every one of these texts (ignoring case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// The answer contains at least one of these texts (ignoring case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains_any: Vec<String>,
    /// The answer contains none of these texts (ignoring case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_contains: Vec<String>,
    /// Tools the turn used, every one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_used: Vec<String>,
    /// Tools the turn did not use, any of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_not_used: Vec<String>,
    /// Whether the answer cites sources (`true`) or cites none (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources_cited: Option<bool>,
    /// The answer's language: `vi` or `en`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// A payload of this kind comes with the answer: `list`, `table` or `chart`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
    /// The answer completes within this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ms: Option<u64>,
    /// The turn uses at most this many tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// A rubric the model judges the answer by (its verdict is shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric: Option<String>,
}

/// A case outside its bounds: the message names the field and the bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError(pub String);

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// `text` trimmed, 1 to `max` characters, else an error naming `field`.
fn text(field: &str, text: &str, max: usize) -> Result<String, CaseError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || chars(trimmed) > max {
        return Err(CaseError(format!(
            "`{field}` must be 1 to {max} characters."
        )));
    }
    Ok(String::from(trimmed))
}

fn texts(field: &str, list: &[String], max: usize) -> Result<Vec<String>, CaseError> {
    if list.len() > MAX_TEXTS {
        return Err(CaseError(format!(
            "`{field}` lists at most {MAX_TEXTS} texts."
        )));
    }
    list.iter().map(|t| text(field, t, max)).collect()
}

fn ceiling(field: &str, value: Option<u64>, max: u64) -> Result<Option<u64>, CaseError> {
    match value {
        Some(n) if n == 0 || n > max => Err(CaseError(format!("`{field}` must be 1 to {max}."))),
        other => Ok(other),
    }
}

impl TestCase {
    /// This case within its bounds (texts trimmed), or why not.
    pub fn checked(self) -> Result<Self, CaseError> {
        let name = self
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| text("name", n, MAX_NAME_CHARS))
            .transpose()?;
        let question = text("question", &self.question, MAX_TEXT_CHARS)?;
        if self.conversation.len() > MAX_TURNS {
            return Err(CaseError(format!(
                "`conversation` has at most {MAX_TURNS} messages."
            )));
        }
        let conversation = self
            .conversation
            .into_iter()
            .map(|turn| {
                if !matches!(turn.role.as_str(), "user" | "assistant") {
                    return Err(CaseError(String::from(
                        "`conversation[].role` must be \"user\" or \"assistant\".",
                    )));
                }
                Ok(Turn {
                    content: text("conversation[].content", &turn.content, MAX_TEXT_CHARS)?,
                    role: turn.role,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let user = self
            .user
            .map(|user| {
                crate::identity::UserIdentity::new(
                    user.user_id.clone(),
                    user.role.clone(),
                    user.permissions.clone(),
                    user.department.clone(),
                )
                .map(|_| user)
                .map_err(|err| CaseError(format!("`user`: {}", err.message())))
            })
            .transpose()?;
        let c = self.checks;
        let checks = Checks {
            contains: texts("checks.contains", &c.contains, MAX_CHECK_CHARS)?,
            contains_any: texts("checks.contains_any", &c.contains_any, MAX_CHECK_CHARS)?,
            not_contains: texts("checks.not_contains", &c.not_contains, MAX_CHECK_CHARS)?,
            tools_used: texts("checks.tools_used", &c.tools_used, 100)?,
            tools_not_used: texts("checks.tools_not_used", &c.tools_not_used, 100)?,
            sources_cited: c.sources_cited,
            language: match c.language.as_deref() {
                None | Some("vi" | "en") => c.language,
                Some(_) => {
                    return Err(CaseError(String::from(
                        "`checks.language` must be \"vi\" or \"en\".",
                    )));
                }
            },
            payload: match c.payload.as_deref() {
                None | Some("list" | "table" | "chart") => c.payload,
                Some(_) => {
                    return Err(CaseError(String::from(
                        "`checks.payload` must be \"list\", \"table\" or \"chart\".",
                    )));
                }
            },
            max_latency_ms: ceiling("checks.max_latency_ms", c.max_latency_ms, MAX_LATENCY_MS)?,
            max_tokens: ceiling("checks.max_tokens", c.max_tokens, MAX_TOKENS)?,
            rubric: c
                .rubric
                .map(|r| text("checks.rubric", &r, MAX_RUBRIC_CHARS))
                .transpose()?,
        };
        if checks == Checks::default() {
            return Err(CaseError(String::from(
                "`checks` needs at least one check (contains, contains_any, not_contains, \
                 tools_used, tools_not_used, sources_cited, language, payload, \
                 max_latency_ms, max_tokens, rubric).",
            )));
        }
        Ok(Self {
            name,
            question,
            conversation,
            user,
            checks,
        })
    }
}

/// What a run saw of a case's turn: the answer and what came with it.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The answer's text.
    pub answer: &'a str,
    /// The tools the turn called, by name.
    pub tools: &'a [String],
    /// The kinds of the payloads that came with the answer (`list`, `sources`, …).
    pub payloads: &'a [String],
    /// From the question sent to the answer complete, in milliseconds.
    pub latency_ms: u64,
    /// The tokens the turn used, when the model reported them.
    pub tokens: Option<u64>,
}

/// `vi` when `text` has a letter with a Vietnamese diacritic (`à`, `ơ`, `ệ`, `đ`, …),
/// else `en`.
pub fn language_of(text: &str) -> &'static str {
    let vietnamese = text.chars().any(|c| {
        ('\u{1EA0}'..='\u{1EF9}').contains(&c)
            || "àáâãèéêìíòóôõùúýăđĩũơưÀÁÂÃÈÉÊÌÍÒÓÔÕÙÚÝĂĐĨŨƠƯ".contains(c)
    });
    if vietnamese { "vi" } else { "en" }
}

fn has(haystack: &str, needle: &str) -> bool {
    haystack.contains(&needle.to_lowercase())
}

impl Checks {
    /// The first check `seen` fails, named with what it wanted (e.g. `contains "giao
    /// hàng"`); `None` when every check passes. The rubric is not judged here (the model
    /// judges it).
    pub fn first_failure(&self, seen: &Observed<'_>) -> Option<String> {
        let answer = seen.answer.to_lowercase();
        if let Some(text) = self.contains.iter().find(|t| !has(&answer, t)) {
            return Some(format!("contains \"{text}\""));
        }
        if !self.contains_any.is_empty() && !self.contains_any.iter().any(|t| has(&answer, t)) {
            return Some(format!(
                "contains_any \"{}\"",
                self.contains_any.join("\" | \"")
            ));
        }
        if let Some(text) = self.not_contains.iter().find(|t| has(&answer, t)) {
            return Some(format!("not_contains \"{text}\""));
        }
        if let Some(tool) = self.tools_used.iter().find(|t| !seen.tools.contains(t)) {
            return Some(format!("tools_used {tool}"));
        }
        if let Some(tool) = self.tools_not_used.iter().find(|t| seen.tools.contains(t)) {
            return Some(format!("tools_not_used {tool}"));
        }
        let cited = seen.payloads.iter().any(|k| k == "sources");
        if self.sources_cited.is_some_and(|wanted| wanted != cited) {
            return Some(format!("sources_cited {}", !cited));
        }
        if let Some(language) = self.language.as_deref()
            && language != language_of(seen.answer)
        {
            return Some(format!("language {language}"));
        }
        if let Some(kind) = self.payload.as_deref()
            && !seen.payloads.iter().any(|k| k == kind)
        {
            return Some(format!("payload {kind}"));
        }
        if let Some(max) = self.max_latency_ms.filter(|max| seen.latency_ms > *max) {
            return Some(format!("max_latency_ms {max} ({} ms)", seen.latency_ms));
        }
        if let Some(max) = self.max_tokens
            && seen.tokens.is_some_and(|used| used > max)
        {
            return Some(format!("max_tokens {max} ({})", seen.tokens.unwrap_or(0)));
        }
        None
    }
}

/// The system prompt of the model that judges an answer against a case's rubric.
pub const JUDGE_PROMPT: &str = "You judge one answer of an assistant against a rubric. \
Reply with PASS or FAIL first, then one short sentence saying why, in the rubric's language.";

/// The longest verdict kept, in characters.
pub const MAX_VERDICT_CHARS: usize = 500;

/// The request that asks the site's model to judge `answer` to `question` by `rubric`.
pub fn judge_request(question: &str, answer: &str, rubric: &str) -> crate::boundary::ChatRequest {
    use crate::chat::ChatMessage;
    crate::boundary::ChatRequest {
        messages: alloc::vec![
            ChatMessage::system(JUDGE_PROMPT),
            ChatMessage::user(format!(
                "Rubric: {rubric}\n\nQuestion: {question}\n\nAnswer: {answer}"
            )),
        ],
        tools: Vec::new(),
        temperature: Some(0.0),
        max_tokens: Some(200),
    }
}

/// The judge's reply read: whether it passed (`PASS` first) and its verdict (the reply,
/// trimmed, at most [`MAX_VERDICT_CHARS`]).
pub fn verdict(reply: &str) -> (bool, String) {
    let reply = reply.trim();
    let passed = reply
        .get(..4)
        .is_some_and(|first| first.eq_ignore_ascii_case("pass"));
    (passed, reply.chars().take(MAX_VERDICT_CHARS).collect())
}

/// Checks proposed for a case made from a real turn (the console shows them to edit before
/// saving): the answer's salient words (its numbers first, then its longest words; at most
/// 3), the tools the turn used, its language, and its payload's kind (list, table, chart)
/// or its sources.
pub fn propose(answer: &str, tools: &[String], payloads: &[String]) -> Checks {
    let mut words: Vec<&str> = answer
        .split(|c: char| c.is_whitespace() || ",;:!?()\"“”'".contains(c))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().any(char::is_numeric) || w.chars().count() >= 6)
        .collect();
    // Numbers first, then the longest words; ties keep the answer's order.
    words.sort_by_key(|w| {
        (
            !w.chars().any(char::is_numeric),
            core::cmp::Reverse(w.chars().count()),
        )
    });
    let mut contains: Vec<String> = Vec::new();
    for word in words {
        if contains.len() < 3 && !contains.iter().any(|c| c.eq_ignore_ascii_case(word)) {
            contains.push(String::from(word));
        }
    }
    let mut tools_used: Vec<String> = Vec::new();
    for tool in tools {
        if !tools_used.contains(tool) {
            tools_used.push(tool.clone());
        }
    }
    let payload = payloads
        .iter()
        .find(|k| matches!(k.as_str(), "list" | "table" | "chart"))
        .cloned();
    Checks {
        contains,
        tools_used,
        sources_cited: payloads.iter().any(|k| k == "sources").then_some(true),
        language: Some(String::from(language_of(answer))),
        payload,
        ..Checks::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn case(checks: Checks) -> TestCase {
        TestCase {
            name: None,
            question: " Giao hàng mất mấy ngày? ".to_string(),
            conversation: Vec::new(),
            user: None,
            checks,
        }
    }

    #[test]
    fn a_case_is_trimmed_and_needs_a_check() {
        let checks = Checks {
            contains: vec![" 3 ngày ".to_string()],
            ..Checks::default()
        };
        let checked = case(checks).checked().expect("valid");
        assert_eq!(checked.question, "Giao hàng mất mấy ngày?");
        assert_eq!(checked.checks.contains, ["3 ngày"]);
        let none = case(Checks::default()).checked().expect_err("refused");
        assert!(none.0.contains("at least one check"), "{none:?}");
    }

    #[test]
    fn bounds_are_named() {
        let bad = |checks: Checks, field: &str| {
            let err = case(checks).checked().expect_err("refused");
            assert!(err.0.contains(field), "{field}: {err:?}");
        };
        bad(
            Checks {
                language: Some("fr".into()),
                ..Checks::default()
            },
            "checks.language",
        );
        bad(
            Checks {
                payload: Some("map".into()),
                ..Checks::default()
            },
            "checks.payload",
        );
        bad(
            Checks {
                max_latency_ms: Some(0),
                ..Checks::default()
            },
            "checks.max_latency_ms",
        );
        bad(
            Checks {
                contains: vec!["x".to_string(); MAX_TEXTS + 1],
                ..Checks::default()
            },
            "checks.contains",
        );
        let mut long = case(Checks {
            sources_cited: Some(true),
            ..Checks::default()
        });
        long.question = "x".repeat(MAX_TEXT_CHARS + 1);
        assert!(
            long.checked()
                .expect_err("refused")
                .0
                .contains("`question`")
        );
        let mut who = case(Checks {
            sources_cited: Some(true),
            ..Checks::default()
        });
        who.conversation = vec![Turn {
            role: "system".into(),
            content: "x".into(),
        }];
        assert!(
            who.checked()
                .expect_err("refused")
                .0
                .contains("conversation[].role")
        );
    }

    #[test]
    fn the_first_failing_check_is_named() {
        let checks = Checks {
            contains: vec!["3 ngày".to_string()],
            not_contains: vec!["xin lỗi".to_string()],
            tools_used: vec!["search".to_string()],
            language: Some("vi".to_string()),
            payload: Some("list".to_string()),
            max_tokens: Some(100),
            ..Checks::default()
        };
        let tools = ["search".to_string()];
        let payloads = ["list".to_string()];
        let seen = |answer| Observed {
            answer,
            tools: &tools,
            payloads: &payloads,
            latency_ms: 10,
            tokens: Some(50),
        };
        assert_eq!(checks.first_failure(&seen("Giao trong 3 NGÀY ạ.")), None);
        assert_eq!(
            checks.first_failure(&seen("Giao nhanh ạ.")).as_deref(),
            Some("contains \"3 ngày\"")
        );
        assert_eq!(
            checks.first_failure(&seen("Xin lỗi, 3 ngày ạ.")).as_deref(),
            Some("not_contains \"xin lỗi\"")
        );
        assert_eq!(
            checks.first_failure(&seen("It takes 3 ngay")).as_deref(),
            Some("contains \"3 ngày\"")
        );
        let english = Checks {
            language: Some("vi".to_string()),
            ..Checks::default()
        };
        assert_eq!(
            english
                .first_failure(&seen("Delivery takes 3 days."))
                .as_deref(),
            Some("language vi")
        );
        assert_eq!(language_of("Giao hàng"), "vi");
        assert_eq!(language_of("Delivery"), "en");
    }

    #[test]
    fn checks_are_proposed_from_an_answer() {
        let tools = ["search_products".to_string(), "search_products".to_string()];
        let payloads = ["table".to_string()];
        let proposed = propose(
            "Dạ, mẫu Ultrabook X1 giá 21.990.000đ, bảo hành 24 tháng ạ.",
            &tools,
            &payloads,
        );
        assert_eq!(proposed.contains, ["21.990.000đ", "X1", "24"]);
        assert_eq!(proposed.tools_used, ["search_products"]);
        assert_eq!(proposed.language.as_deref(), Some("vi"));
        assert_eq!(proposed.payload.as_deref(), Some("table"));
        assert_eq!(proposed.sources_cited, None);
        let english = propose("We ship everywhere.", &[], &["sources".to_string()]);
        assert_eq!(english.contains, ["everywhere"]);
        assert_eq!(english.language.as_deref(), Some("en"));
        assert_eq!(english.sources_cited, Some(true));
    }

    #[test]
    fn the_judges_verdict_is_read() {
        assert_eq!(
            verdict(" PASS: lịch sự ạ "),
            (true, "PASS: lịch sự ạ".to_string())
        );
        assert!(!verdict("FAIL: no greeting").0);
        assert!(!verdict("").0);
        let request = judge_request("q", "a", "be polite");
        assert_eq!(request.messages.len(), 2);
        assert!(request.messages[1].content.contains("Rubric: be polite"));
    }
}
