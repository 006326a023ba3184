//! The MCP tools each template offers (`tools/list`, `tools/call`), through the core's
//! registry ([`Template::mcp_tools`]).
#![allow(clippy::unwrap_used)]

use concierge_core::flows::Template;
use concierge_core::mcp::tools::{DEFAULT_SEARCH_LIMIT, ToolCall, list, parse_call};
use serde_json::{Map, Value, json};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[test]
fn every_tool_has_an_object_schema_and_shop_adds_its_warranty_lookup() {
    let shop = list(&Template::Shop.mcp_tools());
    let names: Vec<&str> = shop.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "search_knowledge",
            "get_conversation",
            "send_message",
            "lookup_warranty"
        ]
    );
    for tool in &shop {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object");
        for required in schema["required"].as_array().unwrap() {
            let key = required.as_str().unwrap();
            assert!(schema["properties"].get(key).is_some(), "{key}");
        }
    }
    let analyst = list(&Template::Analyst.mcp_tools());
    assert!(analyst.iter().all(|t| t["name"] != "lookup_warranty"));
}

#[test]
fn arguments_that_fit_become_calls() {
    let call = parse_call(
        &Template::Shop.mcp_tools(),
        "search_knowledge",
        args(json!({"query": " đổi trả "})),
    );
    assert_eq!(
        call,
        Ok(ToolCall::SearchKnowledge {
            query: "đổi trả".into(),
            limit: DEFAULT_SEARCH_LIMIT
        })
    );
    let call = parse_call(
        &Template::Shop.mcp_tools(),
        "send_message",
        args(json!({"message": "hi", "conversation_id": "c1"})),
    );
    assert_eq!(
        call,
        Ok(ToolCall::SendMessage {
            message: "hi".into(),
            conversation_id: Some("c1".into())
        })
    );
    let call = parse_call(
        &Template::Shop.mcp_tools(),
        "lookup_warranty",
        args(json!({"serial": "0979825281"})),
    );
    assert_eq!(
        call,
        Ok(ToolCall::LookupWarranty {
            serial: "0979825281".into()
        })
    );
}

#[test]
fn unknown_tools_and_arguments_off_the_schema_are_tool_errors_naming_the_problem() {
    let cases = [
        ("no_such_tool", json!({}), "Unknown tool: no_such_tool"),
        ("search_knowledge", json!({}), "`query` is required"),
        (
            "search_knowledge",
            json!({"query": 5}),
            "`query` must be a string",
        ),
        (
            "search_knowledge",
            json!({"query": "  "}),
            "`query` must be 1 to",
        ),
        (
            "search_knowledge",
            json!({"query": "a", "limit": 0}),
            "`limit`",
        ),
        (
            "search_knowledge",
            json!({"query": "a", "limit": 9}),
            "`limit`",
        ),
        (
            "search_knowledge",
            json!({"query": "a", "limit": "2"}),
            "`limit`",
        ),
        (
            "search_knowledge",
            json!({"query": "a", "top": 2}),
            "unknown argument `top`",
        ),
        (
            "get_conversation",
            json!({"conversation_id": ""}),
            "`conversation_id`",
        ),
        (
            "send_message",
            json!({"conversation_id": "c"}),
            "`message` is required",
        ),
        (
            "lookup_warranty",
            json!({"serial": "AB 12"}),
            "`serial` must be 3 to 32",
        ),
    ];
    for (name, arguments, expected) in cases {
        let error = parse_call(&Template::Shop.mcp_tools(), name, args(arguments)).expect_err(name);
        assert!(error.contains(expected), "{name}: {error}");
    }
    let error = parse_call(
        &Template::Analyst.mcp_tools(),
        "lookup_warranty",
        args(json!({"serial": "ABC"})),
    );
    assert_eq!(error, Err("Unknown tool: lookup_warranty".to_string()));
}
