//! The web search boundary over the site's provider (`config.guarded.search`):
//! - `local`: the site's own pages in D1 (`search_fixtures`, `PUT /admin/search-pages`),
//!   for tests, `make dev` and a merchant's curated sources;
//! - `searxng`: a SearXNG instance's JSON API (`GET {url}/search?q=…&format=json`; the
//!   instance must enable the `json` format);
//! - `brave`: Brave Search's Web Search API (`GET
//!   https://api.search.brave.com/res/v1/web/search`, key in `X-Subscription-Token`);
//! - `tavily`: Tavily's search API (`POST https://api.tavily.com/search`, bearer key).
//!
//! Every call has a timeout (default 5 s) and at most `max_results` results; a provider
//! that cannot be reached, times out or answers an error status is `Unavailable`, never an
//! empty result. Only `http(s)` URLs are returned, each once: a provider's markdown link
//! (`[text](url)`) or `<url>` is unwrapped first, then validated.

use std::collections::BTreeSet;
use std::time::Duration;

use concierge_core::boundary::{WebSearch, WebSource, clean_url, is_web_url};
use concierge_core::error::{ServiceError, ServiceErrorKind};
use serde_json::Value;
use wasm_bindgen::JsValue;
use worker::{
    AbortController, D1Database, Env, Fetch, Headers, Method, Request, RequestInit,
    RequestRedirect, Url,
};

use crate::bindings::upstream::within;
use crate::site::{Site, endpoint};

/// Default wait for a provider's answer.
const DEFAULT_TIMEOUT_MS: u32 = 5_000;
/// Pages a site may keep for the local provider.
pub(crate) const MAX_LOCAL_PAGES: usize = 200;

/// A site's web search.
#[derive(Debug)]
pub(crate) enum SiteSearch {
    /// The site's pages in D1.
    Local { db: D1Database, site_id: String },
    /// A SearXNG instance.
    SearXng { url: String, timeout: Duration },
    /// Brave Search.
    Brave { key: String, timeout: Duration },
    /// Tavily.
    Tavily { key: String, timeout: Duration },
    /// Misconfigured (e.g. a key that does not open): every search is unavailable.
    Broken(&'static str),
}

impl SiteSearch {
    /// The site's configured provider (`local` when none is set).
    pub(crate) fn for_site(env: &Env, site: &Site) -> worker::Result<Self> {
        let settings = super::settings::get(site).search;
        let timeout_ms = settings.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        let timeout = Duration::from_millis(u64::from(timeout_ms));
        let key = || super::settings::search_key(site, env);
        Ok(match settings.provider.as_deref().unwrap_or("local") {
            "searxng" => {
                let url = settings.url.as_deref().unwrap_or_default();
                // Checked again at use, as LLM endpoints are.
                match endpoint::check(url, endpoint::development(env)) {
                    Ok(url) => Self::SearXng { url, timeout },
                    Err(_) => Self::Broken("the SearXNG URL is not allowed"),
                }
            }
            "brave" => match key() {
                Some(key) => Self::Brave { key, timeout },
                None => Self::Broken("the Brave Search key is missing"),
            },
            "tavily" => match key() {
                Some(key) => Self::Tavily { key, timeout },
                None => Self::Broken("the Tavily key is missing"),
            },
            _ => Self::Local {
                db: env.d1("DB")?,
                site_id: site.id.clone(),
            },
        })
    }
}

fn unavailable(detail: impl Into<String>) -> ServiceError {
    ServiceError::new(ServiceErrorKind::Unavailable, detail)
}

impl WebSearch for SiteSearch {
    async fn search(
        &self,
        query: &str,
        max_results: usize,
    ) -> Result<Vec<WebSource>, ServiceError> {
        let results = match self {
            Self::Local { db, site_id } => local(db, site_id, query).await?,
            Self::SearXng { url, timeout } => {
                let mut target =
                    Url::parse(&format!("{url}/search")).map_err(|e| unavailable(e.to_string()))?;
                target
                    .query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("format", "json");
                let body = get_json(target.as_str(), &[], *timeout).await?;
                parse_results(&body["results"], "content", "publishedDate")
            }
            Self::Brave { key, timeout } => {
                let mut target = Url::parse("https://api.search.brave.com/res/v1/web/search")
                    .map_err(|e| unavailable(e.to_string()))?;
                let count = max_results.clamp(1, 20).to_string();
                target
                    .query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("count", &count);
                let headers = [("x-subscription-token", key.as_str())];
                let body = get_json(target.as_str(), &headers, *timeout).await?;
                parse_results(&body["web"]["results"], "description", "page_age")
            }
            Self::Tavily { key, timeout } => {
                let request = serde_json::json!({"query": query, "max_results": max_results});
                let body =
                    post_json("https://api.tavily.com/search", key, &request, *timeout).await?;
                parse_results(&body["results"], "content", "published_date")
            }
            Self::Broken(why) => return Err(unavailable(*why)),
        };
        Ok(dedupe(results, max_results))
    }
}

/// The provider's result objects (`title`, `url`, the snippet field, the date field).
fn parse_results(results: &Value, snippet: &str, date: &str) -> Vec<WebSource> {
    let field = |item: &Value, name: &str| item[name].as_str().unwrap_or_default().to_string();
    results
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| WebSource {
                    title: strip_tags(&field(item, "title")),
                    url: field(item, "url"),
                    snippet: strip_tags(&field(item, snippet)),
                    published: item[date].as_str().map(str::to_string),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Highlight markup some providers put in titles and snippets (`<strong>`), removed.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

/// Each result's URL cleaned (a markdown link or `<url>` unwrapped, seed `clean_url`)
/// and then validated; only `http(s)` URLs, each once.
fn dedupe(results: Vec<WebSource>, max_results: usize) -> Vec<WebSource> {
    let mut seen = BTreeSet::new();
    results
        .into_iter()
        .filter_map(|mut r| {
            r.url = clean_url(&r.url).to_string();
            (is_web_url(&r.url) && seen.insert(r.url.clone())).then_some(r)
        })
        .take(max_results)
        .collect()
}

async fn send_json(request: Request, timeout: Duration) -> Result<Value, ServiceError> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let fetch = Fetch::Request(request);
    let mut response = match within(timeout, fetch.send_with_signal(&signal)).await {
        Some(Ok(response)) => response,
        Some(Err(err)) => return Err(unavailable(format!("search provider unreachable: {err}"))),
        None => {
            controller.abort();
            return Err(unavailable("search provider timed out"));
        }
    };
    let status = response.status_code();
    if !(200..300).contains(&status) {
        return Err(unavailable(format!("search provider answered {status}")));
    }
    match within(timeout, response.json::<Value>()).await {
        Some(Ok(body)) => Ok(body),
        Some(Err(err)) => Err(unavailable(format!("search provider sent no JSON: {err}"))),
        None => Err(unavailable("search provider timed out")),
    }
}

async fn get_json(
    url: &str,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Result<Value, ServiceError> {
    let build = || -> worker::Result<Request> {
        let set = Headers::new();
        set.set("accept", "application/json")?;
        for (name, value) in headers {
            set.set(name, value)?;
        }
        let mut init = RequestInit::new();
        // Redirects are not followed (a 3xx is an error): only the checked URL is reached.
        init.with_method(Method::Get)
            .with_headers(set)
            .with_redirect(RequestRedirect::Manual);
        Request::new_with_init(url, &init)
    };
    let request = build().map_err(|e| unavailable(e.to_string()))?;
    send_json(request, timeout).await
}

async fn post_json(
    url: &str,
    key: &str,
    body: &Value,
    timeout: Duration,
) -> Result<Value, ServiceError> {
    let build = || -> worker::Result<Request> {
        let set = Headers::new();
        set.set("content-type", "application/json")?;
        set.set("accept", "application/json")?;
        set.set("authorization", &format!("Bearer {key}"))?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(set)
            .with_body(Some(body.to_string().into()))
            .with_redirect(RequestRedirect::Manual);
        Request::new_with_init(url, &init)
    };
    let request = build().map_err(|e| unavailable(e.to_string()))?;
    send_json(request, timeout).await
}

/// The lower-cased words of `text`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

#[derive(Debug, serde::Deserialize)]
struct PageRow {
    query_pattern: String,
    title: String,
    content: String,
    url: String,
}

/// The local provider: the site's pages scored by the query's words found in their
/// `query_pattern`, title and content (a page whose `query_pattern` appears in the query
/// ranks first); pages with no hit are not found.
async fn local(
    db: &D1Database,
    site_id: &str,
    query: &str,
) -> Result<Vec<WebSource>, ServiceError> {
    let service = |e: worker::Error| unavailable(e.to_string());
    let rows: Vec<PageRow> = db
        .prepare(
            "SELECT query_pattern, title, content, url FROM search_fixtures \
             WHERE site_id = ?1 ORDER BY position LIMIT ?2",
        )
        .bind(&[site_id.into(), JsValue::from_f64(MAX_LOCAL_PAGES as f64)])
        .map_err(service)?
        .all()
        .await
        .map_err(service)?
        .results()
        .map_err(service)?;
    let terms: BTreeSet<String> = words(query).collect();
    let lowered = query.to_lowercase();
    let mut scored: Vec<(usize, &PageRow)> = rows
        .iter()
        .map(|row| {
            let pattern = row.query_pattern.trim().to_lowercase();
            let bonus = if !pattern.is_empty() && lowered.contains(&pattern) {
                100
            } else {
                0
            };
            let hits = words(&row.title)
                .chain(words(&row.content))
                .filter(|w| terms.contains(w))
                .count();
            (bonus + hits, row)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    Ok(scored
        .into_iter()
        .map(|(_, row)| WebSource {
            title: row.title.clone(),
            url: row.url.clone(),
            snippet: row.content.clone(),
            published: None,
        })
        .collect())
}

/// Replaces the site's local pages (`PUT /admin/search-pages`).
pub(crate) async fn replace_local_pages(
    db: &D1Database,
    site_id: &str,
    pages: &[(String, String, String, String)],
) -> worker::Result<()> {
    let mut statements = vec![
        db.prepare("DELETE FROM search_fixtures WHERE site_id = ?1")
            .bind(&[site_id.into()])?,
    ];
    for (position, (pattern, title, content, url)) in pages.iter().enumerate() {
        statements.push(
            db.prepare(
                "INSERT INTO search_fixtures (site_id, position, query_pattern, title, content, url) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .bind(&[
                site_id.into(),
                JsValue::from_f64(position as f64),
                pattern.as_str().into(),
                title.as_str().into(),
                content.as_str().into(),
                url.as_str().into(),
            ])?,
        );
    }
    db.batch(statements).await?;
    Ok(())
}
