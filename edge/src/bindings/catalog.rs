//! A `shop` site's catalog vocabulary in D1 (issue 48): each knowledge document's terms are
//! recorded with the document when it is indexed (`knowledge_documents.vocabulary`); the
//! site's merged set (`sites.catalog`) is rewritten from them after indexing or a deletion,
//! and comes with the site (and its caches) to every turn, where the `shop` classifier
//! takes it. What a term is, and the bounds, are `concierge_core::retrieval::catalog`'s.

use concierge_core::retrieval::catalog;
use concierge_core::template::Template;
use serde::Deserialize;
use worker::Env;

use crate::error::ApiError;
use crate::site::Site;

/// Rewrites `site`'s catalog from its documents' terms (a `shop` site only), and forgets
/// the cached copies of the site when it changed, so the next turns classify with it.
pub(crate) async fn refresh(env: &Env, site: &Site) -> Result<(), ApiError> {
    if site.template != Template::Shop {
        return Ok(());
    }
    #[derive(Deserialize)]
    struct Row {
        vocabulary: String,
    }
    let db = env.d1("DB")?;
    let rows = db
        .prepare("SELECT vocabulary FROM knowledge_documents WHERE site_id = ?1 ORDER BY id")
        .bind(&[site.id.as_str().into()])?
        .all()
        .await?
        .results::<Row>()?;
    let lists: Vec<Vec<String>> = rows
        .iter()
        .map(|r| catalog::decode(&r.vocabulary))
        .collect();
    let merged = catalog::encode(&catalog::merge_terms(lists.iter().map(Vec::as_slice)));
    let changed = db
        .prepare("UPDATE sites SET catalog = ?2 WHERE id = ?1 AND catalog <> ?2 RETURNING id")
        .bind(&[site.id.as_str().into(), merged.as_str().into()])?
        .all()
        .await?
        .results::<serde_json::Value>()?;
    if !changed.is_empty() {
        let hashes = [site.public_key_hash.as_str(), site.secret_key_hash.as_str()];
        super::d1_sites::uncache(&env.kv("CONFIG")?, &site.id, &hashes).await;
    }
    Ok(())
}
