//! `guarded` — a domain-restricted advisor (seed 004, `004_106e196705ddc9ff.txt`, a dental
//! chatbot): a guardrail first, summary memory, a code-driven web search with sources.
//!
//! ```text
//! extract      the visitor's message; its language detected once per turn (vi|en)
//! guardrail    Assistant::screen, before anything is stored: "is it <domain>?" YES/NO
//!   ├─ REJECTED → the refusal in the visitor's language, streamed and NOT stored → END
//!   └─ PASSED   → the engine stores the message (nothing the visitor sent is lost)
//! memory_load  the 6 recent messages before it + the accumulated summary (a read error
//!              degrades to an empty summary, logged)
//! search       duckduckgo_search (the site's provider), ≤ 5 results; an error fails the turn
//! build_prompt system + summary block + recent messages + question + search results
//! generate     the chat model, streamed (a sources list the model writes itself is cut)
//! format       the numbered sources section ("Nguồn tham khảo:" / "Sources:") appended
//! save         the reply stored; the answer summarised and appended to the summary
//!              (best effort: a failed update never fails a shown answer)
//! ```
//!
//! Where the seed is silent or contradicts itself, `TEMPLATES.md` §4.6 decides; the
//! README's `guarded` section lists the decisions.

mod calls;
mod config;
mod flow;
mod guardrail;
pub mod mcp;
mod prompt;
mod sources;
mod steps;

pub use calls::accumulate_summary;
pub use config::{
    COMPRESS_AFTER_SUMMARY, GUARDRAIL_EN, GUARDRAIL_VI, GuardedConfig, GuardedTexts,
    KEEP_RECENT_MESSAGES, MAX_SEARCH_RESULTS, SEARCH_TOOL, SENTENCE_KEYS, SENTENCES_EN,
    SENTENCES_VI, SUMMARIZE_THRESHOLD,
};
pub use flow::{recent_window, turn_language};
pub use guardrail::{Verdict, parse_verdict, prose_domain};
pub use prompt::{
    PromptParts, answer_request, guardrail_request, summarize_request, summary_block,
};
pub use sources::{
    SOURCES_HEADING_EN, SOURCES_HEADING_VI, Source, SourcesCut, clean_url, extract_sources,
    results_text, sources_section,
};

use crate::boundary::WebSearch;
use crate::conversation::Language;
use crate::engine::{Answer, Assistant, Platform, Refusal, Turn, TurnConfig};
use crate::error::Error;
use crate::turn::TurnInput;

/// What `guarded` needs besides the engine's platform: the site's web search (its `search`
/// step).
#[derive(Debug, Clone)]
pub struct GuardedDeps<S> {
    /// Web search returning citable sources.
    pub search: S,
}

/// The `guarded` template as the engine runs it: the site's settings and its dependencies.
#[derive(Debug, Clone)]
pub struct GuardedAssistant<S> {
    /// The site's settings.
    pub config: GuardedConfig,
    /// Its dependencies.
    pub deps: GuardedDeps<S>,
}

impl<S: WebSearch> GuardedAssistant<S> {
    /// `config` with `search` as its web search.
    pub fn new(config: GuardedConfig, search: S) -> Self {
        Self {
            config,
            deps: GuardedDeps { search },
        }
    }
}

impl<S: WebSearch> Assistant for GuardedAssistant<S> {
    fn config(&self) -> &TurnConfig {
        &self.config.turn
    }

    fn greeting(&self, language: Language) -> &str {
        &self.config.texts(language).greeting
    }

    /// Seed 004's conversations hold only questions and answers: the greeting is shown,
    /// never stored (issue 27 item 4).
    fn stores_greeting(&self) -> bool {
        false
    }

    /// The guardrail, before the visitor's message is stored.
    async fn screen<P: Platform>(
        &self,
        platform: &P,
        input: &TurnInput,
        text: &str,
    ) -> Result<Option<Refusal>, Error> {
        let scope = crate::conversation::Scope::new(&input.site_id, &input.conversation_id);
        flow::screen(&self.config, platform, Some(scope), text).await
    }

    /// Memory, search, prompt, answer, sources, summary.
    async fn answer<P: Platform>(
        &self,
        platform: &P,
        turn: &mut Turn<'_>,
    ) -> Result<Answer, Error> {
        flow::answer(&self.config, &self.deps.search, platform, turn).await
    }
}
