//! The local path (`wrangler dev`): the site's vectors in its own object
//! (`site_object::vectors`, one call per write, query or delete), ranked there by cosine
//! similarity; the query's filter, order and `topK` applied here, as on Vectorize's answers.

use concierge_core::boundary::{FilterCondition, VectorMatch, VectorQuery, VectorRecord};
use concierge_core::error::{ServiceError, ServiceErrorKind};

use super::{VectorizeMatch, Vectors};
use crate::site_object::vectors::{VectorsCall, encode_vector};
use crate::site_object::{SiteCall, call_text};

impl Vectors {
    /// Sends `call` to the handle's site's object; its answer's JSON text.
    async fn local_call(&self, call: VectorsCall) -> Result<String, ServiceError> {
        call_text(&self.env, &self.site, &SiteCall::Vectors(call))
            .await
            .map_err(|e| ServiceError::new(ServiceErrorKind::Unavailable, e.to_string()))
    }

    /// Inserts or replaces `records` in the site's object, all or none.
    pub(super) async fn local_upsert(&self, records: &[VectorRecord]) -> Result<(), ServiceError> {
        let rows = records
            .iter()
            .map(|record| {
                let metadata =
                    serde_json::to_string(&record.metadata).unwrap_or_else(|_| "{}".into());
                (record.id.clone(), metadata, encode_vector(&record.values))
            })
            .collect();
        self.local_call(VectorsCall::Upsert(rows)).await.map(drop)
    }

    /// Deletes the site's vectors of `ids`, all or none.
    pub(super) async fn local_delete(&self, ids: &[&String]) -> Result<(), ServiceError> {
        let ids = ids.iter().map(|id| id.to_string()).collect();
        self.local_call(VectorsCall::Delete(ids)).await.map(drop)
    }

    /// The site's vectors `query` can match, scored: selected in its object by source and
    /// conversation (the columns the core filters on) and, for `knowledge`, by scope and
    /// department; [`VectorQuery::admit`] does the rest.
    pub(super) async fn local_candidates(
        &self,
        query: &VectorQuery,
    ) -> Result<Vec<VectorMatch>, ServiceError> {
        let text = |column: &str| query.filter.eq_str(column).map(String::from);
        // `knowledge`'s permission filter, as Vectorize applies it with `$in`: a JSON array
        // of the allowed values (an empty one matches nothing).
        let mut lists = [None, None];
        for (list, column) in lists.iter_mut().zip(["scope", "department"]) {
            let values = query.filter.conditions.iter().find_map(|c| match c {
                FilterCondition::In(key, values) if key == column => Some(values),
                _ => None,
            });
            if let Some(values) = values {
                let strings: Vec<&str> = values.iter().filter_map(|v| v.as_str()).collect();
                if strings.is_empty() {
                    return Ok(Vec::new());
                }
                *list = serde_json::to_string(&strings).ok();
            }
        }
        let [scopes, departments] = lists;
        let filter = (text("source"), text("conversation_id"), scopes, departments);
        let call = VectorsCall::Query(encode_vector(&query.vector), filter);
        let answer = self.local_call(call).await?;
        let matches: Vec<VectorizeMatch> = serde_json::from_str(&answer)
            .map_err(|e| ServiceError::new(ServiceErrorKind::Other, e.to_string()))?;
        Ok(matches
            .into_iter()
            .map(|m| VectorMatch {
                id: m.id,
                score: m.score,
                metadata: m.metadata.unwrap_or_default(),
            })
            .collect())
    }
}
