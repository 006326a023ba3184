//! The retrieval query: the site's knowledge and the conversation's memory, re-ranked.

use alloc::vec::Vec;
use serde_json::Value;

use crate::boundary::{Embedder, MetadataFilter, VectorIndex, VectorMatch, VectorQuery};
use crate::conversation::Scope;
use crate::error::Error;
use crate::normalize::{for_each_word, for_each_word_hash, word_hash};

use super::{Passage, PassageSource, RetrievalOptions};

/// The top passages for `query`: the site's knowledge and this conversation's memory,
/// re-ranked. Chunks of messages in `skip_message_ids` (already in the prompt's history)
/// are left out.
pub async fn retrieve<E: Embedder, V: VectorIndex>(
    embedder: &E,
    index: &V,
    scope: Scope<'_>,
    query: &str,
    options: &RetrievalOptions,
    skip_message_ids: &[&str],
) -> Result<Vec<Passage>, Error> {
    let vector = embedder
        .embed(&[query])
        .await
        .map_err(Error::Embedder)?
        .into_iter()
        .next()
        .unwrap_or_default();
    let knowledge = VectorQuery {
        vector,
        top_k: options.candidates,
        filter: MetadataFilter::new()
            .eq("site_id", scope.site_id)
            .eq("source", "knowledge"),
    };
    let mut matches = index.query(&knowledge).await.map_err(Error::VectorIndex)?;
    let memory = VectorQuery {
        filter: MetadataFilter::new()
            .eq("site_id", scope.site_id)
            .eq("source", "conversation")
            .eq("conversation_id", scope.conversation_id),
        ..knowledge
    };
    matches.extend(index.query(&memory).await.map_err(Error::VectorIndex)?);
    Ok(rerank(query, matches, options, skip_message_ids))
}

/// Re-ranks matches by vector score and word overlap with the query; keeps the best
/// `options.top_k` distinct passages.
pub fn rerank(
    query: &str,
    matches: Vec<VectorMatch>,
    options: &RetrievalOptions,
    skip: &[&str],
) -> Vec<Passage> {
    // Distinct query words (two characters or more), as hashes.
    let mut query_words: Vec<u64> = Vec::new();
    for_each_word(query, |word| {
        let hash = word_hash(word.folded);
        if word.folded.chars().nth(1).is_some() && !query_words.contains(&hash) {
            query_words.push(hash);
        }
    });
    let mut passages: Vec<Passage> = Vec::new();
    for mut m in matches {
        let take =
            |metadata: &mut crate::conversation::Metadata, key: &str| match metadata.remove(key) {
                Some(Value::String(text)) if !text.is_empty() => Some(text),
                _ => None,
            };
        let Some(text) = take(&mut m.metadata, "text") else {
            continue;
        };
        let message_id = m.metadata.get("message_id").and_then(Value::as_str);
        if message_id.is_some_and(|id| skip.contains(&id)) || passages.iter().any(|p| p.id == m.id)
        {
            continue;
        }
        let overlap = if query_words.is_empty() {
            0.0
        } else {
            // Which query words occur in the passage: one bit per query word (words past
            // the 64th do not count).
            let mut seen = 0u64;
            for_each_word_hash(&text, |hash| {
                if let Some(i) = query_words.iter().take(64).position(|w| *w == hash) {
                    seen |= 1 << i;
                }
            });
            seen.count_ones() as f32 / query_words.len() as f32
        };
        let score = 0.75 * m.score + 0.25 * overlap;
        if score < options.min_score {
            continue;
        }
        let source = match m.metadata.get("source").and_then(Value::as_str) {
            Some("knowledge") => PassageSource::Knowledge,
            _ => PassageSource::Conversation,
        };
        let title = take(&mut m.metadata, "title");
        passages.push(Passage {
            id: m.id,
            source,
            title,
            text,
            score,
        });
    }
    passages.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    passages.truncate(options.top_k);
    passages
}
