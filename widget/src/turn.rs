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
    /// `tool_start`: a tool call began.
    ToolStart {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// `tool_end`: a tool call ended.
    ToolEnd {
        /// The call's id.
        id: String,
        /// Whether it succeeded.
        ok: bool,
    },
    /// `progress`: what is going on, and how far along (whole percent, 0 to 100) when
    /// known.
    Progress(String, Option<u8>),
    /// `payload`: structured content, as its JSON text (`{"kind","data"}`).
    Payload(String),
    /// `completed`: the answer is stored; `kind` is `answer`, `clarify`, `warranty`, ….
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
    /// Interpret an SSE event: its type, its JSON data as text, and a reader of scalar
    /// fields of that data as text (`field(&["error", "code"])`; `true`, `42`). `None` for
    /// unknown types and malformed events.
    pub(crate) fn from_sse(
        name: &str,
        data: &str,
        field: impl Fn(&[&str]) -> Option<String>,
    ) -> Option<Self> {
        Some(match name {
            "message" => Self::Chunk(field(&["chunk"])?),
            "started" => Self::Started,
            "tool_start" => Self::ToolStart {
                id: field(&["call_id"])?,
                name: field(&["name"])?,
            },
            "tool_end" => Self::ToolEnd {
                id: field(&["call_id"])?,
                ok: field(&["ok"]).as_deref() == Some("true"),
            },
            "progress" => Self::Progress(
                field(&["message"])?,
                field(&["percentage"]).and_then(|p| percent(&p)),
            ),
            "payload" => {
                field(&["kind"])?;
                Self::Payload(data.to_string())
            }
            "completed" => Self::Completed {
                kind: field(&["kind"]).unwrap_or_else(|| "answer".into()),
            },
            "failed" => Self::Failed {
                code: field(&["error", "code"]).unwrap_or_default(),
            },
            _ => return None,
        })
    }
}

/// A JSON number's text as a whole percent, 0 to 100 (no float parsing code in the
/// download): its leading digits; negative numbers are 0.
fn percent(text: &str) -> Option<u8> {
    if text.starts_with('-') {
        return Some(0);
    }
    let mut n: u32 = 0;
    let mut digits = 0;
    for b in text.bytes().take_while(u8::is_ascii_digit) {
        n = (n * 10 + u32::from(b - b'0')).min(1000);
        digits += 1;
    }
    (digits > 0).then(|| n.min(100) as u8)
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

/// Where a tool call is (as a number: the index of its words in `Strings::tool_states`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolState {
    /// Started, not ended.
    Working = 0,
    /// Ended well.
    Done = 1,
    /// Ended with an error.
    Failed = 2,
}

/// One tool call of an answer, as its row shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolRow {
    /// The call's id.
    pub id: String,
    /// The tool's name, as sent.
    pub name: String,
    /// Where it is.
    pub state: ToolState,
}

/// A plan's progress: the stage message and how far along (0 to 100) when known.
pub(crate) type Progress = Option<(String, Option<u8>)>;

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
    pub activity: Progress,
    /// Its tool calls, in the order they started.
    pub tools: Vec<ToolRow>,
    /// Its payloads' JSON texts, in order.
    pub payloads: Vec<String>,
    /// Bumped whenever the tool rows, the progress or the payloads change (to redraw
    /// them only then).
    pub rich: u32,
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
            tools: Vec::new(),
            payloads: Vec::new(),
            rich: 0,
        }
    }

    /// Apply one stream event. Returns whether anything changed.
    pub(crate) fn apply(&mut self, event: StreamEvent) -> bool {
        if self.phase.is_over() {
            return false;
        }
        let redraw = !matches!(event, StreamEvent::Chunk(_)) || self.activity.is_some();
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
            StreamEvent::Progress(message, percentage) => {
                if !self.text.is_empty() {
                    return false;
                }
                self.activity = Some((message, percentage));
            }
            StreamEvent::ToolStart { id, name } => {
                if self.tools.iter().any(|t| t.id == id) {
                    return false;
                }
                self.tools.push(ToolRow {
                    id,
                    name,
                    state: ToolState::Working,
                });
            }
            StreamEvent::ToolEnd { id, ok } => {
                let Some(row) = self.tools.iter_mut().find(|t| t.id == id) else {
                    return false;
                };
                row.state = if ok {
                    ToolState::Done
                } else {
                    ToolState::Failed
                };
            }
            StreamEvent::Payload(json) => self.payloads.push(json),
            StreamEvent::Completed { kind } => {
                self.kind = Some(kind);
                self.activity = None;
                self.phase = Phase::Done;
            }
            StreamEvent::Failed { .. } => self.fail(Failure::Failed),
        }
        if redraw {
            self.rich = self.rich.wrapping_add(1);
        }
        true
    }

    /// A turn that ends leaves no tool "working": an unfinished call failed.
    fn settle_tools(&mut self) {
        self.rich = self.rich.wrapping_add(1);
        for row in &mut self.tools {
            if row.state == ToolState::Working {
                row.state = ToolState::Failed;
            }
        }
    }

    /// The input ended: without a terminal event, the answer was interrupted.
    pub(crate) fn end(&mut self) {
        self.fail(Failure::Interrupted);
    }

    /// The answer failed (unless it is already over).
    pub(crate) fn fail(&mut self, why: Failure) {
        if !self.phase.is_over() {
            self.activity = None;
            self.settle_tools();
            self.phase = Phase::Failed(why);
        }
    }

    /// The visitor stopped the answer (unless it is already over).
    pub(crate) fn stop(&mut self) {
        if !self.phase.is_over() {
            self.activity = None;
            self.settle_tools();
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
        turn.apply(chunk("partial"));
        turn.apply(StreamEvent::Failed {
            code: "upstream_unavailable".into(),
        });
        assert_eq!(turn.phase, Phase::Failed(Failure::Failed));
        assert_eq!(turn.text, "partial", "what arrived stays visible");

        let mut turn = Turn::new();
        turn.apply(chunk("cut"));
        turn.end();
        assert_eq!(turn.phase, Phase::Failed(Failure::Interrupted));

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

    fn progress(message: &str, pct: Option<u8>) -> StreamEvent {
        StreamEvent::Progress(message.into(), pct)
    }

    #[test]
    fn progress_shows_until_text_arrives() {
        let mut turn = Turn::new();
        assert!(turn.apply(progress("Đang tra cứu…", None)));
        assert_eq!(turn.activity, Some(("Đang tra cứu…".into(), None)));
        assert!(turn.apply(progress("Bước 2", Some(60))));
        assert_eq!(turn.activity, Some(("Bước 2".into(), Some(60))));
        assert_eq!(turn.phase, Phase::Waiting);
        turn.apply(chunk("x"));
        assert_eq!(turn.activity, None);
        assert!(!turn.apply(progress("later", None)));
    }

    #[test]
    fn tool_rows_start_working_and_resolve() {
        let mut turn = Turn::new();
        let start = |id: &str| StreamEvent::ToolStart {
            id: id.into(),
            name: "search_products".into(),
        };
        assert!(turn.apply(start("c1")));
        let drawn = turn.rich;
        assert!(turn.apply(start("c2")));
        assert_ne!(turn.rich, drawn, "a new row is drawn");
        let drawn = turn.rich;
        turn.apply(chunk("text"));
        assert_eq!(turn.rich, drawn, "text alone redraws nothing");
        assert!(!turn.apply(start("c1")), "a repeated start adds no row");
        assert!(turn.apply(StreamEvent::ToolEnd {
            id: "c1".into(),
            ok: true
        }));
        assert!(!turn.apply(StreamEvent::ToolEnd {
            id: "nope".into(),
            ok: true
        }));
        let states: Vec<ToolState> = turn.tools.iter().map(|t| t.state).collect();
        assert_eq!(states, [ToolState::Done, ToolState::Working]);
        turn.apply(StreamEvent::Payload("{\"kind\":\"list\"}".into()));
        turn.end();
        assert_eq!(
            turn.tools[1].state,
            ToolState::Failed,
            "an unfinished call failed"
        );
        assert_eq!(turn.payloads, ["{\"kind\":\"list\"}"]);
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
            StreamEvent::from_sse("message", "", json(&[("chunk", "Xin")])),
            Some(chunk("Xin"))
        );
        assert_eq!(StreamEvent::from_sse("message", "", json(&[])), None);
        assert_eq!(
            StreamEvent::from_sse("completed", "", json(&[("kind", "warranty")])),
            Some(StreamEvent::Completed {
                kind: "warranty".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse("completed", "", json(&[])),
            Some(completed())
        );
        assert_eq!(
            StreamEvent::from_sse("failed", "", json(&[("error.code", "upstream_error")])),
            Some(StreamEvent::Failed {
                code: "upstream_error".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse(
                "progress",
                "",
                json(&[("message", "Đang lập kế hoạch"), ("percentage", "40")])
            ),
            Some(progress("Đang lập kế hoạch", Some(40)))
        );
        assert_eq!(percent("40.5"), Some(40));
        assert_eq!(percent("140"), Some(100), "clamped");
        assert_eq!(percent("-3"), Some(0));
        assert_eq!(percent("-0.5"), Some(0));
        assert_eq!(percent("x"), None);
        assert_eq!(
            StreamEvent::from_sse("tool_start", "", json(&[("call_id", "c"), ("name", "n")])),
            Some(StreamEvent::ToolStart {
                id: "c".into(),
                name: "n".into()
            })
        );
        assert_eq!(
            StreamEvent::from_sse("tool_end", "", json(&[("call_id", "c"), ("ok", "false")])),
            Some(StreamEvent::ToolEnd {
                id: "c".into(),
                ok: false
            })
        );
        assert_eq!(StreamEvent::from_sse("tool_start", "", json(&[])), None);
        let data = r#"{"kind":"list","data":{}}"#;
        assert_eq!(
            StreamEvent::from_sse("payload", data, json(&[("kind", "list")])),
            Some(StreamEvent::Payload(data.into()))
        );
        assert_eq!(StreamEvent::from_sse("payload", "{}", json(&[])), None);
        assert_eq!(StreamEvent::from_sse("future_event", "", json(&[])), None);
    }
}
