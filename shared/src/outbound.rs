//! Where the Worker may send a request on a site's behalf (its LLM and embedding
//! endpoints, its SearXNG instance, a data set's `csv_url`): one rule for all of them.
//!
//! - **Scheme**: `https`. Plain `http` only in development (`DEV_MODE`), and only to a
//!   loopback host.
//! - **Host**: a public one. Loopback, private, link-local (the cloud metadata address
//!   `169.254.169.254`), shared (CGNAT), unspecified (`0.0.0.0`, which reaches the host
//!   itself), multicast, reserved and documentation addresses, however written
//!   (IPv4-mapped, NAT64 and 6to4 IPv6 forms are judged by the IPv4 address they carry),
//!   and names that only mean something inside a network (`localhost` and `*.localhost`,
//!   one-label names, `.internal`, `.local`, `.home.arpa`, …) are allowed only in
//!   development.
//! - **No credentials** in the URL.
//!
//! The caller parses the URL (the Worker with the WHATWG parser `fetch` itself uses, so
//! `http://2130706433/` and `http://0x7f.1/` arrive here as the address they are) and
//! passes its parts; the rule is pure. A public name whose DNS answer is a private address
//! is not seen here (a Worker cannot resolve names); Cloudflare's `fetch` does not reach
//! the private networks of its own hosts.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A URL's host, as the URL parser read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host<'a> {
    /// A domain name.
    Domain(&'a str),
    /// An IP address.
    Ip(IpAddr),
}

/// Which network a host is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// This machine: `localhost`, `127.0.0.0/8`, `::1`.
    Loopback,
    /// A private, link-local, shared, unspecified, multicast, reserved or documentation
    /// address, or a name that resolves only inside a network.
    Private,
    /// Anything else.
    Public,
}

/// Why a target is refused. Each message completes a sentence naming the field
/// ("`csv_url` must be https.").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not `https` (nor development `http`).
    NotHttps,
    /// `http` in development to a host that is not loopback.
    HttpNotLoopback,
    /// No host.
    NoHost,
    /// A user name or password in the URL.
    Credentials,
    /// A loopback or private host outside development.
    NotPublic,
}

impl Refusal {
    /// The rule broken, to follow the field's name.
    pub fn message(self) -> &'static str {
        match self {
            Self::NotHttps => "must be https",
            Self::HttpNotLoopback => "must be https (http only to a loopback host)",
            Self::NoHost => "must have a host",
            Self::Credentials => "must not carry credentials",
            Self::NotPublic => {
                "must be a public host (loopback, private and reserved addresses are allowed \
                 only in development)"
            }
        }
    }
}

/// The parts of a URL the rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target<'a> {
    /// The scheme, lowercase (`https`).
    pub scheme: &'a str,
    /// The host, if any.
    pub host: Option<Host<'a>>,
    /// Whether the URL has a user name or password.
    pub credentials: bool,
}

/// Whether a request may go to `target`; `development` is the Worker's `DEV_MODE`.
pub fn check(target: &Target<'_>, development: bool) -> Result<(), Refusal> {
    let http = match target.scheme {
        "https" => false,
        "http" if development => true,
        _ => return Err(Refusal::NotHttps),
    };
    if target.credentials {
        return Err(Refusal::Credentials);
    }
    let reach = reach(target.host.ok_or(Refusal::NoHost)?);
    match (http, reach) {
        (true, Reach::Loopback) | (false, Reach::Public) => Ok(()),
        (true, _) => Err(Refusal::HttpNotLoopback),
        (false, _) if development => Ok(()),
        (false, _) => Err(Refusal::NotPublic),
    }
}

/// Names that resolve only inside a network (RFC 6761, RFC 6762 appendix G, RFC 8375),
/// as suffixes.
const PRIVATE_SUFFIXES: [&str; 10] = [
    "local",
    "internal",
    "localdomain",
    "home.arpa",
    "intranet",
    "private",
    "corp",
    "home",
    "lan",
    "invalid",
];

/// Which network `host` is on.
pub fn reach(host: Host<'_>) -> Reach {
    match host {
        Host::Ip(IpAddr::V4(ip)) => reach_v4(ip),
        Host::Ip(IpAddr::V6(ip)) => reach_v6(ip),
        Host::Domain(name) => {
            let name = name.strip_suffix('.').unwrap_or(name);
            let ends = |suffix: &str| {
                name.len() > suffix.len()
                    && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
                    && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
            };
            if name.eq_ignore_ascii_case("localhost") || ends("localhost") {
                Reach::Loopback
            } else if !name.contains('.')
                || PRIVATE_SUFFIXES
                    .iter()
                    .any(|s| ends(s) || name.eq_ignore_ascii_case(s))
            {
                Reach::Private
            } else {
                Reach::Public
            }
        }
    }
}

fn reach_v4(ip: Ipv4Addr) -> Reach {
    let [a, b, c, _] = ip.octets();
    if a == 127 {
        return Reach::Loopback;
    }
    let private = a == 0                                   // "this network" (0.0.0.0 is the host)
        || a == 10                                         // private
        || (a == 100 && (64..128).contains(&b))            // shared address space (CGNAT)
        || (a == 169 && b == 254)                          // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))             // private
        || (a == 192 && b == 0 && (c == 0 || c == 2))      // IETF protocol assignments, TEST-NET-1
        || (a == 192 && b == 88 && c == 99)                // 6to4 relay anycast
        || (a == 192 && b == 168)                          // private
        || (a == 198 && (b == 18 || b == 19))              // benchmarking
        || (a == 198 && b == 51 && c == 100)               // TEST-NET-2
        || (a == 203 && b == 0 && c == 113)                // TEST-NET-3
        || a >= 224; // multicast, reserved, broadcast
    if private {
        Reach::Private
    } else {
        Reach::Public
    }
}

fn reach_v6(ip: Ipv6Addr) -> Reach {
    let s = ip.segments();
    if ip == Ipv6Addr::LOCALHOST {
        return Reach::Loopback;
    }
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated) and NAT64
    // (64:ff9b::a.b.c.d): the IPv4 address decides.
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) && ip != Ipv6Addr::UNSPECIFIED {
        return reach_v4(v4(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return reach_v4(v4(s[6], s[7]));
    }
    // 6to4 (2002:AABB:CCDD::/48) carries an IPv4 address too.
    if s[0] == 0x2002 {
        return reach_v4(v4(s[1], s[2]));
    }
    let private = ip.is_unspecified()                      // ::
        || s[0] & 0xfe00 == 0xfc00                         // unique local fc00::/7
        || s[0] & 0xffc0 == 0xfe80                         // link-local fe80::/10
        || s[0] & 0xffc0 == 0xfec0                         // site-local fec0::/10 (deprecated)
        || s[0] & 0xff00 == 0xff00                         // multicast
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)   // local-use NAT64 64:ff9b:1::/48
        || s[..4] == [0x100, 0, 0, 0]                      // discard-only 100::/64
        || (s[0] == 0x2001 && s[1] == 0)                   // Teredo (an IPv4 peer, hidden)
        || (s[0] == 0x2001 && s[1] == 0xdb8)               // documentation
        || s[0] & 0xe000 != 0x2000; // outside global unicast 2000::/3
    if private {
        Reach::Private
    } else {
        Reach::Public
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Host<'static> {
        Host::Ip(text.parse().unwrap_or_else(|_| panic!("{text}")))
    }

    fn target<'a>(scheme: &'a str, host: Host<'a>) -> Target<'a> {
        Target {
            scheme,
            host: Some(host),
            credentials: false,
        }
    }

    #[test]
    fn hosts_are_classified_however_the_address_is_written() {
        let loopback = [
            ip("127.0.0.1"),
            ip("127.255.0.9"),
            ip("::1"),
            ip("::ffff:127.0.0.1"),
            ip("::127.0.0.1"),
            ip("64:ff9b::7f00:1"),
            ip("2002:7f00:1::"),
            Host::Domain("localhost"),
            Host::Domain("LOCALHOST."),
            Host::Domain("app.localhost"),
        ];
        for host in loopback {
            assert_eq!(reach(host), Reach::Loopback, "{host:?}");
        }
        let private = [
            ip("0.0.0.0"),
            ip("10.1.2.3"),
            ip("100.64.0.1"),
            ip("100.127.255.255"),
            ip("169.254.169.254"),
            ip("172.16.0.1"),
            ip("172.31.255.255"),
            ip("192.168.0.1"),
            ip("192.0.0.8"),
            ip("198.18.0.1"),
            ip("224.0.0.1"),
            ip("255.255.255.255"),
            ip("::"),
            ip("::ffff:10.0.0.8"),
            ip("::ffff:169.254.169.254"),
            ip("64:ff9b::a00:8"),
            ip("2002:a00:8::1"),
            ip("fc00::1"),
            ip("fd12:3456::1"),
            ip("fe80::1"),
            ip("ff02::1"),
            ip("2001:db8::1"),
            ip("2001:0:4136:e378::1"),
            Host::Domain("intranet"),
            Host::Domain("metadata.google.internal"),
            Host::Domain("printer.local"),
            Host::Domain("nas.home.arpa"),
            Host::Domain("db.corp."),
        ];
        for host in private {
            assert_eq!(reach(host), Reach::Private, "{host:?}");
        }
        let public = [
            ip("1.1.1.1"),
            ip("8.8.8.8"),
            ip("100.128.0.1"),
            ip("172.32.0.1"),
            ip("192.169.0.1"),
            ip("::ffff:8.8.8.8"),
            ip("2606:4700:4700::1111"),
            Host::Domain("api.openai.com"),
            Host::Domain("docs.google.com"),
            Host::Domain("notlocalhost.example"),
            Host::Domain("local.example.com"),
        ];
        for host in public {
            assert_eq!(reach(host), Reach::Public, "{host:?}");
        }
    }

    #[test]
    fn production_allows_https_to_public_hosts_only() {
        let public = Host::Domain("llm.example.com");
        assert_eq!(check(&target("https", public), false), Ok(()));
        for host in [
            ip("127.0.0.1"),
            ip("10.0.0.8"),
            ip("::ffff:127.0.0.1"),
            Host::Domain("localhost"),
        ] {
            assert_eq!(
                check(&target("https", host), false),
                Err(Refusal::NotPublic),
                "{host:?}"
            );
        }
        for scheme in ["http", "ftp", "file", "javascript", "gopher"] {
            assert_eq!(
                check(&target(scheme, public), false),
                Err(Refusal::NotHttps)
            );
        }
        let with_credentials = Target {
            credentials: true,
            ..target("https", public)
        };
        assert_eq!(check(&with_credentials, false), Err(Refusal::Credentials));
        let no_host = Target {
            host: None,
            ..target("https", public)
        };
        assert_eq!(check(&no_host, false), Err(Refusal::NoHost));
    }

    #[test]
    fn development_adds_private_https_and_loopback_http() {
        assert_eq!(check(&target("https", ip("10.0.0.8")), true), Ok(()));
        assert_eq!(check(&target("http", ip("127.0.0.1")), true), Ok(()));
        assert_eq!(
            check(&target("http", Host::Domain("localhost")), true),
            Ok(())
        );
        for host in [ip("10.0.0.8"), ip("0.0.0.0"), Host::Domain("example.com")] {
            assert_eq!(
                check(&target("http", host), true),
                Err(Refusal::HttpNotLoopback),
                "{host:?}"
            );
        }
        let with_credentials = Target {
            credentials: true,
            ..target("http", ip("127.0.0.1"))
        };
        assert_eq!(check(&with_credentials, true), Err(Refusal::Credentials));
        assert_eq!(
            check(&target("ftp", ip("127.0.0.1")), true),
            Err(Refusal::NotHttps)
        );
    }
}
