//! `data_agent_node` (the tool loop over the user's data sets) then `response_formatter`.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Value, json};

use super::super::tools::{DataTools, RowSource};
use super::super::{AnalystConfig, DATA_AGENT_SYSTEM_PROMPT, RESPONSE_FORMATTER_PROMPT};
use crate::agent::{ReactEnd, Tool, ToolRegistry, run_react};
use crate::boundary::{DataConnection, DataFuture, DataRows, DataSets};
use crate::chat::ChatMessage;
use crate::conversation::{Language, Metadata};
use crate::engine::{Platform, Turn};
use crate::error::Error;

use super::{finish, request, schema_context, stream_fixed, stream_node, system};

/// The platform's row loader for one user, capped.
struct Loader<'a> {
    sets: &'a dyn DataSets,
    site_id: &'a str,
    user_id: &'a str,
    cap: usize,
}

impl RowSource for Loader<'_> {
    fn load<'a>(&'a self, id: &'a str) -> DataFuture<'a, DataRows> {
        Box::pin(self.sets.rows(self.site_id, self.user_id, id, self.cap))
    }

    fn aggregate<'a>(
        &'a self,
        id: &'a str,
        query: &'a super::super::sql::AggregateQuery,
    ) -> DataFuture<'a, Option<Vec<super::super::sql::AggregateRow>>> {
        self.sets.aggregate(self.site_id, self.user_id, id, query)
    }
}

/// The seed's `ToolCallRecord`s of the loop's rounds.
fn records(steps: &[crate::conversation::ToolStep]) -> Value {
    let mut out = Vec::new();
    for call in steps.iter().flat_map(|s| &s.calls) {
        let arguments = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        let text = match &call.output {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let (result, error) = if call.ok {
            (Value::String(text), Value::Null)
        } else {
            (Value::Null, Value::String(text))
        };
        out.push(json!({"tool_name": call.name, "tool_call_id": call.id,
                        "arguments": arguments, "result": result, "error": error}));
    }
    Value::Array(out)
}

/// `data_agent_node` then `response_formatter`: the text shown and the metadata.
pub(super) async fn data_path<P: Platform>(
    config: &AnalystConfig,
    sets: &dyn DataSets,
    platform: &P,
    turn: &mut Turn<'_>,
    past: &[ChatMessage],
    usage: &mut Option<crate::chat::Usage>,
) -> Result<(String, Metadata), Error> {
    let language = turn.language;
    let mut meta = Metadata::new();
    let user = turn.identity().map(|i| i.sub.clone());
    let site_id = turn.conversation.site_id.clone();
    let connections: Vec<DataConnection> = match &user {
        Some(user) => sets
            .connections(&site_id, user)
            .await
            .map_err(Error::Records)?,
        None => Vec::new(),
    };
    meta.insert("tool_calls".into(), Value::Array(Vec::new()));
    let (Some(user), false) = (user.as_deref(), connections.is_empty()) else {
        meta.insert("error".into(), "no_connections".into());
        let text = config.sentence(language, "no_connections");
        return Ok((stream_fixed(turn, &text), meta));
    };
    let loader = Loader {
        sets,
        site_id: &site_id,
        user_id: user,
        cap: config.max_rows,
    };
    let data = DataTools {
        connections: &connections,
        source: &loader,
    };
    let tools = data.tools();
    let registry = tools
        .iter()
        .fold(ToolRegistry::new(), |r, t| r.with(t as &dyn Tool));
    let none = config.sentence(language, "no_sources");
    let prompt = crate::prompt::fill(
        DATA_AGENT_SYSTEM_PROMPT,
        &[(
            "schema_context",
            schema_context(&connections, &none).trim_end(),
        )],
    );
    // Tool choice and arguments are computations, not prose: temperature 0.
    let mut agent = request(config, system(config, language, &prompt), past, None);
    agent.temperature = Some(0.0);
    let outcome = run_react(
        platform.model(),
        platform.timer(),
        &registry,
        &config.react,
        agent,
        &mut *turn.sink,
    )
    .await;
    *usage = outcome.usage;
    meta.insert("tool_calls".into(), records(&outcome.steps));
    let agent_response = match outcome.end {
        ReactEnd::Answered => outcome.answer,
        ReactEnd::ModelFailed(error) => return Err(Error::ChatModel(error)),
        end => {
            let code = if end == ReactEnd::StepLimit {
                "data_agent_step_limit"
            } else {
                "data_agent_max_retries"
            };
            meta.insert("error".into(), code.into());
            let text = config.sentence(language, "max_retries");
            return Ok((stream_fixed(turn, &text), meta));
        }
    };
    if agent_response.trim().is_empty() {
        let text = config.sentence(language, "no_data");
        return Ok((stream_fixed(turn, &text), meta));
    }
    if config.formatter_llm {
        let result = format!(
            "{}\n{}",
            config.sentence(language, "formatter.result"),
            agent_response.trim()
        );
        let formatter = request(
            config,
            system(config, language, RESPONSE_FORMATTER_PROMPT),
            past,
            Some(ChatMessage::user(result)),
        );
        let shown = stream_node(platform, turn, &formatter, language == Language::Vi).await;
        match (&shown.failure, shown.shown.trim().is_empty()) {
            (None, false) => return Ok((shown.shown, meta)),
            (Some(_), false) => {
                let text = finish(platform, turn, shown, &meta).await?;
                return Ok((text, meta));
            }
            _ => meta.insert("formatter".into(), "fallback".into()),
        };
    }
    Ok((stream_fixed(turn, agent_response.trim()), meta))
}
