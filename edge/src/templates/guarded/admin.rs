//! `PUT /admin/search-pages` (secret key): replaces the site's pages for the `local` web
//! search provider (`guarded`): `{"pages":[{"title","url","content","query_pattern"?}]}`,
//! at most 200, each URL absolute `http(s)`.

use concierge_core::boundary::is_web_url;
use serde::Deserialize;
use worker::{Env, Request, Response};

use super::web_search::{MAX_LOCAL_PAGES, replace_local_pages};
use crate::auth::SecretCaller;
use crate::error::ApiError;
use crate::http::body;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PagesBody {
    pages: Vec<PageBody>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageBody {
    #[serde(default)]
    title: String,
    url: String,
    content: String,
    #[serde(default)]
    query_pattern: String,
}

/// `PUT /admin/search-pages`.
pub(crate) async fn put_search_pages(
    mut req: Request,
    env: &Env,
    caller: SecretCaller,
) -> Result<Response, ApiError> {
    let body: PagesBody = body::json(&mut req).await?;
    if body.pages.len() > MAX_LOCAL_PAGES {
        return Err(ApiError::bad_request("`pages`: at most 200."));
    }
    let mut pages = Vec::with_capacity(body.pages.len());
    for page in body.pages {
        let url = page.url.trim();
        if !is_web_url(url) || url.len() > 2048 {
            return Err(ApiError::bad_request(format!(
                "`pages[].url` must be an absolute http(s) URL: {url}"
            )));
        }
        if page.content.trim().is_empty() || page.content.chars().count() > 8_000 {
            return Err(ApiError::bad_request(
                "`pages[].content` must be 1 to 8000 characters.",
            ));
        }
        if page.title.chars().count() > 300 || page.query_pattern.chars().count() > 300 {
            return Err(ApiError::bad_request(
                "`pages[].title` and `pages[].query_pattern`: at most 300 characters.",
            ));
        }
        let title = page.title.trim().to_string();
        let pattern = page.query_pattern.trim().to_string();
        pages.push((
            pattern,
            title,
            page.content.trim().to_string(),
            url.to_string(),
        ));
    }
    let count = pages.len();
    replace_local_pages(&env.d1("DB")?, &caller.site.id, &pages).await?;
    Ok(Response::from_json(&serde_json::json!({ "pages": count }))?)
}
