//! One assistant answer as it streams in: the events the panel reacts to and the state
//! they lead to. Pure, so the rules are tested on the host; `crate::chat` feeds it from
//! the network and mirrors it into signals.
//!
//! The rules: text accumulates chunk by chunk; the stream ends with exactly one
//! `completed` or `failed`, and nothing after that changes the answer; a stream that
//! ends without either was interrupted; the visitor may stop an answer at any time.

/// An event of Concierge's native stream, as far as the panel cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamEvent {
    /// `started`.
    Started,
    /// An unnamed event: a piece of the answer's text.
    Chunk(String),
    /// `tool_start`, `tool_end`, `progress`: work is going on; `progress` may say what.
    Activity(Option<String>),
    /// `completed`: the answer is stored; `kind` is `answer`, `clarify`, `warranty`, …,
    /// or `held` when a person holds the conversation (no answer: `reply.kind` is `held`).
    Completed {
        /// The stored message's kind.
        kind: String,
    },
    /// `failed`.
    Failed {
        /// Machine-readable code.
        code: String,
    },
}

impl StreamEvent {
    /// Interpret an SSE event: its type and a reader of string fields of its JSON data
    /// (`field(&["error", "code"])`). `None` for events the panel ignores (`payload`,
    /// unknown types) and for malformed ones.
    pub(crate) fn from_sse(name: &str, field: impl Fn(&[&str]) -> Option<String>) -> Option<Self> {
        Some(match name {
            "message" => Self::Chunk(field(&["chunk"])?),
            "started" => Self::Started,
            "tool_start" | "tool_end" => Self::Activity(None),
            "progress" => Self::Activity(field(&["message"])),
            "completed" => Self::Completed {
                kind: field(&["reply", "kind"])
                    .filter(|k| matches!(k.as_str(), "held" | "stopped"))
                    .or_else(|| field(&["kind"]))
                    .unwrap_or_else(|| "answer".into()),
            },
            "failed" => Self::Failed {
                code: field(&["error", "code"]).unwrap_or_default(),
            },
            _ => return None,
        })
    }
}

/// Why an answer failed; picks the words the visitor sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The server said so (`failed`, or an error status).
    Failed,
    /// The request never got an answer.
    Network,
    /// HTTP 429.
    RateLimited,
    /// The stream ended without `completed` or `failed`.
    Interrupted,
}

impl Failure {
    /// The failure an HTTP error status means.
    pub(crate) fn from_status(status: u16) -> Self {
        if status == 429 {
            Self::RateLimited
        } else {
            Self::Failed
        }
    }
}

/// Where an answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Sent; nothing has come back yet (the typing indicator shows).
    Waiting,
    /// Text is arriving.
    Streaming,
    /// `completed`.
    Done,
    /// Failed; the retry control shows.
    Failed(Failure),
    /// The visitor stopped it.
    Stopped,
}

impl Phase {
    /// Whether the answer is over (nothing changes it any more).
    pub(crate) fn is_over(self) -> bool {
        matches!(self, Self::Done | Self::Failed(_) | Self::Stopped)
    }

    /// A stable name, for `data-state` attributes (styles and tests).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Streaming => "streaming",
            Self::Done => "done",
            Self::Failed(_) => "failed",
            Self::Stopped => "stopped",
        }
    }
}

/// One assistant answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    /// The text so far.
    pub text: String,
    /// Where it is.
    pub phase: Phase,
    /// The stored message's kind, once completed.
    pub kind: Option<String>,
    /// What the assistant is doing, from `progress`, until text arrives.
    pub activity: Option<String>,
}

impl Default for Turn {
    fn default() -> Self {
        Self::new()
    }
}

impl Turn {
    /// A turn just sent.
    pub(crate) fn new() -> Self {
        Self {
            text: String::new(),
            phase: Phase::Waiting,
            kind: None,
            activity: None,
        }
    }

    /// Apply one stream event. Returns whether anything changed.
    pub(crate) fn apply(&mut self, event: StreamEvent) -> bool {
        if self.phase.is_over() {
            return false;
        }
        match event {
            StreamEvent::Started => return false,
            StreamEvent::Chunk(text) => {
                if text.is_empty() {
                    return false;
                }
                self.text.push_str(&text);
                self.activity = None;
                self.phase = Phase::Streaming;
            }
            StreamEvent::Activity(what) => {
                if what.is_none() || !self.text.is_empty() {
                    return false;
                }
                self.activity = what;
            }
            // A stopped turn (`POST …/stop`) ends as stopped, with what was shown.
            StreamEvent::Completed { kind } => {
                self.phase = if matches!(kind.as_str(), "stopped") {
                    Phase::Stopped
                } else {
                    Phase::Done
                };
                self.kind = Some(kind);
                self.activity = None;
            }
            // The conversation's object was reset mid-answer, or the answer failed after
            // it began (the model's stream was cut): the answer was interrupted.
            StreamEvent::Failed { code } if code == "turn_interrupted" || !self.text.is_empty() => {
                self.fail(Failure::Interrupted);
            }
            StreamEvent::Failed { .. } => self.fail(Failure::Failed),
        }
        true
    }

    /// The input ended: without a terminal event, the answer was interrupted.
    pub(crate) fn end(&mut self) {
        self.fail(Failure::Interrupted);
    }

    /// The answer failed (unless it is already over).
    pub(crate) fn fail(&mut self, why: Failure) {
        if !self.phase.is_over() {
            self.activity = None;
            self.phase = Phase::Failed(why);
        }
    }

    /// The visitor stopped the answer (unless it is already over).
    pub(crate) fn stop(&mut self) {
        if !self.phase.is_over() {
            self.activity = None;
            self.phase = Phase::Stopped;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> StreamEvent {
        StreamEvent::Chunk(text.into())
    }

    fn completed() -> StreamEvent {
        StreamEvent::Completed {
            kind: "answer".into(),
        }
    }

    #[test]
    fn chunks_accumulate_until_completed() {
        let mut turn = Turn::new();
        assert_eq!(turn.phase, Phase::Waiting);
        assert!(!turn.apply(StreamEvent::Started));
        assert!(turn.apply(chunk("Dạ,")));
        assert_eq!(turn.phase, Phase::Streaming);
        assert!(turn.apply(chunk(" giá là")));
        assert!(turn.apply(completed()));
        assert_eq!(turn.text, "Dạ, giá là");
        assert_eq!(turn.phase, Phase::Done);
        assert_eq!(turn.kind.as_deref(), Some("answer"));
    }

    #[test]
    fn nothing_changes_after_the_terminal_event() {
        let mut turn = Turn::new();
        turn.apply(chunk("a"));
        turn.apply(completed());
        assert!(!turn.apply(chunk("b")));
        assert!(!turn.apply(StreamEvent::Failed { code: "x".into() }));
        turn.end();
        turn.stop();
        assert_eq!((turn.text.as_str(), turn.phase), ("a", Phase::Done));
    }

    #[test]
    fn failures() {
        let mut turn = Turn::new();
        turn.apply(StreamEvent::Failed {
            code: "model_failed".into(),
        });
        assert_eq!(turn.phase, Phase::Failed(Failure::Failed));

        // Failed after text arrived (the model's stream was cut): interrupted, the
        // panel's own words for it, not the generic error.
        let mut turn = Turn::new();
        turn.apply(chunk("partial"));
        turn.apply(StreamEvent::Failed {
            code: "model_failed".into(),
        });
        assert_eq!(turn.phase, Phase::Failed(Failure::Interrupted));
        assert_eq!(turn.text, "partial", "what arrived stays visible");

        let mut turn = Turn::new();
        turn.apply(chunk("cut"));
        turn.end();
        assert_eq!(turn.phase, Phase::Failed(Failure::Interrupted));

        let mut turn = Turn::new();
        turn.apply(chunk("half"));
        turn.apply(StreamEvent::Failed {
            code: "turn_interrupted".into(),
        });
        assert_eq!(turn.phase, Phase::Failed(Failure::Interrupted));
        assert_eq!(turn.text, "half");

        assert_eq!(Failure::from_status(429), Failure::RateLimited);
        assert_eq!(Failure::from_status(502), Failure::Failed);
    }

    #[test]
    fn stopping_keeps_the_text() {
        let mut turn = Turn::new();
        turn.apply(chunk("half"));
        turn.stop();
        assert_eq!((turn.text.as_str(), turn.phase), ("half", Phase::Stopped));
        assert!(turn.phase.is_over());
    }

    #[test]
    fn a_turn_the_server_stopped_ends_stopped_with_what_was_shown() {
        let mut turn = Turn::new();
        turn.apply(chunk("half"));
        let field = |path: &[&str]| match path {
            ["reply", "kind"] => Some("stopped".to_string()),
            ["kind"] => Some("answer".to_string()),
            _ => None,
        };
        let stopped = StreamEvent::from_sse("completed", field);
        assert_eq!(
            stopped,
            Some(StreamEvent::Completed {
                kind: "stopped".into()
            })
        );
        assert!(turn.apply(stopped.expect("event")));
        assert_eq!((turn.text.as_str(), turn.phase), ("half", Phase::Stopped));
        assert!(!turn.apply(chunk(" more")));
    }

    #[test]
    fn progress_shows_until_text_arrives() {
        let mut turn = Turn::new();
        assert!(!turn.apply(StreamEvent::Activity(None)));
        assert!(turn.apply(StreamEvent::Activity(Some("Đang tra cứu…".into()))));
        assert_eq!(turn.activity.as_deref(), Some("Đang tra cứu…"));
        assert_eq!(turn.phase, Phase::Waiting);
        turn.apply(chunk("x"));
        assert_eq!(turn.activity, None);
        assert!(!turn.apply(StreamEvent::Activity(Some("later".into()))));
    }

    #[test]
    fn reads_sse_events() {
        let json = |pairs: &'static [(&'static str, &'static str)]| {
            move |path: &[&str]| {
                let key = path.join(".");
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            StreamEvent::from_sse("message", json(&[("chunk", "Xin")])),
            Some(chunk("Xin"))
        );
        assert_eq!(StreamEvent::from_sse("message", json(&[])), None);
        assert_eq!(
            StreamEvent::from_sse("completed", json(&[("kind", "warranty")])),
            Some(StreamEvent::Completed {
                kind: "warranty".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse("completed", json(&[])),
            Some(completed())
        );
        // A held conversation's turn: no answer.
        assert_eq!(
            StreamEvent::from_sse(
                "completed",
                json(&[("kind", "handoff"), ("reply.kind", "held")])
            ),
            Some(StreamEvent::Completed {
                kind: "held".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse(
                "completed",
                json(&[("kind", "data"), ("reply.kind", "data")])
            ),
            Some(StreamEvent::Completed {
                kind: "data".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse("failed", json(&[("error.code", "upstream_error")])),
            Some(StreamEvent::Failed {
                code: "upstream_error".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse("progress", json(&[("message", "Đang lập kế hoạch")])),
            Some(StreamEvent::Activity(Some("Đang lập kế hoạch".into())))
        );
        assert_eq!(
            StreamEvent::from_sse("tool_start", json(&[])),
            Some(StreamEvent::Activity(None))
        );
        assert_eq!(StreamEvent::from_sse("payload", json(&[])), None);
        assert_eq!(StreamEvent::from_sse("future_event", json(&[])), None);
    }
}
