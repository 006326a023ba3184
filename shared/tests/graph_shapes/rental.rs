//! Seed 002: sequential agents, a self-retrying SQL step, a validator.

use super::*;

nodes!(Rental {
    Orchestrator => "orchestrator",
    SqlGeneration => "sql_generation",
    ResponseGenerator => "response_generator",
    ResultValidator => "result_validator",
    PersistKnowledge => "persist_knowledge",
    Clarify => "clarify",
});

const MAX_SQL_ATTEMPTS: u32 = 5;

#[derive(Default)]
struct RentalState {
    request_type: &'static str,
    ready_for_sql: bool,
    sql_outcomes: Vec<bool>,
    attempts: u32,
    sql_ok: bool,
    last_error: Option<String>,
    valid: bool,
    persisted: bool,
}

struct RentalFlow;

impl Flow for RentalFlow {
    type Node = Rental;
    type State = RentalState;
    type Error = GraphError;

    async fn run_node(&mut self, node: Rental, state: &mut RentalState) -> Result<(), GraphError> {
        match node {
            Rental::SqlGeneration => {
                state.attempts += 1;
                state.sql_ok = state
                    .sql_outcomes
                    .get(state.attempts as usize - 1)
                    .copied()
                    .unwrap_or(false);
                state.last_error =
                    (!state.sql_ok).then(|| format!("attempt {} failed", state.attempts));
            }
            Rental::ResultValidator => state.valid = state.sql_ok,
            Rental::PersistKnowledge => state.persisted = true,
            Rental::Orchestrator | Rental::ResponseGenerator | Rental::Clarify => {}
        }
        Ok(())
    }
}

fn rental_graph() -> Graph<Rental, RentalState> {
    use Rental::*;
    Graph::new(Orchestrator)
        .branch(
            Orchestrator,
            |s: &RentalState| match (s.request_type, s.ready_for_sql) {
                ("QUERY", true) => SqlGeneration.into(),
                ("CLARIFICATION", _) | ("QUERY", false) => Clarify.into(),
                _ => ResponseGenerator.into(),
            },
            [
                SqlGeneration.into(),
                Clarify.into(),
                ResponseGenerator.into(),
            ],
        )
        .branch(
            SqlGeneration,
            |s| {
                if s.sql_ok || s.attempts >= MAX_SQL_ATTEMPTS {
                    ResponseGenerator.into()
                } else {
                    SqlGeneration.into()
                }
            },
            [SqlGeneration.into(), ResponseGenerator.into()],
        )
        .edge(ResponseGenerator, ResultValidator)
        .branch(
            ResultValidator,
            |s| {
                if s.valid {
                    PersistKnowledge.into()
                } else {
                    Next::End
                }
            },
            [PersistKnowledge.into(), END.into()],
        )
        .edge(PersistKnowledge, END)
        .edge(Clarify, END)
}

#[test]
fn rental_sql_step_retries_then_the_validator_persists() {
    let mut state = RentalState {
        request_type: "QUERY",
        ready_for_sql: true,
        sql_outcomes: vec![false, false, true],
        ..RentalState::default()
    };
    let trace = block_on(rental_graph().run(&mut RentalFlow, &mut state)).unwrap();
    assert_eq!(
        trace.names(),
        [
            "orchestrator",
            "sql_generation",
            "sql_generation",
            "sql_generation",
            "response_generator",
            "result_validator",
            "persist_knowledge",
        ]
    );
    assert!(state.persisted);
}

#[test]
fn rental_sql_step_gives_up_after_five_attempts_and_nothing_is_persisted() {
    let mut state = RentalState {
        request_type: "QUERY",
        ready_for_sql: true,
        ..RentalState::default()
    };
    let trace = block_on(rental_graph().run(&mut RentalFlow, &mut state)).unwrap();
    assert_eq!(state.attempts, 5);
    assert_eq!(state.last_error.as_deref(), Some("attempt 5 failed"));
    assert_eq!(trace.names().last(), Some(&"result_validator"));
    assert!(!state.persisted);
}
