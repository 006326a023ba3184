//! The assistant templates — the core's registry of them: [`Template`], each template's
//! folder (`pub mod`), and what the rest of the crate asks of a template by its name
//! ([`Template::mcp_tools`]). No other file of the core names a template.
//!
//! A template is a folder here: its settings (`<T>Config`, and the site settings it is
//! made from where it has its own), its steps, its prompts, and its own dependencies
//! (`<T>Deps`, generic over the boundary traits it needs: warranty records, SQL, web
//! search, a cache, data sets, logs…). `<T>Assistant { config, deps }` is the
//! [`Assistant`](crate::engine::Assistant) the engine's turn lifecycle runs; the engine's
//! [`Platform`](crate::engine::Platform) carries only what the engine itself uses. A
//! boundary trait only one template needs is declared in its folder (`rental`'s
//! `RentalData`), with its in-memory implementation (`rental::memory`, feature `memory`);
//! a template with MCP tools of its own declares them in its `mcp` module.
//!
//! Adding a template: its folder, a `pub mod` line and a [`Template`] variant here (with
//! its name in [`Template::as_str`], [`Template::ALL`] and [`Template::BUILT`]), and its
//! arm in [`Template::mcp_tools`].
//!
//! - [`shop`] — the store assistant (seed 000), a [`Graph`](crate::graph::Graph) (named
//!   nodes; plain and conditional edges; `END`) run by a [`Flow`](crate::graph::Flow):
//!   `classify` → (`clarify_stream` | `warranty_stream` | `retrieve` → `respond_stream`) →
//!   `END`; depends on the site's warranty records.
//! - [`analyst`] — business data questions (seed 001): `intent_classifier` → one of
//!   `chat_node`, `data_agent_node` (a ReAct tool loop, [`run_react`](crate::agent::run_react),
//!   at most three tool errors) or `clarify_node` → `response_formatter`; depends on the
//!   merchant's data sets.
//! - `rental` — the rental marketplace assistant (seed 002, feature `rental`):
//!   `orchestrator` → `sql_generation` (validated SQL, retried with the error fed back) →
//!   `response_generator` → `result_validator`; or `content_response` / `control_response`;
//!   depends on read-only SQL and the site's roles and learned Q&A.
//! - `knowledge` — the internal-knowledge assistant (seed 003, feature `knowledge`):
//!   `orchestrator` → `reflection_router` (the plan) → `agent_execution` (stages of
//!   concurrent tasks, [`run_stage`](crate::agent::run_stage)) → `conflict_resolution` →
//!   `final_response`; partial failures are results, not errors; depends on a cache and
//!   the site's knowledge base (logs, version).
//! - [`guarded`] — a domain-restricted advisor with a guardrail (seed 004): `guardrail`
//!   (refused: nothing stored) → `memory_load` (recent window and
//!   [`Summary`](crate::conversation::Summary)) → `search` → `build_prompt` → `generate`
//!   (streamed) → `format` → `save` (and the summary update); depends on web search.
//!
//! Only `shop` uses [`graph`](crate::graph); the other four are plain async steps with the
//! same names.
//!
//! ## Running the `shop` template
//! ```
//! # #[cfg(feature = "memory")] {
//! use concierge_core::engine::{self, NewConversation};
//! use concierge_core::flows::shop::{ShopAssistant, ShopConfig};
//! use concierge_core::graph::block_on;
//! use concierge_core::memory::MemoryBackend;
//! use concierge_core::turn::{TurnEvent, TurnInput};
//!
//! let backend = MemoryBackend::demo("site-1");
//! // The template holds its settings and its own dependencies (here the warranty records);
//! // the engine's platform holds the rest.
//! let shop = ShopAssistant::new(ShopConfig::default(), &backend.warranty);
//! let new = NewConversation { site_id: "site-1".into(), ..Default::default() };
//! let created = block_on(engine::create_conversation(&backend, &shop, new)).unwrap();
//!
//! let input = TurnInput {
//!     site_id: "site-1".into(),
//!     conversation_id: created.conversation.id.clone(),
//!     text: "Kiểm tra bảo hành serial 0979825281".into(),
//!     idempotency_key: None,
//! };
//! let mut events: Vec<TurnEvent> = Vec::new();
//! block_on(engine::run_turn(&backend, &shop, &input, &mut events)).unwrap();
//! assert!(matches!(&events[1], TurnEvent::Chunk { text } if text.contains("S23 Ultra")));
//! # }
//! ```
//!
//! ## Choosing a template
//!
//! A site names exactly one [`Template`]; the Worker runs the one it names. Five are
//! planned (`shop`, `analyst`, `rental`, `knowledge`, `guarded`); only those in
//! [`Template::BUILT`] can be chosen. Choosing another is refused
//! ([`Template::choose`]), never replaced by a built one.
//!
//! ```
//! use concierge_core::flows::{Template, TemplateChoiceError};
//!
//! assert_eq!(Template::choose("shop"), Ok(Template::Shop));
//! assert_eq!(Template::choose("analyst"), Ok(Template::Analyst));
//! assert_eq!(Template::choose("support"), Err(TemplateChoiceError::Unknown));
//! ```

pub mod analyst;
pub mod guarded;
#[cfg(feature = "knowledge")]
pub mod knowledge;
#[cfg(feature = "rental")]
pub mod rental;
pub mod shop;

use core::fmt;
use serde::{Deserialize, Serialize};

use crate::mcp::tools::TemplateTools;

/// An assistant template. Serialised as its lowercase name (`"shop"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Template {
    /// Seed 000: a shop assistant (intent, clarify loop, warranty lookup, retrieval).
    #[default]
    Shop,
    /// Seed 001: answers questions over the user's own synced data (ReAct tools).
    Analyst,
    /// Seed 002: a rental marketplace assistant (generated, validated SQL).
    Rental,
    /// Seed 003: an internal knowledge assistant (planned parallel stages).
    Knowledge,
    /// Seed 004: a guarded assistant (guardrail, summary memory, web search).
    Guarded,
}

/// Why a template name cannot be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateChoiceError {
    /// Not the name of any template.
    Unknown,
    /// A planned template that is not built yet.
    NotBuilt(Template),
}

impl fmt::Display for TemplateChoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let built = Template::BUILT.iter().map(|t| t.as_str());
        let coming = Template::ALL.iter().filter(|t| !t.is_built());
        match self {
            Self::Unknown => f.write_str("`template` must be one of: ")?,
            Self::NotBuilt(template) => write!(
                f,
                "`template` \"{}\" is not built yet; choose one that is: ",
                template.as_str()
            )?,
        }
        for (i, name) in built.enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        let coming: alloc::vec::Vec<&Template> = coming.collect();
        if coming.is_empty() {
            return f.write_str(".");
        }
        f.write_str(" (coming: ")?;
        for (i, template) in coming.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(template.as_str())?;
        }
        f.write_str(").")
    }
}

impl Template {
    /// Every template, built or not, in the order of their seeds.
    pub const ALL: [Self; 5] = [
        Self::Shop,
        Self::Analyst,
        Self::Rental,
        Self::Knowledge,
        Self::Guarded,
    ];

    /// The templates that can run today.
    pub const BUILT: [Self; 5] = [
        Self::Shop,
        Self::Analyst,
        Self::Rental,
        Self::Knowledge,
        Self::Guarded,
    ];

    /// The stored and public name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shop => "shop",
            Self::Analyst => "analyst",
            Self::Rental => "rental",
            Self::Knowledge => "knowledge",
            Self::Guarded => "guarded",
        }
    }

    /// The template named `name` (exact lowercase name), built or not.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Whether this template can run today.
    pub fn is_built(self) -> bool {
        Self::BUILT.contains(&self)
    }

    /// The template a site may choose by `name`: it must exist and be built.
    pub fn choose(name: &str) -> Result<Self, TemplateChoiceError> {
        let template = Self::parse(name).ok_or(TemplateChoiceError::Unknown)?;
        if template.is_built() {
            Ok(template)
        } else {
            Err(TemplateChoiceError::NotBuilt(template))
        }
    }
}

/// What the rest of the crate asks of a template by its name: one arm per template.
impl Template {
    /// The MCP tools this template offers besides every template's (declared in its
    /// folder's `mcp` module), for [`mcp::tools`](crate::mcp::tools).
    pub fn mcp_tools(self) -> TemplateTools {
        match self {
            Self::Shop => shop::mcp::TOOLS,
            Self::Guarded => guarded::mcp::TOOLS,
            Self::Analyst | Self::Rental | Self::Knowledge => TemplateTools::NONE,
        }
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn names_round_trip_through_parse_and_serde() {
        for template in Template::ALL {
            assert_eq!(Template::parse(template.as_str()), Some(template));
            let json = serde_json::to_string(&template).unwrap();
            assert_eq!(json, alloc::format!("\"{}\"", template.as_str()));
            assert_eq!(serde_json::from_str::<Template>(&json).unwrap(), template);
        }
        assert_eq!(Template::parse("Shop"), None);
        assert_eq!(Template::parse("support"), None);
        assert!(serde_json::from_str::<Template>("\"support\"").is_err());
    }

    #[test]
    fn every_template_is_built_and_unknown_names_are_refused_naming_them() {
        assert_eq!(Template::BUILT, Template::ALL);
        for template in Template::ALL {
            assert_eq!(Template::choose(template.as_str()), Ok(template));
        }
        assert_eq!(Template::choose("analyst"), Ok(Template::Analyst));
        assert_eq!(Template::choose(""), Err(TemplateChoiceError::Unknown));
        assert_eq!(
            Template::choose("Analyst"),
            Err(TemplateChoiceError::Unknown)
        );
        assert_eq!(
            Template::choose("support"),
            Err(TemplateChoiceError::Unknown)
        );
        assert_eq!(
            TemplateChoiceError::Unknown.to_string(),
            "`template` must be one of: shop, analyst, rental, knowledge, guarded."
        );
    }
}
