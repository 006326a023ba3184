//! A site's local time, from the runtime's `Intl.DateTimeFormat` (workerd carries the IANA
//! time zone database; Rust here does not).

use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
extern "C" {
    /// `Intl.DateTimeFormat`.
    #[wasm_bindgen(js_namespace = Intl)]
    type DateTimeFormat;

    /// `new Intl.DateTimeFormat(locale, options)`: throws a `RangeError` for an unknown
    /// `timeZone`.
    #[wasm_bindgen(constructor, catch, js_namespace = Intl)]
    fn new(locale: &str, options: &JsValue) -> Result<DateTimeFormat, JsValue>;

    #[wasm_bindgen(method, js_name = formatToParts)]
    fn format_to_parts(this: &DateTimeFormat, date: f64) -> js_sys::Array;

    #[wasm_bindgen(method, js_name = resolvedOptions)]
    fn resolved_options(this: &DateTimeFormat) -> JsValue;
}

/// The longest time zone name accepted.
const MAX_ZONE_CHARS: usize = 64;

/// A formatter for `zone` giving the weekday, hour (00–23) and minute, or `None` when the
/// runtime does not know the zone.
fn formatter(zone: &str) -> Option<DateTimeFormat> {
    if zone.is_empty()
        || zone.len() > MAX_ZONE_CHARS
        || !zone
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'+'))
    {
        return None;
    }
    let options = js_sys::Object::new();
    for (key, value) in [
        ("timeZone", zone),
        ("weekday", "short"),
        ("hour", "2-digit"),
        ("minute", "2-digit"),
        ("hourCycle", "h23"),
    ] {
        js_sys::Reflect::set(&options, &key.into(), &value.into()).ok()?;
    }
    DateTimeFormat::new("en-US", &options).ok()
}

/// Whether `zone` is a time zone the runtime knows (`Asia/Ho_Chi_Minh`, `UTC`; IANA
/// names are matched without regard to case).
pub(crate) fn known_zone(zone: &str) -> bool {
    formatter(zone).is_some()
}

/// The local weekday (1 = Monday … 7 = Sunday) and minutes after midnight in `zone` at
/// `now_ms` (Unix milliseconds); `None` when the zone is unknown.
pub(crate) fn weekday_minutes(zone: &str, now_ms: u64) -> Option<(u8, u16)> {
    let format = formatter(zone)?;
    let (mut weekday, mut hour, mut minute) = (None, None, None);
    for part in format.format_to_parts(now_ms as f64).iter() {
        let field = |name: &str| {
            js_sys::Reflect::get(&part, &name.into())
                .ok()
                .and_then(|v| v.as_string())
        };
        let (Some(kind), Some(value)) = (field("type"), field("value")) else {
            continue;
        };
        match kind.as_str() {
            "weekday" => {
                weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
                    .iter()
                    .position(|d| *d == value)
                    .map(|i| i as u8 + 1);
            }
            // Some runtimes write midnight as 24 even with `h23`.
            "hour" => hour = value.parse::<u16>().ok().map(|h| h % 24),
            "minute" => minute = value.parse::<u16>().ok(),
            _ => {}
        }
    }
    Some((weekday?, hour? * 60 + minute?))
}
