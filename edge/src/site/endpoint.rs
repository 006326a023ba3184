//! Which URLs the Worker may call on a site's behalf: its LLM endpoints (`llm.base_url`,
//! `llm.embed_base_url`), its SearXNG instance and a data set's `csv_url`.
//!
//! One rule for all of them, `concierge_core::outbound` (https to a public host, no
//! credentials; loopback, private and reserved hosts, and plain http to loopback, only
//! when the Worker runs with the development flag `DEV_MODE` on: `make dev` and the tests
//! set it, `wrangler.toml` has it off). URLs are parsed here with the WHATWG parser
//! `fetch` uses, so the rule judges the address the request would really go to.
//!
//! A base URL ([`check`]) also has no query or fragment (paths are appended to it). The
//! rule is checked when a site is written and again when its endpoint is used, so a value
//! stored before it is not called; a fetch that follows redirects checks every hop
//! ([`crate::bindings::outbound`]).

use concierge_core::outbound::{self, Host, Target};
use worker::Url;
use worker::{Env, url};

/// The development flag: loopback and private endpoints are allowed while it is on.
pub(crate) const DEV_FLAG: &str = "DEV_MODE";

/// Whether the Worker runs in development (`DEV_MODE` on).
pub(crate) fn development(env: &Env) -> bool {
    crate::runtime::var_on(env, DEV_FLAG)
}

/// `url` parsed and checked against the outbound rule, or why not.
pub(crate) fn target(url: &str, development: bool) -> Result<Url, &'static str> {
    let parsed =
        Url::parse(&super::ascii_host(url.trim())).map_err(|_| "must be an absolute URL")?;
    allowed(&parsed, development)?;
    Ok(parsed)
}

/// Whether the parsed `url` obeys the outbound rule.
pub(crate) fn allowed(url: &Url, development: bool) -> Result<(), &'static str> {
    let host = match url.host() {
        Some(url::Host::Domain(domain)) => Some(Host::Domain(domain)),
        Some(url::Host::Ipv4(ip)) => Some(Host::Ip(ip.into())),
        Some(url::Host::Ipv6(ip)) => Some(Host::Ip(ip.into())),
        None => None,
    };
    let target = Target {
        scheme: url.scheme(),
        host,
        credentials: !url.username().is_empty() || url.password().is_some(),
    };
    outbound::check(&target, development).map_err(outbound::Refusal::message)
}

/// Check a base URL (an endpoint paths are appended to) against the rule; the normalised
/// URL (no trailing `/`) when allowed, else why not.
pub(crate) fn check(url: &str, development: bool) -> Result<String, &'static str> {
    let parsed = target(url, development)?;
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("must not have a query or fragment");
    }
    Ok(parsed.as_str().trim_end_matches('/').to_string())
}
