//! Who a client is for per-client limits: the key its requests are counted under.
//!
//! An IPv4 client is its address. An IPv6 client is its `/64`: one subscriber usually
//! holds a whole `/64` (often much more), so keying on the full address would give one
//! client 2^64 separate budgets. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the
//! IPv4 client it carries. Brackets (`[2001:db8::1]`) and a zone (`fe80::1%eth0`) are
//! accepted and dropped.
//!
//! ```
//! use concierge_core::client::client_key;
//! assert_eq!(client_key("203.0.113.7").as_deref(), Some("203.0.113.7"));
//! assert_eq!(client_key("2001:db8:1:2:aa::1").as_deref(), Some("2001:db8:1:2::/64"));
//! assert_eq!(client_key("::ffff:203.0.113.7").as_deref(), Some("203.0.113.7"));
//! assert_eq!(client_key("not an address"), None);
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use core::net::{IpAddr, Ipv6Addr};

/// The key a client at `address` (as `CF-Connecting-IP` gives it) is limited under; `None`
/// when `address` is not an IP address.
pub fn client_key(address: &str) -> Option<String> {
    let text = address.trim();
    let text = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    let text = text.split_once('%').map_or(text, |(ip, _zone)| ip);
    match text.parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => Some(v4.to_string()),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return Some(v4.to_string());
            }
            let s = v6.segments();
            let prefix = Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
            Some(format!("{prefix}/64"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::client_key;

    fn key(address: &str) -> Option<String> {
        client_key(address)
    }

    #[test]
    fn an_ipv4_client_is_its_address() {
        assert_eq!(key("198.51.100.20").as_deref(), Some("198.51.100.20"));
        assert_eq!(key(" 198.51.100.20 ").as_deref(), Some("198.51.100.20"));
        assert_ne!(key("198.51.100.20"), key("198.51.100.21"));
    }

    #[test]
    fn an_ipv6_client_is_its_64_however_the_address_is_written() {
        let expected = Some("2001:db8:abcd:12::/64".to_string());
        for written in [
            "2001:db8:abcd:12::1",
            "2001:0db8:abcd:0012:0000:0000:0000:0001",
            "2001:DB8:ABCD:12:ffff:ffff:ffff:ffff",
            "2001:db8:abcd:12:1:2:3:4",
            "[2001:db8:abcd:12::99]",
            "2001:db8:abcd:12::7%eth0",
            "2001:db8:abcd:12::",
        ] {
            assert_eq!(key(written), expected, "{written}");
        }
        // The next /64 is another client.
        assert_eq!(
            key("2001:db8:abcd:13::1").as_deref(),
            Some("2001:db8:abcd:13::/64")
        );
        assert_eq!(key("::1").as_deref(), Some("::/64"));
    }

    #[test]
    fn an_ipv4_mapped_address_is_the_ipv4_client() {
        assert_eq!(
            key("::ffff:198.51.100.20").as_deref(),
            Some("198.51.100.20")
        );
        assert_eq!(key("::ffff:c633:6414").as_deref(), Some("198.51.100.20"));
        assert_eq!(
            key("[::ffff:198.51.100.20]").as_deref(),
            Some("198.51.100.20")
        );
    }

    #[test]
    fn what_is_not_an_address_has_no_key() {
        for text in [
            "",
            "  ",
            "localhost",
            "198.51.100",
            "2001:db8::1::2",
            "1.2.3.4:80",
            "[]",
        ] {
            assert_eq!(key(text), None, "{text:?}");
        }
    }
}
