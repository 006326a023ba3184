//! Per-client and per-key-kind limits (`PUBLIC_RATE_LIMIT` 120/min per client,
//! `SITE_RATE_LIMIT` 1200/min per site for public keys, `SECRET_RATE_LIMIT` of its own).

use concierge_e2e::Worker;
use concierge_e2e::api::site_with_upstream;

use super::{secret_get, widget_config};

/// `2001:db8:39:64::<i>` and the like: `n` addresses of one `/64`, written several ways.
fn addresses_of_one_64(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 3 {
            0 => format!("2001:db8:39:64::{:x}", i + 1),
            1 => format!("2001:0db8:0039:0064:{:x}:0:0:1", i + 1),
            _ => format!("2001:db8:39:64:ffff:{:x}:abcd:1", i + 1),
        })
        .collect()
}

#[test]
fn the_addresses_of_one_ipv6_64_share_one_client_limit() {
    let worker = Worker::shared();
    let site = site_with_upstream(worker, "One /64", "http://127.0.0.1:9", false);
    // 120 a minute per client; windows align to the wall clock, so a loop may straddle one
    // rollover: 250 addresses are enough to see a refusal either way.
    let addresses = addresses_of_one_64(250);
    let mut answered = 0;
    let mut refused_at = None;
    for (i, address) in addresses.iter().enumerate() {
        match widget_config(worker, &site, address) {
            200 => answered += 1,
            429 => {
                refused_at = Some(i + 1);
                break;
            }
            other => panic!("request {} from {address}: {other}", i + 1),
        }
    }
    let refused_at = refused_at.unwrap_or_else(|| {
        panic!("{answered} requests from {answered} addresses of one /64 all answered")
    });
    assert!(refused_at <= 241, "refused only at request {refused_at}");
    // Another /64, and an IPv4 client, are other clients.
    assert_eq!(widget_config(worker, &site, "2001:db8:39:65::1"), 200);
    assert_eq!(widget_config(worker, &site, "198.51.100.39"), 200);
    // An IPv4-mapped address is its IPv4 client.
    assert_eq!(widget_config(worker, &site, "::ffff:198.51.100.40"), 200);
}

#[test]
fn visitors_using_up_the_site_ceiling_never_refuse_the_merchants_secret_key() {
    let worker = Worker::shared();
    let site = site_with_upstream(worker, "Busy visitors", "http://127.0.0.1:9", false);
    // 20 clients, each well under its own 120 a minute, until the site's ceiling for
    // visitors (1200 a minute) refuses one; at most one window rollover on the way.
    let clients: Vec<String> = (1..=20).map(|i| format!("203.0.113.{i}")).collect();
    let mut sent = 0;
    let mut ceiling_reached = false;
    while sent < 2600 {
        let client = &clients[sent % clients.len()];
        sent += 1;
        match widget_config(worker, &site, client) {
            200 => {}
            429 => {
                ceiling_reached = true;
                break;
            }
            other => panic!("request {sent}: {other}"),
        }
    }
    assert!(ceiling_reached, "{sent} visitor requests, none refused");
    // The merchant's console: its own budget.
    for path in ["/admin/site", "/admin/handoffs"] {
        let (status, body) = secret_get(worker, &site, path);
        assert_eq!(status, 200, "{path} after {sent} visitor requests: {body}");
    }
}
