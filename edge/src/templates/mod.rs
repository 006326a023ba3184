//! The templates as the Worker runs them: each template's folder turns a site's settings
//! into the template's config and builds the template's own dependencies
//! (`<t>/assistant.rs`); the registry ([`SiteAssistant`]) dispatches on the site's
//! template, one line per template.

pub(crate) mod analyst;
pub(crate) mod guarded;
pub(crate) mod knowledge;
pub(crate) mod rental;
pub(crate) mod shop;

mod registry;

pub(crate) use registry::{SiteAssistant, SiteTemplates, turn_context};
