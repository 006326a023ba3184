//! A [`WebSearch`] over a fixed corpus of pages.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::boundary::{WebSearch, WebSource, is_web_url};
use crate::error::{ServiceError, ServiceErrorKind};

/// One page of a [`MemorySearch`] corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPage {
    /// Its title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// Its text (returned whole as the source's snippet).
    pub text: String,
    /// When it was published (ISO-8601), if known.
    pub published: Option<String>,
}

impl MemoryPage {
    /// A page without a publication date.
    pub fn new(title: &str, url: &str, text: &str) -> Self {
        Self {
            title: title.into(),
            url: url.into(),
            text: text.into(),
            published: None,
        }
    }

    /// The same page, with a publication date.
    #[must_use]
    pub fn published(mut self, published: &str) -> Self {
        self.published = Some(published.into());
        self
    }
}

/// A search engine over the pages a test gives it.
///
/// A query is split into terms (runs of letters and digits, any script, compared
/// case-insensitively). A page's score is the number of occurrences of the query's
/// distinct terms among its title's and text's words; pages scoring 0 are not found.
/// Results come best first, ties in corpus order, each URL once (its best page), only
/// `http(s)` URLs.
#[derive(Debug, Default)]
pub struct MemorySearch {
    pages: RefCell<Vec<MemoryPage>>,
    queries: RefCell<Vec<String>>,
    unavailable: Cell<bool>,
}

impl MemorySearch {
    /// An empty corpus.
    pub fn new() -> Self {
        Self::default()
    }

    /// A corpus of `pages`.
    pub fn with_pages(pages: Vec<MemoryPage>) -> Self {
        let search = Self::new();
        search.pages.replace(pages);
        search
    }

    /// Adds a page to the corpus.
    pub fn add(&self, page: MemoryPage) {
        self.pages.borrow_mut().push(page);
    }

    /// The queries searched so far, in order (for tests that assert what was searched, or
    /// that nothing was).
    pub fn queries(&self) -> Vec<String> {
        self.queries.borrow().clone()
    }

    /// Makes every later search fail with `Unavailable` (or work again).
    pub fn set_unavailable(&self, unavailable: bool) {
        self.unavailable.set(unavailable);
    }
}

/// The lower-cased words of `text`: maximal runs of alphanumeric characters.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

impl WebSearch for MemorySearch {
    async fn search(
        &self,
        query: &str,
        max_results: usize,
    ) -> Result<Vec<WebSource>, ServiceError> {
        self.queries.borrow_mut().push(query.into());
        if self.unavailable.get() {
            return Err(ServiceError::new(
                ServiceErrorKind::Unavailable,
                "memory search set unavailable",
            ));
        }
        let terms: BTreeSet<String> = words(query).collect();
        let pages = self.pages.borrow();
        let mut scored: Vec<(usize, usize)> = pages
            .iter()
            .enumerate()
            .filter(|(_, page)| is_web_url(&page.url))
            .map(|(index, page)| {
                let hits = words(&page.title)
                    .chain(words(&page.text))
                    .filter(|word| terms.contains(word))
                    .count();
                (index, hits)
            })
            .filter(|&(_, hits)| hits > 0)
            .collect();
        // Stable: ties keep corpus order.
        scored.sort_by_key(|&(_, hits)| core::cmp::Reverse(hits));
        let mut seen = BTreeSet::new();
        Ok(scored
            .into_iter()
            .map(|(index, _)| &pages[index])
            .filter(|page| seen.insert(page.url.clone()))
            .take(max_results)
            .map(|page| WebSource {
                title: page.title.clone(),
                url: page.url.clone(),
                snippet: page.text.clone(),
                published: page.published.clone(),
            })
            .collect())
    }
}
