//! The Model Context Protocol server's decisions, without I/O: the Worker's `/mcp`
//! endpoint (Streamable HTTP, JSON-RPC 2.0) reads and writes bytes and runs the tools;
//! this module says what a body means and what to answer.
//!
//! - [`rpc`]: JSON-RPC 2.0 envelopes (single messages and batches), the method names the
//!   server knows, and the response and error objects;
//! - [`session`]: session ids that verify without storage (HMAC-signed, bound to the site,
//!   carrying the negotiated protocol version and an expiry);
//! - [`tools`]: the tools a site's key reaches (every template's, plus its template's own,
//!   which the template declares in its folder: [`tools::TemplateTools`]), their JSON
//!   Schemas, argument checking, and tool results.
//!
//! Protocol versions: the initialize handshake's versions, [`VERSIONS`]. A client asking
//! for one of them gets it; any other request (an older or a newer revision, or one without
//! the handshake) gets [`LATEST_VERSION`], and the client decides whether to go on.
//!
//! ```
//! use concierge_core::mcp::{self, rpc};
//!
//! assert_eq!(mcp::negotiate("2025-06-18"), "2025-06-18");
//! assert_eq!(mcp::negotiate("2026-07-28"), mcp::LATEST_VERSION);
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#;
//! let rpc::Body::Single(Ok(rpc::Message::Request { method, .. })) = rpc::parse(body).unwrap()
//! else { panic!() };
//! assert_eq!(rpc::Method::of(&method), rpc::Method::Unknown);
//! ```

mod call;
pub mod rpc;
pub mod session;
pub mod tools;

use serde_json::{Value, json};

/// The protocol versions this server speaks through the initialize handshake, oldest
/// first.
pub const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The newest of [`VERSIONS`]: the answer to a request for a version not supported.
pub const LATEST_VERSION: &str = "2025-11-25";

/// The supported version equal to `version`, as a static string.
pub fn supported(version: &str) -> Option<&'static str> {
    VERSIONS.iter().copied().find(|v| *v == version)
}

/// The version to answer an `initialize` asking for `requested`: the same when supported,
/// else [`LATEST_VERSION`].
pub fn negotiate(requested: &str) -> &'static str {
    supported(requested).unwrap_or(LATEST_VERSION)
}

/// Whether `version` lets a client send JSON-RPC batches (only 2025-03-26 did: 2025-06-18
/// removed them).
pub fn batches_allowed(version: &str) -> bool {
    version == "2025-03-26"
}

/// Most messages one batch may hold. Each message counts against the caller's rate limits
/// as a request of its own; a longer batch is refused whole, before any of it runs.
pub const MAX_BATCH: usize = 20;

/// The server's description in an `initialize` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerInfo<'a> {
    /// The implementation's name.
    pub name: &'a str,
    /// A human-readable title (the site's name).
    pub title: &'a str,
    /// The implementation's version.
    pub version: &'a str,
    /// What the client's model should know about the tools.
    pub instructions: &'a str,
}

/// The `initialize` result for `version`: the server offers tools only (its tool list
/// never changes during a session), and nothing server-initiated.
pub fn initialize_result(version: &str, info: &ServerInfo<'_>) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": info.name, "title": info.title, "version": info.version},
        "instructions": info.instructions,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_supported_version_is_answered_with_itself_and_any_other_with_the_latest() {
        for version in VERSIONS {
            assert_eq!(negotiate(version), version);
        }
        for other in ["2026-07-28", "2024-10-07", "", "zzz"] {
            assert_eq!(negotiate(other), LATEST_VERSION);
        }
        assert_eq!(VERSIONS.last().copied(), Some(LATEST_VERSION));
    }

    #[test]
    fn only_2025_03_26_allows_batches() {
        let allowed: alloc::vec::Vec<&str> = VERSIONS
            .iter()
            .copied()
            .filter(|v| batches_allowed(v))
            .collect();
        assert_eq!(allowed, ["2025-03-26"]);
    }

    #[test]
    fn the_initialize_result_offers_tools() {
        let info = ServerInfo {
            name: "concierge",
            title: "Shop",
            version: "1.0.0",
            instructions: "Use the tools.",
        };
        let result = initialize_result("2025-06-18", &info);
        assert_eq!(result["protocolVersion"], "2025-06-18");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], false);
        assert_eq!(result["serverInfo"]["name"], "concierge");
        assert!(result["capabilities"].get("resources").is_none());
    }
}
