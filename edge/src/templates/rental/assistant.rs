//! `rental` on the Worker: the site's settings (`config.rental`) as a [`RentalConfig`],
//! over the site's listings (SQL validated by the `SQL_CHECK` Worker, run in the listings'
//! own object) and its roles and learned Q&A (in the site's object).

use concierge_core::flows::rental::{RentalAssistant, RentalConfig};
use worker::Env;

use super::listings::ListingsSql;
use super::settings::{self, RentalSettings};
use super::site_data::SiteRental;
use crate::error::ApiError;
use crate::site::{DEFAULT_MAX_TOKENS, Site};

/// `rental` with its dependencies.
pub(crate) type Assistant = RentalAssistant<ListingsSql, SiteRental>;

/// The site's `rental`.
pub(crate) fn build(env: &Env, site: &Site) -> Result<Assistant, ApiError> {
    let sql = ListingsSql::new(env, RentalSettings::schema_of(site));
    Ok(RentalAssistant::new(
        config(site),
        sql,
        SiteRental::new(env),
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

/// No scheduled work: each site's object ends its own idle seed sessions (its alarm).
impl crate::templates::TemplateHooks for Assistant {}
