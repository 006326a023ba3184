//! Wiring errors.

use super::*;

nodes!(Toy { A => "a", B => "b" });

struct Noop;

impl Flow for Noop {
    type Node = Toy;
    type State = u32;
    type Error = GraphError;

    async fn run_node(&mut self, _node: Toy, state: &mut u32) -> Result<(), GraphError> {
        *state += 1;
        Ok(())
    }
}

#[test]
fn wiring_errors_are_reported() {
    let missing = Graph::<Toy, u32>::new(Toy::A).edge(Toy::A, Toy::B);
    assert_eq!(
        block_on(missing.run(&mut Noop, &mut 0)).unwrap_err(),
        GraphError::NoEdge { node: "b" }
    );

    let undeclared = Graph::<Toy, u32>::new(Toy::A).branch(Toy::A, |_| Toy::B.into(), [END.into()]);
    assert_eq!(
        block_on(undeclared.run(&mut Noop, &mut 0)).unwrap_err(),
        GraphError::UndeclaredTarget { from: "a", to: "b" }
    );

    let endless = Graph::<Toy, u32>::new(Toy::A)
        .edge(Toy::A, Toy::B)
        .edge(Toy::B, Toy::A)
        .step_limit(10);
    let mut runs = 0;
    assert_eq!(
        block_on(endless.run(&mut Noop, &mut runs)).unwrap_err(),
        GraphError::StepLimit { limit: 10 }
    );
    assert_eq!(runs, 10);
}
