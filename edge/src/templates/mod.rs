//! Each template's edge code, one folder per template: its settings (`<t>/settings.rs`,
//! [`Settings`]) turned into its config and its own dependencies (`<t>/assistant.rs`,
//! which also implements the template's [`TemplateHooks`]), its admin and seed routes (its
//! own table, `<t>/routes.rs`) and the D1 tables only it uses.
//!
//! This file is the registry, the one place outside a template's folder that names it: its
//! `mod` line and one line in [`registry!`], which expands into the template's variant of
//! [`SiteAssistant`], its settings' key in a site's config and body (when it has settings),
//! its route table's place in [`Route`] (after the Worker's own, [`crate::router`]) and the
//! dispatch of its hooks.

#[macro_use]
mod registry;

// Declared here, not by the macro, so that `cargo fmt` reaches the templates' files.
pub(crate) mod analyst;
pub(crate) mod guarded;
pub(crate) mod knowledge;
pub(crate) mod rental;
pub(crate) mod shop;

pub(crate) use registry::{Settings, SiteTemplates, TemplateHooks, openai_model_id, turn_context};

registry! {
    Shop => shop,
    Analyst => analyst { analyst::settings::AnalystSettings },
    Rental => rental { rental::settings::RentalSettings },
    Knowledge => knowledge { knowledge::settings::KnowledgeSettings },
    Guarded => guarded { guarded::settings::GuardedSettings },
}

/// `guarded`'s seed JSON-RPC methods, which the shared MCP route exposes as tools.
pub(crate) use guarded::jsonrpc::call as seed_rpc_call;

/// A template's default settings (`T::default()`), built once per isolate and cloned for
/// each turn: building them parses the template's texts and prepares its keyword lists,
/// which costs more than the rest of a turn's preparation before the model is asked.
pub(crate) fn default_config<T: Default + Clone + 'static>() -> T {
    use std::any::{Any, TypeId};
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    thread_local! {
        static BUILT: RefCell<BTreeMap<TypeId, Box<dyn Any>>> = const { RefCell::new(BTreeMap::new()) };
    }
    BUILT.with(|built| {
        built
            .borrow_mut()
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()))
            .downcast_ref::<T>()
            .cloned()
            .unwrap_or_default()
    })
}
