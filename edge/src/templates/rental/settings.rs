//! `rental`'s settings in a site's config (`config.rental`: its listings schema, role
//! labels, row cap), replaced whole by a site body's `rental`.

use concierge_core::flows::rental::schema::RentalSchema;
use serde::{Deserialize, Serialize};
use worker::Env;

use crate::error::ApiError;
use crate::site::Site;
use crate::templates::Settings;

/// The settings' key in a site's config and body.
const KEY: &str = "rental";

/// `rental`'s settings in a site's config; unset fields keep the template's defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct RentalSettings {
    /// The logical listings schema (entities, paths, columns); default: rooms, posts,
    /// room-seeking posts (TEMPLATES.md §2.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<RentalSchema>,
    /// Role labels at the start of answers (default on, as the seed says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show_role_label: Option<bool>,
    /// Rows one query may return (default 100, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_cap: Option<u32>,
}

impl RentalSettings {
    /// Checks merchant-supplied settings.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(schema) = &self.schema {
            schema.check()?;
        }
        if self.row_cap.is_some_and(|cap| cap == 0 || cap > 500) {
            return Err("`rental.row_cap` must be 1 to 500.".into());
        }
        Ok(())
    }

    /// The site's listings schema.
    pub(crate) fn schema_of(site: &Site) -> RentalSchema {
        of(site).and_then(|r| r.schema).unwrap_or_default()
    }
}

impl Settings for RentalSettings {
    type Patch = Self;

    fn apply(
        patch: &Self,
        _env: &Env,
        _site_id: &str,
        _old: Option<Self>,
    ) -> Result<Self, ApiError> {
        patch.check().map_err(ApiError::bad_request)?;
        Ok(patch.clone())
    }
}

/// The site's `rental` settings, if it set any.
pub(crate) fn of(site: &Site) -> Option<RentalSettings> {
    site.config.templates.get(KEY)
}
