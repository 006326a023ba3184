"""Drive Concierge's MCP server with the official Python `mcp` client (Streamable HTTP).

Run by the end-to-end test `mcp::python_client_*` with one argument, a JSON object:
  url                 the server (http://127.0.0.1:<port>/mcp)
  key                 site A's secret key
  other_key           site B's secret key
  query               a knowledge query that finds site A's document
  serial              a warranty serial seeded on site A
  message             a message site A's assistant answers through its (scripted) model
  conversation_id     a stored conversation of site A
Prints one JSON object with what the client saw; the Rust test asserts on it.
"""

import asyncio
import json
import sys
import time

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def client(url, key):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60))
    return Client(streamable_http_client(url, http_client=http))


def tool_result(result):
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    return {
        "is_error": result.is_error,
        "structured": result.structured_content,
        "text": "\n".join(texts),
    }


def describe(error):
    """The first leaf of an exception group (anyio wraps the client's errors in them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


async def call(session, name, arguments):
    return tool_result(await session.call_tool(name, arguments))


async def main():
    cfg = json.loads(sys.argv[1])
    url = cfg["url"]
    out = {}

    started = time.monotonic()
    async with client(url, cfg["key"]) as session:
        out["connect_seconds"] = time.monotonic() - started
        out["protocol_version"] = session.protocol_version
        out["server_name"] = session.server_info.name if session.server_info else None
        listed = await session.list_tools()
        out["tools"] = [
            {"name": tool.name, "input_schema": tool.input_schema} for tool in listed.tools
        ]
        out["search"] = await call(session, "search_knowledge", {"query": cfg["query"]})
        out["unknown_tool"] = await call(session, "no_such_tool", {})
        out["invalid_arguments"] = await call(session, "search_knowledge", {"limit": 3})
        out["warranty"] = await call(session, "lookup_warranty", {"serial": cfg["serial"]})
        out["warranty_unknown"] = await call(session, "lookup_warranty", {"serial": "ZZZ-404-NOPE"})
        out["conversation_unknown"] = await call(
            session, "get_conversation", {"conversation_id": "no-such-conversation"}
        )
        out["send_stateless"] = await call(session, "send_message", {"message": cfg["message"]})
        out["send_stored"] = await call(
            session,
            "send_message",
            {"message": cfg["message"], "conversation_id": cfg["conversation_id"]},
        )
        out["conversation"] = await call(
            session, "get_conversation", {"conversation_id": cfg["conversation_id"]}
        )

    async with client(url, cfg["other_key"]) as other:
        out["other_site"] = {
            "search": await call(other, "search_knowledge", {"query": cfg["query"]}),
            "conversation": await call(
                other, "get_conversation", {"conversation_id": cfg["conversation_id"]}
            ),
            "send_stored": await call(
                other,
                "send_message",
                {"message": cfg["message"], "conversation_id": cfg["conversation_id"]},
            ),
        }

    # Without the key: the server refuses with 401 before any JSON-RPC, and the client
    # fails to connect (an exception, not a hang).
    async with httpx2.AsyncClient() as http:
        probe = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={"accept": "application/json, text/event-stream"},
        )
        out["no_key_status"] = probe.status_code
    started = time.monotonic()
    try:
        async with client(url, None):
            out["no_key_connected"] = True
    except Exception as error:  # the client's own error for a refused handshake
        out["no_key_connected"] = False
        out["no_key_error"] = describe(error)
    out["no_key_seconds"] = time.monotonic() - started

    print(json.dumps(out, ensure_ascii=False))


asyncio.run(main())
