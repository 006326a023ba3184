#![allow(clippy::unwrap_used)]

use super::*;
use alloc::format;
use alloc::string::ToString;

const SECRET: &[u8] = b"uts_6f1c0b3d9a7e4c2b8d5f0a1e3c7b9d2f4a6c8e0b1d3f5a7c9e1b3d5f7a9c0e2";
const NOW: u64 = 1_900_000_000;

fn token(claims: &str) -> String {
    sign_user_token(claims.as_bytes(), SECRET)
}

#[test]
fn a_valid_token_gives_its_claims() {
    let t = token(
        r#"{"sub":"u-1","role":"LANDLORD","permissions":["public","finance"],"department":"ops","exp":1900000060,"iat":1}"#,
    );
    let identity = verify_user_token(&t, SECRET, NOW).unwrap();
    assert_eq!(
        identity,
        UserIdentity {
            sub: "u-1".into(),
            role: Some("LANDLORD".into()),
            permissions: alloc::vec!["public".into(), "finance".into()],
            department: Some("ops".into()),
        }
    );
    let minimal = verify_user_token(&token(r#"{"sub":"u-2","exp":1900000001}"#), SECRET, NOW);
    assert_eq!(minimal.unwrap().permissions, Vec::<String>::new());
}

#[test]
fn the_format_is_what_merchants_are_told() {
    // A token built by hand from the documented format verifies.
    let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"x","exp":1900000100}"#);
    let mut signer = <HmacSha256 as Mac>::new_from_slice(SECRET).unwrap();
    signer.update(payload.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(signer.finalize().into_bytes());
    let t = format!("{payload}.{signature}");
    assert_eq!(verify_user_token(&t, SECRET, NOW).unwrap().sub, "x");
    assert_eq!(t, token(r#"{"sub":"x","exp":1900000100}"#));
}

#[test]
fn expired_tokens_are_refused() {
    let t = token(r#"{"sub":"u","exp":1900000000}"#);
    assert_eq!(verify_user_token(&t, SECRET, NOW), Err(TokenError::Expired));
    assert_eq!(verify_user_token(&t, SECRET, NOW - 1).unwrap().sub, "u");
}

#[test]
fn tampered_or_wrongly_signed_tokens_are_refused() {
    let t = token(r#"{"sub":"alice","exp":1900000100}"#);
    let (payload, signature) = t.split_once('.').unwrap();
    // Claims swapped for another user's, old signature kept.
    let forged = URL_SAFE_NO_PAD.encode(br#"{"sub":"bob","exp":1900000100}"#);
    assert_eq!(
        verify_user_token(&format!("{forged}.{signature}"), SECRET, NOW),
        Err(TokenError::BadSignature)
    );
    // One signature character changed.
    let mut bad = signature.to_string().into_bytes();
    bad[3] = if bad[3] == b'A' { b'B' } else { b'A' };
    let bad = String::from_utf8(bad).unwrap();
    assert_eq!(
        verify_user_token(&format!("{payload}.{bad}"), SECRET, NOW),
        Err(TokenError::BadSignature)
    );
    // Another secret.
    assert_eq!(
        verify_user_token(&t, b"uts_another_secret_entirely_0000000000", NOW),
        Err(TokenError::BadSignature)
    );
    // A truncated signature.
    assert_eq!(
        verify_user_token(&format!("{payload}.{}", &signature[..8]), SECRET, NOW),
        Err(TokenError::BadSignature)
    );
}

#[test]
fn malformed_tokens_are_refused() {
    for t in ["", "abc", "a.b.c", "!!!.abc", "abc.!!!"] {
        let result = verify_user_token(t, SECRET, NOW);
        assert!(
            matches!(
                result,
                Err(TokenError::Malformed | TokenError::BadSignature)
            ),
            "{t}: {result:?}"
        );
    }
    // Signed, but not the claims' JSON: checked only after the signature.
    for claims in [
        "not json",
        r#"{"exp":1900000100}"#,
        r#"{"sub":"u","exp":"1900000100"}"#,
        r#"{"sub":7,"exp":1900000100}"#,
        r#"{"sub":"u","exp":1900000100,"permissions":"all"}"#,
    ] {
        assert_eq!(
            verify_user_token(&token(claims), SECRET, NOW),
            Err(TokenError::Malformed),
            "{claims}"
        );
    }
    let long = "a".repeat(MAX_TOKEN_BYTES + 1);
    assert_eq!(
        verify_user_token(&long, SECRET, NOW),
        Err(TokenError::TooLong)
    );
}

#[test]
fn claim_shapes_and_limits() {
    let long_sub = "s".repeat(MAX_SUBJECT_CHARS + 1);
    let cases = [
        (
            r#"{"sub":"","exp":1900000100}"#.to_string(),
            ClaimError::Subject,
        ),
        (
            format!(r#"{{"sub":"{long_sub}","exp":1900000100}}"#),
            ClaimError::Subject,
        ),
        (
            r#"{"sub":"a\nb","exp":1900000100}"#.to_string(),
            ClaimError::Subject,
        ),
        (
            r#"{"sub":"u","role":"","exp":1900000100}"#.to_string(),
            ClaimError::Role,
        ),
        (
            r#"{"sub":"u","permissions":[""],"exp":1900000100}"#.to_string(),
            ClaimError::Permissions,
        ),
        (
            r#"{"sub":"u","department":"","exp":1900000100}"#.to_string(),
            ClaimError::Department,
        ),
    ];
    for (claims, expected) in cases {
        assert_eq!(
            verify_user_token(&token(&claims), SECRET, NOW),
            Err(TokenError::Claim(expected)),
            "{claims}"
        );
    }
    let many: Vec<String> = (0..=MAX_PERMISSIONS).map(|i| format!("p{i}")).collect();
    assert_eq!(
        UserIdentity::new("u".into(), None, many, None),
        Err(ClaimError::Permissions)
    );
    let at_limit = "s".repeat(MAX_SUBJECT_CHARS);
    assert!(UserIdentity::new(at_limit, None, Vec::new(), None).is_ok());
}

#[test]
fn conversations_are_reached_only_by_their_identity() {
    let alice = UserIdentity::new("alice".into(), Some("TENANT".into()), Vec::new(), None).unwrap();
    let alice_landlord =
        UserIdentity::new("alice".into(), Some("LANDLORD".into()), Vec::new(), None).unwrap();
    let bob = UserIdentity::new("bob".into(), None, Vec::new(), None).unwrap();
    assert!(may_access(None, None));
    assert!(may_access(Some(&alice), Some(&alice)));
    assert!(may_access(Some(&alice), Some(&alice_landlord)));
    assert!(!may_access(Some(&alice), Some(&bob)));
    assert!(!may_access(Some(&alice), None));
    assert!(!may_access(None, Some(&alice)));
}

#[test]
fn messages_never_echo_the_token() {
    for error in [
        TokenError::TooLong,
        TokenError::Malformed,
        TokenError::BadSignature,
        TokenError::Expired,
        TokenError::Claim(ClaimError::Subject),
    ] {
        assert!(!error.to_string().is_empty());
    }
}

#[test]
fn tokens_without_exp_or_living_longer_than_24_hours_are_refused() {
    assert_eq!(
        verify_user_token(&token(r#"{"sub":"u"}"#), SECRET, NOW),
        Err(TokenError::NoExpiry)
    );
    let furthest = NOW + MAX_TOKEN_LIFETIME_SECS + CLOCK_SKEW_SECS;
    let at = token(&format!(r#"{{"sub":"u","exp":{furthest}}}"#));
    assert_eq!(verify_user_token(&at, SECRET, NOW).unwrap().sub, "u");
    for exp in [furthest + 1, NOW + 8 * 86_400, u64::MAX] {
        let t = token(&format!(r#"{{"sub":"u","exp":{exp}}}"#));
        assert_eq!(
            verify_user_token(&t, SECRET, NOW),
            Err(TokenError::LivesTooLong),
            "{exp}"
        );
    }
    // Refused only after the signature: a forged long-lived token is a bad signature.
    let forged = format!(
        "{}.AAAA",
        URL_SAFE_NO_PAD.encode(br#"{"sub":"u","exp":99999999999}"#)
    );
    assert_eq!(
        verify_user_token(&forged, SECRET, NOW),
        Err(TokenError::BadSignature)
    );
}

#[test]
fn a_tokens_expiry_is_read_for_the_live_streams_bound() {
    let t = token(r#"{"sub":"u","exp":1900000100}"#);
    assert!(verify_user_token(&t, SECRET, NOW).is_ok());
    assert_eq!(user_token_expiry(&t), Some(1_900_000_100));
    assert_eq!(user_token_expiry(&token(r#"{"sub":"u"}"#)), None);
    assert_eq!(user_token_expiry("not a token"), None);
    assert_eq!(user_token_expiry(&"a".repeat(MAX_TOKEN_BYTES + 1)), None);
}

#[test]
fn a_user_label_is_trimmed_and_refuses_control_and_bidi_characters() {
    assert_eq!(user_label("  khach-1 \n"), Some("khach-1"));
    assert_eq!(user_label("Nguyễn Văn A"), Some("Nguyễn Văn A"));
    for bad in [
        "",
        "   ",
        "\t=HYPERLINK(\"http://x\")",
        "a\tb",
        "a\rb",
        "a\u{0}b",
        "abc\u{202E}gpj.exe",
        "a\u{2066}b",
        "a\u{200F}b",
        "a\u{85}b",
    ] {
        // Only the surrounding whitespace is trimmed: a control character inside stays.
        if bad == "\t=HYPERLINK(\"http://x\")" {
            assert_eq!(user_label(bad), Some("=HYPERLINK(\"http://x\")"));
            continue;
        }
        assert_eq!(user_label(bad), None, "{bad:?}");
    }
    let long = "x".repeat(MAX_SUBJECT_CHARS + 1);
    assert_eq!(user_label(&long), None);
    assert!(user_label(&long[1..]).is_some());
}
