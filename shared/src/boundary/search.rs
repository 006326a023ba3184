//! The web search boundary: pages an answer can cite (`guarded`'s code-driven search,
//! `knowledge`'s web tool).
//!
//! The Worker implements it per site over the configured provider (DuckDuckGo, SearXNG,
//! Brave, …, or a local fixture for tests); tests use
//! [`MemorySearch`](crate::memory::MemorySearch).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::error::ServiceError;

/// One search result: a source an answer can cite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSource {
    /// The page's title (may be empty when the provider has none).
    pub title: String,
    /// The page's address. Implementations return only absolute `http(s)` URLs.
    pub url: String,
    /// A short extract of the page's text, for the prompt (`Content:` in `guarded`'s
    /// search-results text).
    pub snippet: String,
    /// When the page was published, as the provider gave it (ISO-8601 when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
}

/// Seed 004's `clean_url` ("Clean markdown link formats"): a markdown link
/// `[text](url)` (or `[text](url "title")`) → `url`, `<url>` → `url`, anything else
/// trimmed. It only unwraps: the result must still pass
/// [`is_web_url`] before it is shown, so a link wrapping a
/// `javascript:` URL is still refused. A URL with parentheses of its own
/// (`…/Tooth_(anatomy)`) keeps them: the link's target runs to its last `)`.
pub fn clean_url(link: &str) -> &str {
    let link = link.trim();
    let target = markdown_target(link).unwrap_or(link);
    target
        .strip_prefix('<')
        .and_then(|rest| rest.strip_suffix('>'))
        .unwrap_or(target)
        .trim()
}

/// The target of a whole-text markdown link `[text](target "title"?)`.
fn markdown_target(link: &str) -> Option<&str> {
    let inner = link.strip_prefix('[')?.strip_suffix(')')?;
    let open = inner.find("](")?;
    inner[open + 2..].split_whitespace().next()
}

/// Whether `url` is an absolute `http://` or `https://` address with a host: the only
/// URLs a [`WebSource`] may carry (a cited link must be safe to show).
pub fn is_web_url(url: &str) -> bool {
    let has_prefix = |prefix: &str| {
        url.as_bytes()
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
    };
    let rest = if has_prefix("https://") {
        &url[8..]
    } else if has_prefix("http://") {
        &url[7..]
    } else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    !host.is_empty() && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Searches the web.
///
/// Errors: [`Unavailable`](crate::error::ServiceErrorKind::Unavailable) when the provider
/// cannot be reached or refuses; a query nothing matches is `Ok` with no sources.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait WebSearch {
    /// At most `max_results` sources for `query`, best first, each URL at most once.
    async fn search(&self, query: &str, max_results: usize)
    -> Result<Vec<WebSource>, ServiceError>;
}

impl<T: WebSearch + ?Sized> WebSearch for &T {
    async fn search(
        &self,
        query: &str,
        max_results: usize,
    ) -> Result<Vec<WebSource>, ServiceError> {
        (**self).search(query, max_results).await
    }
}
