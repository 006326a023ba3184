//! Property tests of `knowledge`'s conflict resolution (seed 003 §4): the order agents
//! finish in never changes the outcome; a private, newer document beats an older public
//! one under the seed's weights; ties are broken deterministically; and the seed's worked
//! example gives confidence 0.88 and 2 resolved conflicts.
#![allow(clippy::unwrap_used)]

use concierge_core::flows::knowledge::{
    AgentAnswer, ConflictRules, EvidenceItem, parse_iso_ms, resolve,
};
use proptest::prelude::*;

/// 2025-09-09T09:00:00Z, the seed trace's time.
fn seed_now() -> u64 {
    parse_iso_ms("2025-09-09T09:00:00Z").unwrap() as u64
}

fn evidence(url: &str, at: &str, scope: &str, relevance: f64, department: &str) -> EvidenceItem {
    EvidenceItem {
        url: url.into(),
        created_at: Some(at.into()),
        source_type: "rag".into(),
        scope: scope.into(),
        relevance_score: relevance,
        document_id: url.rsplit('/').next().unwrap().into(),
        department: Some(department.into()),
        title: None,
    }
}

fn answer(agent: &str, node: &str, text: &str, evidence: Vec<EvidenceItem>) -> AgentAnswer {
    AgentAnswer {
        agent: agent.into(),
        tool: "rag_tool".into(),
        node_id: node.into(),
        index: None,
        query: "q".into(),
        context: String::new(),
        answer: text.into(),
        evidence,
    }
}

#[test]
fn the_seed_example_resolves_two_conflicts_with_confidence_088() {
    let answers = vec![
        answer(
            "general",
            "general#rag",
            "4 giá trị",
            vec![evidence(
                "https://intra.company/about/core-values",
                "2025-06-10T08:00:00Z",
                "private",
                0.95,
                "general",
            )],
        ),
        answer(
            "hr",
            "hr#rag:1",
            "KPI",
            vec![evidence(
                "https://intra.company/policies/punctuality",
                "2025-08-20T03:12:45Z",
                "private",
                0.92,
                "hr",
            )],
        ),
        answer(
            "hr",
            "hr#rag:2",
            "khiển trách",
            vec![evidence(
                "https://intra.company/hr/discipline",
                "2025-07-02T10:05:00Z",
                "private",
                0.88,
                "hr",
            )],
        ),
    ];
    let resolution = resolve(&answers, &ConflictRules::default(), 0.1, seed_now());
    assert_eq!(resolution.resolved_conflicts, 2);
    assert_eq!(resolution.confidence_score, 0.88);
    let scores: Vec<f64> = resolution
        .ranked
        .iter()
        .map(|(_, s)| (s * 10_000.0).round() / 10_000.0)
        .collect();
    assert_eq!(scores, [0.93, 0.87, 0.8375]);
    assert_eq!(resolution.ranked[0].0.node_id, "hr#rag:1");
    assert_eq!(resolution.evidence.len(), 3);
}

fn arb_answer() -> impl Strategy<Value = AgentAnswer> {
    let agents = prop_oneof![Just("hr"), Just("it"), Just("general")];
    let scopes = prop_oneof![
        Just("public"),
        Just("internal"),
        Just("private"),
        Just("unknown")
    ];
    let departments = prop_oneof![Just("hr"), Just("it"), Just("general")];
    let dates = prop_oneof![
        Just("2025-09-01T00:00:00Z"),
        Just("2025-07-01T00:00:00Z"),
        Just("2024-01-01T00:00:00Z"),
        Just("garbage")
    ];
    let evidence = (0u8..6, scopes, departments, dates, 0u8..=100).prop_map(
        |(doc, scope, department, at, relevance)| {
            evidence(
                &format!("https://kb/doc{doc}"),
                at,
                scope,
                f64::from(relevance) / 100.0,
                department,
            )
        },
    );
    (
        agents,
        1u8..4,
        prop::collection::vec(evidence, 0..3),
        "[a-c]{1,2}",
    )
        .prop_map(|(agent, n, evidence, text)| {
            answer(agent, &format!("{agent}#rag:{n}"), &text, evidence)
        })
}

proptest! {
    #[test]
    fn the_order_agents_finish_in_does_not_change_the_outcome(
        answers in prop::collection::vec(arb_answer(), 0..6),
        seed in any::<u64>(),
    ) {
        let rules = ConflictRules::default();
        let expected = resolve(&answers, &rules, 0.1, seed_now());
        let mut shuffled = answers.clone();
        // A deterministic shuffle from the seed.
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let actual = resolve(&shuffled, &rules, 0.1, seed_now());
        prop_assert_eq!(actual, expected);
    }

    #[test]
    fn a_private_newer_document_beats_an_older_public_one(
        relevance in 0u8..=100,
        newer_days in 0u64..30,
        older_days in 91u64..2000,
        agent in prop_oneof![Just("hr"), Just("it"), Just("general")],
        department in prop_oneof![Just("hr"), Just("it"), Just("general")],
    ) {
        let now = seed_now();
        let day = 86_400_000u64;
        let iso = |ms: u64| concierge_core::flows::knowledge::iso_of_ms(ms);
        let r = f64::from(relevance) / 100.0;
        let answers = vec![
            answer(agent, "a#rag:1", "old", vec![evidence("https://kb/old", &iso(now - older_days * day), "public", r, department)]),
            answer(agent, "a#rag:2", "new", vec![evidence("https://kb/new", &iso(now - newer_days * day), "private", r, department)]),
        ];
        let resolution = resolve(&answers, &ConflictRules::default(), 0.1, now);
        prop_assert_eq!(resolution.ranked[0].0.answer.as_str(), "new");
        prop_assert!(resolution.ranked[0].1 > resolution.ranked[1].1);
        prop_assert_eq!(resolution.evidence[0].0.url.as_str(), "https://kb/new");
    }

    #[test]
    fn ties_are_deterministic(text_a in "[a-z]{1,4}", text_b in "[a-z]{1,4}") {
        let e = || vec![evidence("https://kb/same", "2025-09-01T00:00:00Z", "internal", 0.8, "hr")];
        let one = [answer("it", "it#rag", &text_a, e()), answer("hr", "hr#rag", &text_b, e())];
        let two = [one[1].clone(), one[0].clone()];
        let rules = ConflictRules::default();
        let (x, y) = (resolve(&one, &rules, 0.1, seed_now()), resolve(&two, &rules, 0.1, seed_now()));
        prop_assert_eq!(&x, &y);
        // hr is the priority agent of an hr document: it ranks first; the one shared URL
        // is kept once.
        prop_assert_eq!(x.ranked[0].0.agent.as_str(), "hr");
        prop_assert_eq!(x.evidence.len(), 1);
    }
}
