//! Which LLM endpoints a site may set (`llm.base_url`, `llm.embed_base_url`).
//!
//! Production calls only `https` endpoints. Plain `http` is allowed only to a loopback
//! host (`localhost`, `127.0.0.0/8`, `[::1]`) and only when the Worker runs with the
//! development flag `DEV_MODE` on (`make dev` and the tests set it; `wrangler.toml` has it
//! off). No credentials in the URL (they would be stored and shown in the clear), and no
//! query or fragment (paths are appended to it). The rule is checked when a site is
//! written and again when its endpoint is used, so a value stored before it is not called.

use worker::Url;
use worker::{Env, url::Host};

/// The development flag: loopback `http` endpoints are allowed while it is on.
pub(crate) const DEV_FLAG: &str = "DEV_MODE";

/// Whether the Worker runs in development (`DEV_MODE` on).
pub(crate) fn development(env: &Env) -> bool {
    crate::var_on(env, DEV_FLAG)
}

/// Check `url` against the rule; the normalised URL (no trailing `/`) when allowed, else
/// why not.
pub(crate) fn check(url: &str, development: bool) -> Result<String, &'static str> {
    let parsed = Url::parse(url.trim()).map_err(|_| "must be an absolute URL")?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not carry credentials (set `llm.api_key` instead)");
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("must not have a query or fragment");
    }
    let loopback = match parsed.host() {
        Some(Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err("must have a host"),
    };
    match parsed.scheme() {
        "https" => {}
        "http" if development && loopback => {}
        "http" if development => return Err("must be https (http only to a loopback host)"),
        _ => return Err("must be https"),
    }
    Ok(parsed.as_str().trim_end_matches('/').to_string())
}
