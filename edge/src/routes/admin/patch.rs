//! Reading a site body ([`SitePatch`]) as a derived `Deserialize` with
//! `deny_unknown_fields` would — same fields, same errors (an unknown field names every
//! field it expected; a field given twice is refused) — except that each template's
//! settings are read by the template's own type, under the template's name, through the
//! registry ([`templates::SettingsPatch`]).

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};

use super::SitePatch;
use crate::templates::{self, SETTINGS_KEYS};

/// The body's own fields before the templates' settings.
const FIRST: [&str; 8] = [
    "name",
    "template",
    "persona",
    "language",
    "llm",
    "allowed_origins",
    "starter_prompts",
    "title",
];

/// The body's own fields after the templates' settings.
const LAST: [&str; 1] = ["handoff"];

/// How many fields a body may have.
const COUNT: usize = FIRST.len() + SETTINGS_KEYS.len() + LAST.len();

/// Every field a body may have, in order.
static FIELDS: [&str; COUNT] = fields();

const fn fields() -> [&'static str; COUNT] {
    let mut out = [""; COUNT];
    let mut i = 0;
    while i < FIRST.len() {
        out[i] = FIRST[i];
        i += 1;
    }
    let mut j = 0;
    while j < SETTINGS_KEYS.len() {
        out[i + j] = SETTINGS_KEYS[j];
        j += 1;
    }
    let mut k = 0;
    while k < LAST.len() {
        out[i + j + k] = LAST[k];
        k += 1;
    }
    out
}

impl<'de> Deserialize<'de> for SitePatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("SitePatch", &FIELDS, PatchVisitor)
    }
}

struct PatchVisitor;

/// Read `key`'s value into `slot`, unless `key` was read already.
fn once<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut Option<T>,
    key: &'static str,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(A::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de> Visitor<'de> for PatchVisitor {
    type Value = SitePatch;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("struct SitePatch")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SitePatch, A::Error> {
        let (mut name, mut template, mut persona, mut language) = (None, None, None, None);
        let (mut llm, mut origins, mut prompts, mut title) = (None, None, None, None);
        let mut handoff = None;
        let mut settings = templates::SettingsPatch::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => once(&mut name, "name", &mut map)?,
                "template" => once(&mut template, "template", &mut map)?,
                "persona" => once(&mut persona, "persona", &mut map)?,
                "language" => once(&mut language, "language", &mut map)?,
                "llm" => once(&mut llm, "llm", &mut map)?,
                "allowed_origins" => once(&mut origins, "allowed_origins", &mut map)?,
                "starter_prompts" => once(&mut prompts, "starter_prompts", &mut map)?,
                "title" => once(&mut title, "title", &mut map)?,
                "handoff" => once(&mut handoff, "handoff", &mut map)?,
                other => {
                    if !settings.read(other, &mut map)? {
                        return Err(A::Error::unknown_field(other, &FIELDS));
                    }
                }
            }
        }
        Ok(SitePatch {
            name: name.flatten(),
            template: template.flatten(),
            persona: persona.flatten(),
            language: language.flatten(),
            llm: llm.flatten(),
            allowed_origins: origins.flatten(),
            starter_prompts: prompts.flatten(),
            title: title.flatten(),
            handoff: handoff.flatten(),
            templates: settings,
        })
    }
}
