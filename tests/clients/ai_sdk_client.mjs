// The Vercel AI SDK's own client code against a running Concierge Worker, for the e2e tests
// (tests/tests/e2e/ai_sdk.rs). One JSON value on stdin says what to do:
//
//   {"mode": "transport", "url": ".../api/chat", "headers": {...}, "chatId": "...",
//    "messages": [{"role": "user"|"assistant", "text": "...", "id"?, "parts"?}],
//    "timeoutMs": 20000}
//     sends the messages as `useChat` does: `DefaultChatTransport.sendMessages` (its default
//     body `{id, messages, trigger, messageId}`), UIMessages with ids from the package's
//     `generateId`;
//   {"mode": "format", "url": ".../conversations/{id}/messages?format=ai-sdk",
//    "headers": {...}, "content": "...", "timeoutMs": 20000}
//     posts a message and reads the response with the package's UI message stream parser
//     (`parseJsonEventStream` with `uiMessageChunkSchema`), as the transport does;
//   {"mode": "reconnect", "url": ".../api/chat", "headers": {...}, "chatId": "..."}
//     asks to resume the chat's stream as `useChat({resume: true})` does on load; prints
//     {"ok", "status", "resumed"} — or, with `"read": true` and a stream to resume, what
//     it assembled from it, as below.
//
// Either way the parts are assembled by `readUIMessageStream` (what `useChat` uses to build
// the assistant message). Prints one JSON line: the HTTP status and the stream header, the
// part types in order, the assembled message's text, metadata and data parts, the errors
// the stream reported, and whether the timeout cut it. A request the transport refuses
// (non-2xx) prints {"ok": false, "status", "body"}.
import {
  DefaultChatTransport,
  generateId,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
} from 'ai';

let raw = '';
for await (const piece of process.stdin) raw += piece;
const input = JSON.parse(raw);
const started = Date.now();
const abort = new AbortController();
const timer = setTimeout(() => abort.abort(new Error('timed out')), input.timeoutMs ?? 20000);

let response;
// Records the response as the transport received it (the transport's `fetch` option).
const recordingFetch = async (url, init) => {
  response = await fetch(url, init);
  return response;
};

async function partsStream() {
  if (input.mode === 'reconnect') {
    // `useChat({resume: true})` on load: null when there is no stream to resume.
    const transport = new DefaultChatTransport({ api: input.url, headers: input.headers, fetch: recordingFetch });
    const resumed = await transport.reconnectToStream({ chatId: input.chatId, abortSignal: abort.signal });
    // With `read`, a resumed stream is assembled like any other (below).
    if (resumed !== null && input.read) return resumed;
    console.log(JSON.stringify({ ok: true, status: response.status, resumed: resumed !== null }));
    process.exit(0);
  }
  if (input.mode === 'transport') {
    const transport = new DefaultChatTransport({
      api: input.url,
      headers: input.headers,
      fetch: recordingFetch,
    });
    const messages = input.messages.map((m) => ({
      id: m.id ?? generateId(),
      role: m.role,
      parts: m.parts ?? [{ type: 'text', text: m.text }],
    }));
    return transport.sendMessages({
      chatId: input.chatId ?? generateId(),
      messages,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: abort.signal,
    });
  }
  await recordingFetch(input.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...input.headers },
    body: JSON.stringify({ content: input.content }),
    signal: abort.signal,
  });
  if (!response.ok) {
    const error = new Error('request refused');
    error.statusCode = response.status;
    error.responseBody = await response.text();
    throw error;
  }
  return parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      },
    }),
  );
}

const out = { ok: true };
try {
  let stream;
  try {
    stream = await partsStream();
  } catch (error) {
    if (error?.statusCode === undefined) throw error;
    console.log(JSON.stringify({ ok: false, status: error.statusCode, body: error.responseBody }));
    process.exit(0);
  }
  out.status = response.status;
  out.header = response.headers.get('x-vercel-ai-ui-message-stream');
  out.contentType = response.headers.get('content-type');
  out.allowOrigin = response.headers.get('access-control-allow-origin');
  const types = [];
  const counted = stream.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        types.push(chunk.type);
        controller.enqueue(chunk);
      },
    }),
  );
  const errors = [];
  let message;
  try {
    for await (const snapshot of readUIMessageStream({ stream: counted, onError: (e) => errors.push(e.message) })) {
      message = snapshot;
    }
  } catch (error) {
    // A broken stream (e.g. cut by the timeout).
    errors.push(`stream: ${error?.message ?? error}`);
  }
  out.types = types;
  out.errors = errors;
  out.messageId = message?.id ?? null;
  out.text = (message?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');
  out.textStates = (message?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.state);
  out.metadata = message?.metadata ?? null;
  out.data = (message?.parts ?? []).filter((p) => p.type.startsWith('data-')).map((p) => ({ type: p.type, data: p.data }));
} catch (error) {
  out.ok = false;
  out.thrown = String(error?.message ?? error);
}
out.timedOut = abort.signal.aborted;
out.elapsedMs = Date.now() - started;
clearTimeout(timer);
console.log(JSON.stringify(out));
