//! Seed 003: planned stages whose tasks run concurrently and merge.

use super::*;

nodes!(Knowledge {
    Orchestrator => "orchestrator",
    SemanticRouter => "semantic_router",
    ExecuteStage => "execute_stage",
    ConflictResolution => "conflict_resolution",
    FinalResponse => "final_response",
});

#[derive(Default)]
struct KnowledgeState {
    chitchat: bool,
    plan: Vec<Vec<(&'static str, &'static str)>>,
    stage: usize,
    results: Vec<String>,
    answer: String,
}

/// Pending once, then ready: lets concurrent tasks interleave.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

struct KnowledgeFlow<'a> {
    log: &'a RefCell<Vec<String>>,
}

impl KnowledgeFlow<'_> {
    async fn task(&self, agent: &'static str, tool: &'static str) -> Result<String, String> {
        self.log.borrow_mut().push(format!("start {agent}#{tool}"));
        YieldOnce(false).await;
        self.log.borrow_mut().push(format!("end {agent}#{tool}"));
        if tool == "broken_tool" {
            Err(format!("{agent}#{tool} timed out"))
        } else {
            Ok(format!("{agent}:{tool}"))
        }
    }
}

impl Flow for KnowledgeFlow<'_> {
    type Node = Knowledge;
    type State = KnowledgeState;
    type Error = GraphError;

    async fn run_node(
        &mut self,
        node: Knowledge,
        state: &mut KnowledgeState,
    ) -> Result<(), GraphError> {
        match node {
            Knowledge::Orchestrator => {}
            Knowledge::SemanticRouter => {
                state.plan = vec![
                    vec![
                        ("general", "rag_tool"),
                        ("hr", "rag_tool"),
                        ("it", "broken_tool"),
                    ],
                    vec![("hr", "summary_tool")],
                ];
            }
            Knowledge::ExecuteStage => {
                let stage = state.plan[state.stage].clone();
                let this = &*self;
                let outputs =
                    join_all(stage.iter().map(|(agent, tool)| this.task(agent, tool))).await;
                // Partial failure: failed tasks become results, not errors.
                state.results.extend(
                    outputs
                        .into_iter()
                        .map(|o| o.unwrap_or_else(|e| format!("failed: {e}"))),
                );
                state.stage += 1;
            }
            Knowledge::ConflictResolution => state.results.sort(),
            Knowledge::FinalResponse => state.answer = state.results.join(" | "),
        }
        Ok(())
    }
}

fn knowledge_graph() -> Graph<Knowledge, KnowledgeState> {
    use Knowledge::*;
    Graph::new(Orchestrator)
        .branch(
            Orchestrator,
            |s: &KnowledgeState| {
                if s.chitchat {
                    Next::End
                } else {
                    SemanticRouter.into()
                }
            },
            [SemanticRouter.into(), END.into()],
        )
        .edge(SemanticRouter, ExecuteStage)
        .branch(
            ExecuteStage,
            |s| {
                if s.stage < s.plan.len() {
                    ExecuteStage.into()
                } else {
                    ConflictResolution.into()
                }
            },
            [ExecuteStage.into(), ConflictResolution.into()],
        )
        .edge(ConflictResolution, FinalResponse)
        .edge(FinalResponse, END)
}

#[test]
fn knowledge_stages_run_their_tasks_concurrently_and_merge() {
    let log = RefCell::new(Vec::new());
    let mut state = KnowledgeState::default();
    let trace =
        block_on(knowledge_graph().run(&mut KnowledgeFlow { log: &log }, &mut state)).unwrap();
    assert_eq!(
        trace.names(),
        [
            "orchestrator",
            "semantic_router",
            "execute_stage",
            "execute_stage",
            "conflict_resolution",
            "final_response",
        ]
    );
    // Stage 1's three tasks all started before any finished; stage 2 came after.
    assert_eq!(
        log.borrow()[..3],
        [
            "start general#rag_tool",
            "start hr#rag_tool",
            "start it#broken_tool"
        ]
    );
    assert_eq!(log.borrow()[6], "start hr#summary_tool");
    assert_eq!(
        state.answer,
        "failed: it#broken_tool timed out | general:rag_tool | hr:rag_tool | hr:summary_tool"
    );
}

#[test]
fn knowledge_chitchat_short_cut() {
    let log = RefCell::new(Vec::new());
    let mut state = KnowledgeState {
        chitchat: true,
        ..KnowledgeState::default()
    };
    let trace =
        block_on(knowledge_graph().run(&mut KnowledgeFlow { log: &log }, &mut state)).unwrap();
    assert_eq!(trace.names(), ["orchestrator"]);
}
