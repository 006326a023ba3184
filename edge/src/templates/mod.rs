//! Each template's edge code, one folder per template: its settings turned into its config
//! and its own dependencies (`<t>/assistant.rs`), its admin and seed routes (the route table
//! in [`crate::router`] points at them) and what else only it uses. The registry
//! ([`SiteAssistant`]) dispatches on a site's template, one line per template.

pub(crate) mod analyst;
pub(crate) mod guarded;
pub(crate) mod knowledge;
pub(crate) mod rental;
pub(crate) mod shop;

mod registry;

pub(crate) use registry::{SiteAssistant, SiteTemplates, turn_context};
