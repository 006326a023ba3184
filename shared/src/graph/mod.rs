//! The agent graph: named nodes, edges, conditional edges, early exits and [`END`] — the
//! design language of LangGraph, which every seed uses.
//!
//! A template is two things:
//! - a [`Graph`]: its wiring, written once, reading like the seed's diagram;
//! - a [`Flow`]: what each node *does* (`async fn run_node`, one `match` arm per node),
//!   plus the services it needs.
//!
//! [`Graph::run`] starts at the entry node and, after each node, follows its edge: a plain
//! edge to the next node (or [`END`]), or a conditional edge whose router — a plain function
//! of the state — picks one of the declared targets. An *early exit* is a conditional edge
//! to a node that leads to [`END`]. Loops (a ReAct tool loop, a retry loop) are edges back
//! to an earlier node; the router reads the attempt counters kept in the state, and
//! [`Graph::step_limit`] bounds any loop as LangGraph's recursion limit does.
//!
//! Nothing survives a run but what nodes write through their services: each turn rebuilds
//! its state from the store before the graph runs.
//!
//! ```
//! use concierge_core::graph::{block_on, Flow, Graph, GraphError, Node, END};
//!
//! #[derive(Debug, Clone, Copy, PartialEq, Eq)]
//! enum Step { Guard, Refuse, Answer }
//! impl Node for Step {
//!     fn name(self) -> &'static str {
//!         match self { Step::Guard => "guard", Step::Refuse => "refuse", Step::Answer => "answer" }
//!     }
//! }
//! struct State { on_topic: bool, reply: &'static str }
//! struct Advisor;
//! impl Flow for Advisor {
//!     type Node = Step;
//!     type State = State;
//!     type Error = GraphError;
//!     async fn run_node(&mut self, node: Step, state: &mut State) -> Result<(), GraphError> {
//!         match node {
//!             Step::Guard => {}
//!             Step::Refuse => state.reply = "Sorry, dental questions only.",
//!             Step::Answer => state.reply = "Brush twice a day.",
//!         }
//!         Ok(())
//!     }
//! }
//! let graph = Graph::new(Step::Guard)
//!     .branch(Step::Guard, |s: &State| if s.on_topic { Step::Answer.into() } else { Step::Refuse.into() },
//!             [Step::Answer.into(), Step::Refuse.into()])
//!     .edge(Step::Refuse, END)
//!     .edge(Step::Answer, END);
//! let mut state = State { on_topic: false, reply: "" };
//! let trace = block_on(graph.run(&mut Advisor, &mut state)).unwrap();
//! assert_eq!(trace.names(), ["guard", "refuse"]);
//! assert_eq!(state.reply, "Sorry, dental questions only.");
//! ```

mod exec;

use alloc::vec::Vec;
use core::fmt;

pub use exec::{JoinAll, block_on, join_all};

/// A node of a graph: a small `Copy` enum with a stable name (the seed's node name).
pub trait Node: Copy + Eq + fmt::Debug {
    /// The node's name, as the seed writes it (e.g. `"respond_stream"`).
    fn name(self) -> &'static str;
}

/// Where an edge leads: a node, or the end of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<N> {
    /// Run this node next.
    Node(N),
    /// Stop: the run is over.
    End,
}

impl<N: Node> Next<N> {
    /// The target's name (`"END"` for the end).
    pub fn name(self) -> &'static str {
        match self {
            Self::Node(node) => node.name(),
            Self::End => "END",
        }
    }
}

/// The end of a run, usable wherever a [`Next`] is expected: `.edge(Node::Respond, END)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End;

/// The end of a run (LangGraph's `END`).
pub const END: End = End;

impl<N> From<End> for Next<N> {
    fn from(_: End) -> Self {
        Self::End
    }
}

impl<N: Node> From<N> for Next<N> {
    fn from(node: N) -> Self {
        Self::Node(node)
    }
}

/// A router of a conditional edge: picks the next step from the state.
pub type Router<N, S> = fn(&S) -> Next<N>;

/// The edge leaving one node.
#[derive(Debug, Clone)]
pub enum Edge<N, S> {
    /// Always go to this target.
    To(Next<N>),
    /// Ask the router; it must answer one of `targets`.
    Branch {
        /// Picks the target from the state.
        router: Router<N, S>,
        /// The declared targets, in the order the seed lists them.
        targets: Vec<Next<N>>,
    },
}

/// Why a run stopped abnormally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphError {
    /// A node has no outgoing edge.
    NoEdge {
        /// The node.
        node: &'static str,
    },
    /// A router answered a target its edge did not declare.
    UndeclaredTarget {
        /// The node whose router answered.
        from: &'static str,
        /// What it answered.
        to: &'static str,
    },
    /// More steps than [`Graph::step_limit`] (a loop that did not stop).
    StepLimit {
        /// The limit.
        limit: usize,
    },
    /// The run reached `END` without producing what the flow promises (e.g. a reply).
    MissingOutput {
        /// What is missing.
        what: &'static str,
    },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoEdge { node } => write!(f, "node `{node}` has no outgoing edge"),
            Self::UndeclaredTarget { from, to } => {
                write!(f, "`{from}` routed to undeclared target `{to}`")
            }
            Self::StepLimit { limit } => write!(f, "more than {limit} steps"),
            Self::MissingOutput { what } => write!(f, "the run ended without {what}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for GraphError {}

/// What the nodes of a graph do.
// `async fn` in a public trait without `Send` bounds: Workers and browsers are
// single-threaded.
#[allow(async_fn_in_trait)]
pub trait Flow {
    /// The node type.
    type Node: Node;
    /// The state nodes read and write.
    type State;
    /// The flow's error; graph wiring errors convert into it.
    type Error: From<GraphError>;

    /// Runs one node against the state.
    async fn run_node(
        &mut self,
        node: Self::Node,
        state: &mut Self::State,
    ) -> Result<(), Self::Error>;
}

/// The nodes a run visited, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace<N> {
    /// Visited nodes.
    pub nodes: Vec<N>,
}

impl<N: Node> Trace<N> {
    /// The visited nodes' names.
    pub fn names(&self) -> Vec<&'static str> {
        self.nodes.iter().map(|node| node.name()).collect()
    }
}

/// A graph's wiring: an entry node and one edge per node.
#[derive(Debug, Clone)]
pub struct Graph<N, S> {
    entry: N,
    edges: Vec<(N, Edge<N, S>)>,
    step_limit: usize,
}

impl<N: Node, S> Graph<N, S> {
    /// A graph entered at `entry`, with a step limit of 25 (LangGraph's default).
    pub fn new(entry: N) -> Self {
        Self {
            entry,
            edges: Vec::new(),
            step_limit: 25,
        }
    }

    /// Sets the maximum number of node runs in one [`Graph::run`].
    pub fn step_limit(mut self, limit: usize) -> Self {
        self.step_limit = limit;
        self
    }

    /// Adds the edge `from → to` (replacing any edge leaving `from`).
    pub fn edge(self, from: N, to: impl Into<Next<N>>) -> Self {
        self.with_edge(from, Edge::To(to.into()))
    }

    /// Adds a conditional edge leaving `from`: `router` picks one of `targets`.
    pub fn branch(
        self,
        from: N,
        router: Router<N, S>,
        targets: impl IntoIterator<Item = Next<N>>,
    ) -> Self {
        self.with_edge(
            from,
            Edge::Branch {
                router,
                targets: targets.into_iter().collect(),
            },
        )
    }

    fn with_edge(mut self, from: N, edge: Edge<N, S>) -> Self {
        self.edges.retain(|(node, _)| *node != from);
        self.edges.push((from, edge));
        self
    }

    /// The entry node.
    pub fn entry(&self) -> N {
        self.entry
    }

    /// Every edge as `(from, to)` pairs, in declaration order (a branch yields one pair per
    /// declared target).
    pub fn edges(&self) -> Vec<(N, Next<N>)> {
        let mut pairs = Vec::new();
        for (from, edge) in &self.edges {
            match edge {
                Edge::To(to) => pairs.push((*from, *to)),
                Edge::Branch { targets, .. } => pairs.extend(targets.iter().map(|to| (*from, *to))),
            }
        }
        pairs
    }

    /// Where to go after `node`, given the state.
    pub fn next(&self, node: N, state: &S) -> Result<Next<N>, GraphError> {
        let (_, edge) = self
            .edges
            .iter()
            .find(|(from, _)| *from == node)
            .ok_or(GraphError::NoEdge { node: node.name() })?;
        match edge {
            Edge::To(to) => Ok(*to),
            Edge::Branch { router, targets } => {
                let to = router(state);
                if targets.contains(&to) {
                    Ok(to)
                } else {
                    Err(GraphError::UndeclaredTarget {
                        from: node.name(),
                        to: to.name(),
                    })
                }
            }
        }
    }

    /// Runs the graph from its entry until [`END`], returning the visited nodes.
    pub async fn run<F>(&self, flow: &mut F, state: &mut S) -> Result<Trace<N>, F::Error>
    where
        F: Flow<Node = N, State = S>,
    {
        let mut trace = Trace { nodes: Vec::new() };
        let mut next = Next::Node(self.entry);
        while let Next::Node(node) = next {
            if trace.nodes.len() == self.step_limit {
                return Err(GraphError::StepLimit {
                    limit: self.step_limit,
                }
                .into());
            }
            trace.nodes.push(node);
            flow.run_node(node, state).await?;
            next = self.next(node, state)?;
        }
        Ok(trace)
    }
}
