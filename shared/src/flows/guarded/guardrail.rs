//! Step 4, the guardrail: "is the question about the domain?", answered YES or NO by a small
//! model, parsed rejection-first.

use alloc::string::String;
use alloc::vec::Vec;

/// The guardrail's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// In the domain: the question is stored and answered.
    Passed,
    /// Off the domain: refused, nothing stored.
    Rejected,
}

impl Verdict {
    /// `PASSED` / `REJECTED`, as the seed's log line prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "PASSED",
            Self::Rejected => "REJECTED",
        }
    }
}

/// Parses the guardrail model's reply (seed: "Check 'NO' trước 'YES'", rejection first).
///
/// The reply is upper-cased and split into letter tokens: any `NO` or `KHÔNG` token
/// rejects; otherwise any `YES` or `CÓ` token passes; anything else rejects (fail closed).
/// Tokens, not substrings: "KNOWLEDGE" or "NOT" do not reject by containing "NO".
///
/// ```
/// use concierge_core::flows::guarded::{Verdict, parse_verdict};
/// assert_eq!(parse_verdict("YES"), Verdict::Passed);
/// assert_eq!(parse_verdict(" yes."), Verdict::Passed);
/// assert_eq!(parse_verdict("NO"), Verdict::Rejected);
/// assert_eq!(parse_verdict("YES or NO"), Verdict::Rejected);
/// assert_eq!(parse_verdict("Có"), Verdict::Passed);
/// assert_eq!(parse_verdict("KNOWLEDGE: YES"), Verdict::Passed);
/// assert_eq!(parse_verdict("maybe"), Verdict::Rejected);
/// ```
pub fn parse_verdict(reply: &str) -> Verdict {
    let upper = reply.to_uppercase();
    let tokens: Vec<&str> = upper
        .split(|c: char| !c.is_alphabetic())
        .filter(|token| !token.is_empty())
        .collect();
    if tokens.iter().any(|t| *t == "NO" || *t == "KHÔNG") {
        Verdict::Rejected
    } else if tokens.iter().any(|t| *t == "YES" || *t == "CÓ") {
        Verdict::Passed
    } else {
        Verdict::Rejected
    }
}

/// The domain name as prose: lower case (`NHA KHOA` → `nha khoa`).
pub fn prose_domain(domain: &str) -> String {
    domain.trim().to_lowercase()
}
