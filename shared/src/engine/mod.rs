//! One engine for every assistant template: the turn lifecycle, the platform the templates
//! reach the world through, and the steps they share.
//!
//! A turn runs the same way for every template ([`lifecycle`]):
//!
//! ```text
//! receive     validate, store the visitor's message with its turn (or find it again by its
//!             idempotency key), queue its embedding          → Started
//! language    detected from the visitor's first message, or asked for explicitly
//! answer      the template's own steps (Assistant::answer): its graph, streaming chunks,
//!             tool events, progress and payloads into the turn's sink, and storing the reply
//!             through the shared steps below
//! finish      remember a changed language; Completed — or, on error, mark the visitor's
//!             message and Failed (exactly one terminal event)
//! ```
//!
//! A template is an [`Assistant`]: its settings (the shared [`TurnConfig`] extended with its
//! own), its greeting, and its answer steps. The shared steps ([`respond`]) are the streamed
//! answer (partial text stored as incomplete, finish reasons, in-band errors), the ReAct
//! answer (tool rounds stored with the reply), and storing a reply under the one embedding
//! policy ([`embedding_policy`](crate::conversation::embedding_policy)).
//!
//! The world is one [`Platform`]: the boundaries as associated types, so a flow is generic
//! over one parameter. The Worker implements it over D1, fetch, Vectorize and Queues; the
//! in-memory backend (`memory::MemoryBackend`, feature `memory`)
//! implements it for tests.
//!
//! A turn is either stored (history from the store; the reply is stored) or stateless
//! ([`run_stateless`]: history from the caller, nothing stored), with the same events.

mod at_once;
mod contract;
mod create;
mod gate;
mod join;
pub mod lifecycle;
mod model;
mod regenerate;
pub mod respond;
mod stateless;
mod steps;
mod streamed;

pub use at_once::Admission;
pub use contract::{Answer, Assistant, Platform, Refusal, Turn, TurnConfig, TurnMode, TurnOutcome};
pub use create::{CreatedConversation, NewConversation, create_conversation};
pub use lifecycle::{
    Received, answer_job, answer_job_streamed, receive, run_admitted_turn, run_turn,
};
pub use model::complete;
pub use regenerate::{RegenerateInput, regenerate};
pub use respond::{StreamedAnswer, react_answer, stream_answer};
pub use stateless::{StatelessInput, run_stateless};
pub use steps::{PendingTurn, store_reply};
pub use streamed::{
    AsItComes, Streamed, TextFilter, TrimStart, fail_answer, note_finish, stream_text,
};
