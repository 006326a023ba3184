//! The assistant templates a site can run, as a type: [`Template`] and
//! [`TemplateChoiceError`], kept here under their old path. They are defined with the
//! templates themselves, in [`flows`](crate::flows) (the core's registry of templates).

pub use crate::flows::{Template, TemplateChoiceError};
