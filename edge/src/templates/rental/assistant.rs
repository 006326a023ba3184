//! `rental` on the Worker: the site's settings (`config.rental`) as a [`RentalConfig`],
//! over the site's listings (SQL validated by the `SQL_CHECK` Worker) and its roles and
//! learned Q&A in D1.

use concierge_core::flows::rental::{RentalAssistant, RentalConfig};
use worker::Env;

use super::d1_listings::ListingsSql;
use super::d1_rental::D1Rental;
use super::settings::{self, RentalSettings};
use crate::error::ApiError;
use crate::site::{DEFAULT_MAX_TOKENS, Site};

/// `rental` with its dependencies.
pub(crate) type Assistant = RentalAssistant<ListingsSql, D1Rental>;

/// The site's `rental`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    let sql = ListingsSql::new(env, RentalSettings::schema_of(site));
    Ok(RentalAssistant::new(
        config(site),
        sql,
        D1Rental::new(env.d1("DB")?),
    ))
}

/// `rental`'s settings: the template's defaults with the site's schema, labels, row cap
/// and answer token cap.
fn config(site: &Site) -> RentalConfig {
    let mut config: RentalConfig = crate::templates::default_config();
    config.turn.max_tokens = Some(site.config.llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS));
    config.schema = RentalSettings::schema_of(site);
    if let Some(settings) = settings::of(site) {
        config.show_role_label = settings.show_role_label.unwrap_or(true);
        if let Some(cap) = settings.row_cap {
            config.row_cap = cap as usize;
        }
    }
    config
}

impl crate::templates::TemplateHooks for Assistant {
    /// The seed endpoint's idle sessions (over 30 minutes), deleted with their
    /// conversations.
    async fn scheduled(env: &Env) -> Option<serde_json::Value> {
        Some(match super::chat::cleanup(env).await {
            Ok(deleted) => {
                serde_json::json!({"level": "info", "msg": "rental sessions cleaned", "deleted": deleted})
            }
            Err(error) => {
                serde_json::json!({"level": "error", "msg": "rental session cleanup failed", "error": error.chain()})
            }
        })
    }
}
