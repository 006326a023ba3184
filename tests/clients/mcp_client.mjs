// Drive Concierge's MCP server with the official TypeScript SDK's client
// (@modelcontextprotocol/sdk: Client + StreamableHTTPClientTransport).
//
// Run by the end-to-end test `mcp::typescript_client_*` with one argument, the same JSON
// object as tests/clients/mcp_client.py takes; prints one JSON object with what the
// client saw.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const cfg = JSON.parse(process.argv[2]);

function connectTo(key) {
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(cfg.url), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'concierge-e2e', version: '1.0.0' });
  return { client, transport };
}

function toolResult(result) {
  const text = (result.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
  return {
    is_error: result.isError === true,
    structured: result.structuredContent ?? null,
    text,
  };
}

async function call(client, name, args) {
  return toolResult(await client.callTool({ name, arguments: args }));
}

const out = {};

{
  const { client, transport } = connectTo(cfg.key);
  const started = performance.now();
  await client.connect(transport);
  out.connect_seconds = (performance.now() - started) / 1000;
  out.protocol_version = transport.protocolVersion ?? null;
  out.server_name = client.getServerVersion()?.name ?? null;
  out.session_id = transport.sessionId ?? null;
  const listed = await client.listTools();
  out.tools = listed.tools.map((tool) => ({ name: tool.name, input_schema: tool.inputSchema }));
  out.search = await call(client, 'search_knowledge', { query: cfg.query });
  out.unknown_tool = await call(client, 'no_such_tool', {});
  out.invalid_arguments = await call(client, 'search_knowledge', { limit: 3 });
  out.warranty = await call(client, 'lookup_warranty', { serial: cfg.serial });
  out.warranty_unknown = await call(client, 'lookup_warranty', { serial: 'ZZZ-404-NOPE' });
  out.conversation_unknown = await call(client, 'get_conversation', {
    conversation_id: 'no-such-conversation',
  });
  out.send_stateless = await call(client, 'send_message', { message: cfg.message });
  out.send_stored = await call(client, 'send_message', {
    message: cfg.message,
    conversation_id: cfg.conversation_id,
  });
  out.conversation = await call(client, 'get_conversation', {
    conversation_id: cfg.conversation_id,
  });
  await transport.terminateSession();
  out.session_ended = transport.sessionId === undefined;
  await client.close();
}

{
  const { client, transport } = connectTo(cfg.other_key);
  await client.connect(transport);
  out.other_site = {
    search: await call(client, 'search_knowledge', { query: cfg.query }),
    conversation: await call(client, 'get_conversation', {
      conversation_id: cfg.conversation_id,
    }),
    send_stored: await call(client, 'send_message', {
      message: cfg.message,
      conversation_id: cfg.conversation_id,
    }),
  };
  await client.close();
}

{
  const { client, transport } = connectTo(null);
  const started = performance.now();
  try {
    await client.connect(transport);
    out.no_key_connected = true;
  } catch (error) {
    out.no_key_connected = false;
    out.no_key_error = String(error?.message ?? error);
    out.no_key_code = error?.code ?? null;
  }
  out.no_key_seconds = (performance.now() - started) / 1000;
}

console.log(JSON.stringify(out));
