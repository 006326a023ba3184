//! Whether a site has indexed knowledge documents, which makes retrieval worth a query for
//! any of its conversations. The documents are the site's (shared D1), the conversation's
//! record is its object's: the answer is remembered in the isolate and in KV (stamped with
//! when D1 said it) for [`FOR_MS`], so a turn reads no D1 (issue 47), and forgotten in both
//! at once when this isolate indexes or deletes a document of the site (another isolate's
//! memory sees the change within [`FOR_MS`]).

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Deserialize;
use worker::D1Database;
use worker::kv::KvStore;

/// How long an answer is remembered.
const FOR_MS: u64 = 60_000;

/// At most this many sites remembered (the oldest answers go first).
const MAX_SITES: usize = 4096;

thread_local! {
    static KNOWN: RefCell<HashMap<String, (bool, u64)>> = RefCell::new(HashMap::new());
}

/// The KV key of `site_id`'s answer (`"1:<ms>"` or `"0:<ms>"`: the answer, and when D1
/// gave it).
fn kv_key(site_id: &str) -> String {
    format!("site-indexed:{site_id}")
}

/// Whether `site_id` has a document with vectors (`true` when the shared D1 cannot say:
/// retrieval then finds nothing, which costs a query, not an answer).
pub(crate) async fn indexed(kv: Option<&KvStore>, shared: &D1Database, site_id: &str) -> bool {
    let now = crate::runtime::now_ms();
    let known = KNOWN.with(|k| k.borrow().get(site_id).copied());
    if let Some((answer, at)) = known
        && now.saturating_sub(at) < FOR_MS
    {
        return answer;
    }
    if let Some(kv) = kv
        && let Ok(Some(text)) = kv.get(&kv_key(site_id)).text().await
        && let Some((answer, at)) = text.split_once(':')
        && let Ok(at) = at.parse::<u64>()
        && now.saturating_sub(at) < FOR_MS
    {
        let answer = answer == "1";
        remember(site_id, answer, at);
        return answer;
    }
    #[derive(Deserialize)]
    struct Row {
        indexed: f64,
    }
    let answer = match shared
        .prepare(
            "SELECT EXISTS (SELECT 1 FROM knowledge_documents WHERE site_id = ?1 \
             AND chunk_count > 0) AS indexed",
        )
        .bind(&[site_id.into()])
    {
        Ok(statement) => match statement.first::<Row>(None).await {
            Ok(row) => row.is_some_and(|r| r.indexed != 0.0),
            Err(_) => return true,
        },
        Err(_) => return true,
    };
    remember(site_id, answer, now);
    if let Some(kv) = kv
        && let Ok(put) = kv.put(&kv_key(site_id), format!("{}:{now}", u8::from(answer)))
    {
        // KV's shortest life; trusted for `FOR_MS` after D1's answer.
        let _ = put.expiration_ttl(60).execute().await;
    }
    answer
}

fn remember(site_id: &str, answer: bool, at: u64) {
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() >= MAX_SITES {
            let oldest = k
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(s, _)| s.clone());
            if let Some(oldest) = oldest {
                k.remove(&oldest);
            }
        }
        k.insert(site_id.to_owned(), (answer, at));
    });
}

/// `site_id`'s documents changed in this isolate: ask D1 again next time.
pub(crate) async fn changed(kv: Option<&KvStore>, site_id: &str) {
    KNOWN.with(|k| k.borrow_mut().remove(site_id));
    if let Some(kv) = kv {
        let _ = kv.delete(&kv_key(site_id)).await;
    }
}
