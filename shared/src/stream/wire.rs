//! Serde helpers shared by the wire types.

use alloc::borrow::Cow;

use serde::{Deserialize, Deserializer};

/// Deserializes an optional string, borrowing it from the input when it has no escapes.
///
/// serde borrows a `Cow<str>` field only when it is not wrapped, so `Option<Cow<str>>`
/// fields go through this (with `#[serde(default, borrow, deserialize_with = ...)]`).
pub(crate) fn opt_cow<'de: 'a, 'a, D>(deserializer: D) -> Result<Option<Cow<'a, str>>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Borrowed<'a>>::deserialize(deserializer)?.map(|b| b.0))
}

/// Deserializes a string field whose `null` means the same as empty.
pub(crate) fn cow_or_null<'de: 'a, 'a, D>(deserializer: D) -> Result<Cow<'a, str>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(opt_cow(deserializer)?.unwrap_or(Cow::Borrowed("")))
}

/// Deserializes an optional number as `f32`, reading non-finite results (out of `f32` range)
/// as absent, so that what was decoded can be encoded again (JSON has no infinity).
pub(crate) fn finite_f32<'de, D>(deserializer: D) -> Result<Option<f32>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Option::<f32>::deserialize(deserializer)?.filter(|f| f.is_finite()))
}

/// Deserializes a field whose `null` means the same as its default (e.g. an empty list).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
