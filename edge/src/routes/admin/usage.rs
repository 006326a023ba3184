//! `GET /admin/usage`: what the site holds (in the shared D1 and its own object) against its caps
//! ([`Caps`]), for the console's Storage card and a merchant's own checks.

use concierge_core::flows::rental::schema::MAX_ROWS_PER_TABLE;
use concierge_core::template::Template;
use serde_json::{Value, json};
use worker::{Env, Response};

use crate::auth::SecretCaller;
use crate::bindings::d1_caps;
use crate::error::ApiError;
use crate::site::caps::Caps;
use crate::site_object::data::SiteData;
use crate::site_object::warranty::SiteWarranty;
use crate::templates::rental::{listings, settings::RentalSettings};

fn item(kind: &str, used: u64, cap: u64) -> Value {
    json!({"kind": kind, "used": used, "cap": cap})
}

/// `{"usage": [{"kind", "used", "cap", "entity"?}]}`: the kinds the site's template writes,
/// and any other kind the site still holds (a site that changed template). Kinds:
/// `data_sets`, `data_rows`, `data_bytes`, `documents`, `document_bytes`,
/// `warranty_records`, and `listings` once per rental entity.
pub(crate) async fn usage(env: &Env, caller: SecretCaller) -> Result<Response, ApiError> {
    let site = &caller.site;
    let caps = Caps::of(env);
    let mut used = d1_caps::usage(&env.d1("DB")?, &site.id)
        .await
        .map_err(ApiError::store)?;
    used.warranty_records = SiteWarranty::new(env).count(&site.id).await?;
    (used.data_sets, used.data_rows, used.data_bytes) =
        SiteData::new(env, &site.id).usage().await?;
    let template = site.template;
    let mut items = Vec::new();
    if template == Template::Analyst || used.data_sets > 0 {
        items.push(item("data_sets", used.data_sets, caps.data_sets));
        items.push(item("data_rows", used.data_rows, caps.data_rows));
        items.push(item("data_bytes", used.data_bytes, caps.data_bytes));
    }
    if template == Template::Knowledge || used.documents > 0 {
        items.push(item("documents", used.documents, caps.documents));
        items.push(item(
            "document_bytes",
            used.document_bytes,
            caps.document_bytes,
        ));
    }
    if template == Template::Shop || used.warranty_records > 0 {
        items.push(item(
            "warranty_records",
            used.warranty_records,
            caps.warranty_records,
        ));
    }
    if template == Template::Rental {
        let counts = listings::counts(env, &site.id).await?;
        for entity in RentalSettings::schema_of(site).entities {
            let n = counts
                .iter()
                .find(|(e, _)| *e == entity.entity)
                .map_or(0, |(_, n)| *n);
            let mut listing = item("listings", n, MAX_ROWS_PER_TABLE);
            listing["entity"] = json!(entity.table());
            items.push(listing);
        }
    }
    Ok(Response::from_json(&json!({"usage": items}))?)
}
