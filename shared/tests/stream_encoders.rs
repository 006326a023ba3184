//! Byte-exact output of the encoders and request builders.
#![allow(clippy::unwrap_used)]

use concierge_core::chat::{ChatMessage, ToolCall, ToolSpec, Usage};
use concierge_core::conversation::MessageKind;
use concierge_core::stream::TurnEncoder;
use concierge_core::stream::ai_sdk::{AiSdkEncoder, HEADER_NAME, HEADER_VALUE};
use concierge_core::stream::ollama::{EmbedResponse, OllamaChatRequest};
use concierge_core::stream::openai::{
    ChatRequestBuilder, EmbeddingsRequest, EmbeddingsResponse, ToolChoice,
};
use concierge_core::stream::sse::{SseError, SseFrame, encode_comment};
use concierge_core::stream::{EncodeError, openai_out::OpenAiChunkEncoder};
use concierge_core::turn::TurnEvent;
use serde_json::{Value, json};

fn conversation() -> (Vec<ChatMessage>, Vec<ToolSpec>) {
    let mut assistant = ChatMessage::assistant("");
    assistant.tool_calls.push(ToolCall {
        id: "call_1".into(),
        name: "get_warranty".into(),
        arguments: r#"{"serial":"0979825281"}"#.into(),
    });
    let messages = vec![
        ChatMessage::system("Bạn là trợ lý."),
        ChatMessage::user("Bảo hành 0979825281?"),
        assistant,
        ChatMessage::tool_result("call_1", r#"{"model":"S23 Ultra"}"#),
    ];
    let tools = vec![ToolSpec {
        name: "get_warranty".into(),
        description: "Look up a warranty by serial.".into(),
        parameters: json!({"type":"object","properties":{"serial":{"type":"string"}},"required":["serial"]}),
    }];
    (messages, tools)
}

#[test]
fn sse_frames_are_byte_exact() {
    let mut out = String::new();
    SseFrame::new("a\r\nb\rc\nd")
        .event("tick")
        .id("7")
        .retry(1500)
        .encode_into(&mut out)
        .unwrap();
    SseFrame::new("").encode_into(&mut out).unwrap();
    encode_comment("", &mut out);
    encode_comment("two\nlines", &mut out);
    assert_eq!(
        out,
        "event: tick\nid: 7\nretry: 1500\ndata: a\ndata: b\ndata: c\ndata: d\n\ndata: \n\n:\n: two\n: lines\n"
    );
    let mut untouched = String::from("x");
    assert_eq!(
        SseFrame::new("d").event("a\nb").encode_into(&mut untouched),
        Err(SseError::InvalidField)
    );
    assert_eq!(
        SseFrame::new("d").id("1\r").encode_into(&mut untouched),
        Err(SseError::InvalidField)
    );
    assert_eq!(
        SseFrame::new("d").id("1\0").encode_into(&mut untouched),
        Err(SseError::InvalidField)
    );
    assert_eq!(untouched, "x");
}

#[test]
fn openai_chat_request_has_messages_tools_and_options() {
    let (messages, tools) = conversation();
    let body = ChatRequestBuilder::new("smollm2", &messages)
        .tools(&tools)
        .tool_choice(ToolChoice::Required)
        .stream(true)
        .temperature(0.0)
        .max_tokens(128)
        .build()
        .to_json();
    let got: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        got,
        json!({
            "model": "smollm2",
            "messages": [
                {"role": "system", "content": "Bạn là trợ lý."},
                {"role": "user", "content": "Bảo hành 0979825281?"},
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "get_warranty", "arguments": "{\"serial\":\"0979825281\"}"}}]},
                {"role": "tool", "content": "{\"model\":\"S23 Ultra\"}", "tool_call_id": "call_1"}
            ],
            "tools": [{"type": "function", "function": {"name": "get_warranty",
                "description": "Look up a warranty by serial.",
                "parameters": {"type":"object","properties":{"serial":{"type":"string"}},"required":["serial"]}}}],
            "tool_choice": "required",
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.0,
            "max_tokens": 128
        })
    );
    let named = ChatRequestBuilder::new("m", &messages[..1])
        .tool_choice(ToolChoice::Function("f"))
        .build();
    assert_eq!(
        named.to_json(),
        r#"{"model":"m","messages":[{"role":"system","content":"Bạn là trợ lý."}],"tool_choice":{"type":"function","function":{"name":"f"}},"stream":false}"#
    );
}

#[test]
fn a_one_of_request_constrains_the_reply_to_the_labels() {
    let messages = vec![ChatMessage::user("Xin chào")];
    let labels = ["data_query", "chat", "unclear"];
    let schema = json!({"type": "object",
        "properties": {"choice": {"type": "string", "enum": labels}},
        "required": ["choice"], "additionalProperties": false});
    let body: Value = serde_json::from_str(
        &ChatRequestBuilder::new("m", &messages)
            .one_of(&labels)
            .build()
            .to_json(),
    )
    .unwrap();
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema",
               "json_schema": {"name": "choice", "strict": true, "schema": schema}})
    );
    let plain: Value =
        serde_json::from_str(&ChatRequestBuilder::new("m", &messages).build().to_json()).unwrap();
    assert!(plain.get("response_format").is_none());
    let ollama: Value = serde_json::from_str(
        &OllamaChatRequest::new("m", &messages)
            .one_of(&labels)
            .to_json(),
    )
    .unwrap();
    assert_eq!(ollama["format"], schema);
}

#[test]
fn ollama_chat_request_sends_object_arguments_and_tool_names() {
    let (messages, tools) = conversation();
    let body = OllamaChatRequest::new("llama3.2", &messages)
        .tools(&tools)
        .max_tokens(64)
        .to_json();
    let got: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        got["messages"][2],
        json!({"role": "assistant", "content": "",
        "tool_calls": [{"function": {"name": "get_warranty", "arguments": {"serial": "0979825281"}}}]})
    );
    assert_eq!(
        got["messages"][3],
        json!({"role": "tool", "content": "{\"model\":\"S23 Ultra\"}", "tool_name": "get_warranty"})
    );
    assert_eq!(got["tools"][0]["function"]["name"], "get_warranty");
    assert_eq!(got["stream"], true);
    assert_eq!(got["options"], json!({"num_predict": 64}));
    // Arguments that are not JSON travel as a string rather than being dropped.
    let mut broken = messages.clone();
    broken[2].tool_calls[0].arguments = "{serial: 1".into();
    let body = OllamaChatRequest::new("m", &broken).to_json();
    assert!(body.contains(r#""arguments":"{serial: 1""#), "{body}");
}

#[test]
fn embeddings_requests_and_responses() {
    assert_eq!(
        EmbeddingsRequest::new("bge-m3", ["a"])
            .dimensions(256)
            .to_json(),
        r#"{"model":"bge-m3","input":["a"],"encoding_format":"float","dimensions":256}"#
    );
    let openai = br#"{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0.5,-1]},{"object":"embedding","index":0,"embedding":[0.25,2e-3]}],"model":"bge-m3","usage":{"prompt_tokens":4,"total_tokens":4}}"#;
    let response = EmbeddingsResponse::from_json(openai).unwrap();
    assert_eq!(response.usage.unwrap().prompt_tokens, 4);
    assert_eq!(
        response.into_vectors(),
        vec![vec![0.25, 0.002], vec![0.5, -1.0]]
    );
    let ollama = br#"{"model":"bge-m3","embeddings":[[0.1,0.2],[0.3,0.4]],"total_duration":14143917,"load_duration":1019500,"prompt_eval_count":8}"#;
    let response = EmbedResponse::from_json(ollama).unwrap();
    assert_eq!(response.embeddings.len(), 2);
    assert_eq!(response.prompt_eval_count, Some(8));
    assert!(EmbedResponse::from_json(b"{\"embeddings\":1}").is_err());
}

fn parts(out: &str) -> Vec<Value> {
    assert!(out.ends_with("data: [DONE]\n\n"), "{out}");
    out.trim_end_matches("data: [DONE]\n\n")
        .split_terminator("\n\n")
        .map(|frame| serde_json::from_str(frame.strip_prefix("data: ").unwrap()).unwrap())
        .collect()
}

fn chunk(text: &str) -> TurnEvent {
    TurnEvent::Chunk { text: text.into() }
}

fn tool(call_id: &str, name: &str, input: Value) -> TurnEvent {
    TurnEvent::ToolStart {
        call_id: call_id.into(),
        name: name.into(),
        input,
    }
}

fn tool_end(call_id: &str, name: &str, ok: bool, output: Value) -> TurnEvent {
    TurnEvent::ToolEnd {
        call_id: call_id.into(),
        name: name.into(),
        ok,
        output,
    }
}

fn completed(message_id: &str, kind: MessageKind, usage: Option<Usage>) -> TurnEvent {
    TurnEvent::Completed {
        message_id: message_id.into(),
        kind,
        intent: None,
        confidence: None,
        usage,
        reply: None,
    }
}

#[test]
fn ai_sdk_stream_maps_every_turn_event() {
    assert_eq!(
        (HEADER_NAME, HEADER_VALUE),
        ("x-vercel-ai-ui-message-stream", "v1")
    );
    let mut encoder = AiSdkEncoder::new();
    let mut out = String::new();
    let events = [
        TurnEvent::Started {
            conversation_id: "c_1".into(),
            user_message_id: "u_1".into(),
            message_id: "m_1".into(),
        },
        chunk("Để em "),
        chunk("kiểm tra"),
        tool("c1", "get_warranty", json!({"serial": "1"})),
        tool_end("c1", "get_warranty", true, json!({"until": "2026"})),
        tool("c2", "search", json!({})),
        tool_end("c2", "search", false, json!("timeout")),
        TurnEvent::Progress {
            message: "Task 1/3".into(),
            percentage: Some(50.0),
            stage: None,
        },
        TurnEvent::Payload {
            kind: "table".into(),
            data: json!({"rows": []}),
        },
        chunk("Xong."),
        TurnEvent::Completed {
            message_id: "m_1".into(),
            kind: MessageKind::Warranty,
            intent: Some("warranty"),
            confidence: Some(0.5),
            usage: Some(Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
            }),
            reply: None,
        },
    ];
    for event in &events {
        encoder.encode(event, &mut out).unwrap();
    }
    assert_eq!(
        encoder.encode(&chunk("late"), &mut out),
        Err(EncodeError::AfterEnd)
    );
    assert!(!encoder.close(&mut out));
    assert_eq!(
        parts(&out),
        vec![
            json!({"type": "start", "messageId": "m_1"}),
            json!({"type": "start-step"}),
            json!({"type": "text-start", "id": "text-0"}),
            json!({"type": "text-delta", "id": "text-0", "delta": "Để em "}),
            json!({"type": "text-delta", "id": "text-0", "delta": "kiểm tra"}),
            json!({"type": "text-end", "id": "text-0"}),
            json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "get_warranty"}),
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "get_warranty", "input": {"serial": "1"}}),
            json!({"type": "tool-output-available", "toolCallId": "c1", "output": {"until": "2026"}}),
            json!({"type": "tool-input-start", "toolCallId": "c2", "toolName": "search"}),
            json!({"type": "tool-input-available", "toolCallId": "c2", "toolName": "search", "input": {}}),
            json!({"type": "tool-output-error", "toolCallId": "c2", "errorText": "timeout"}),
            json!({"type": "data-progress", "data": {"message": "Task 1/3", "percentage": 50.0}, "transient": true}),
            json!({"type": "data-payload", "data": {"kind": "table", "data": {"rows": []}}}),
            json!({"type": "text-start", "id": "text-1"}),
            json!({"type": "text-delta", "id": "text-1", "delta": "Xong."}),
            json!({"type": "text-end", "id": "text-1"}),
            json!({"type": "finish-step"}),
            json!({"type": "finish", "messageMetadata": {"message_id": "m_1", "kind": "warranty", "intent": "warranty", "confidence": 0.5, "usage": {"prompt_tokens": 3, "completion_tokens": 4}}}),
        ]
    );
}

#[test]
fn ai_sdk_failure_and_close() {
    let mut out = String::new();
    let mut encoder = AiSdkEncoder::new();
    encoder.encode(&chunk("a"), &mut out).unwrap();
    let failed = TurnEvent::Failed {
        code: "upstream",
        message: "Bận",
    };
    encoder.encode(&failed, &mut out).unwrap();
    let got = parts(&out);
    assert_eq!(
        got[got.len() - 2],
        json!({"type": "text-end", "id": "text-0"})
    );
    assert_eq!(
        got[got.len() - 1],
        json!({"type": "error", "errorText": "Bận"})
    );

    let mut out = String::new();
    let mut encoder = AiSdkEncoder::new();
    assert!(encoder.close(&mut out));
    assert!(encoder.is_ended());
    assert_eq!(
        out,
        "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"start-step\"}\n\n\
         data: {\"type\":\"error\",\"errorText\":\"The answer was interrupted.\"}\n\ndata: [DONE]\n\n"
    );
}

#[test]
fn openai_output_matches_openai_chunk_shapes() {
    let mut encoder =
        OpenAiChunkEncoder::new("chatcmpl-1", "shop", 1_700_000_000).include_usage(true);
    let mut out = String::new();
    let started = TurnEvent::Started {
        conversation_id: "c".into(),
        user_message_id: "u".into(),
        message_id: "m".into(),
    };
    encoder.encode(&started, &mut out).unwrap();
    encoder.encode(&chunk("Hi"), &mut out).unwrap();
    let payload = TurnEvent::Payload {
        kind: "list".into(),
        data: json!(1),
    };
    encoder.encode(&payload, &mut out).unwrap();
    let usage = Usage {
        prompt_tokens: 5,
        completion_tokens: 1,
    };
    let done = completed("m", MessageKind::Answer, Some(usage));
    encoder.encode(&done, &mut out).unwrap();
    let head = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"shop","#;
    assert_eq!(
        out,
        format!(
            "data: {head}\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"Hi\"}}}}]}}\n\n\
             data: {head}\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n\
             data: {head}\"choices\":[],\"usage\":{{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}}}\n\n\
             data: [DONE]\n\n"
        )
    );
    assert_eq!(
        encoder.encode(&chunk("x"), &mut out),
        Err(EncodeError::AfterEnd)
    );
    assert!(!encoder.close(&mut out));
}

#[test]
fn openai_output_names_the_stored_conversation_in_every_frame() {
    let mut encoder = OpenAiChunkEncoder::new("chatcmpl-1", "shop", 1)
        .include_usage(true)
        .with_chat_id(Some("conv-7".into()));
    let mut out = String::new();
    encoder.encode(&chunk("Hi"), &mut out).unwrap();
    let done = completed("m", MessageKind::Answer, None);
    encoder.encode(&done, &mut out).unwrap();
    let frames: Vec<&str> = out
        .split("\n\n")
        .filter(|f| !f.is_empty())
        .map(|f| f.strip_prefix("data: ").expect("data lines only"))
        .collect();
    assert_eq!(frames.len(), 4, "{out}");
    assert_eq!(frames[3], "[DONE]");
    for frame in &frames[..3] {
        let value: serde_json::Value = serde_json::from_str(frame).expect("JSON");
        assert_eq!(value["chat_id"], "conv-7", "{frame}");
        assert_eq!(value["object"], "chat.completion.chunk");
    }

    let mut failing = OpenAiChunkEncoder::new("c", "m", 0).with_chat_id(Some("conv-8".into()));
    let mut out = String::new();
    assert!(failing.close(&mut out));
    let first = out.lines().next().expect("a frame");
    let value: serde_json::Value =
        serde_json::from_str(first.strip_prefix("data: ").expect("data")).expect("JSON");
    assert_eq!(value["chat_id"], "conv-8");
    assert!(value["error"]["message"].is_string());
}
