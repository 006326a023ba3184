// The widget's live stream (widget/js/live.js) as the server ends it (issue 39): after its
// bounded life (`closed` `stream_expired`, reconnect) the widget opens it again at once;
// after the conversation's deletion, a key rotation or the token's expiry it does not.
// Run: `node --test tests/widget-live/` (scripts/test.sh). `fetch` is scripted here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { start, stop } from "../../widget/js/live.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();

/** A `fetch` answering the live stream with `bodies` in turn (each an SSE text, then the
 * end), and 404 once they are used up; the requests it got. */
function scripted(bodies) {
  const asked = [];
  globalThis.fetch = async (url, init) => {
    asked.push({ url, headers: init.headers });
    const text = bodies.shift();
    if (text === undefined) return new Response("{}", { status: 404 });
    const body = new ReadableStream({
      start(c) {
        c.enqueue(enc.encode(text));
        c.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  return asked;
}

const words = ["a person", "{0} answers"];
const state = 'event: handoff\ndata: {"state":"none"}\n\n';
const closed = (code, reconnect) =>
  `event: closed\ndata: ${JSON.stringify({ code, message: code, reconnect })}\n\n`;

test("after its bounded life the stream is opened again at once, with the last event id", async () => {
  const asked = scripted([
    state + 'event: message\nid: 7\ndata: {"id":"m","role":"user","content":"x"}\n\n' + closed("stream_expired", true),
    state + closed("conversation_deleted", false),
  ]);
  start("c1", "s", "pk", "https://shop.example", "", words, () => {});
  await sleep(300);
  assert.equal(asked.length, 2, "reconnected once, without waiting");
  assert.equal(asked[1].headers["last-event-id"], "7");
  await sleep(1500);
  assert.equal(asked.length, 2, "not after the conversation was deleted");
  stop();
});

for (const code of ["conversation_deleted", "keys_rotated", "token_expired"]) {
  test(`after ${code} the stream is not opened again`, async () => {
    const asked = scripted([state + closed(code, false), state]);
    start("c2", "s", "pk", "https://shop.example", "tok", words, () => {});
    await sleep(1800);
    assert.equal(asked.length, 1);
    stop();
  });
}

test("a stream that broke without saying why is opened again after a pause", async () => {
  const asked = scripted([state, state + closed("conversation_deleted", false)]);
  start("c3", "s", "pk", "https://shop.example", "", words, () => {});
  await sleep(300);
  assert.equal(asked.length, 1, "waits before reconnecting");
  await sleep(1200);
  assert.equal(asked.length, 2);
  stop();
});

test("a handoff change reaches the panel as its stored line; on attaching, who holds it", async () => {
  const line = { id: "n1", role: "assistant", kind: "handoff", content: "Lan đã tham gia cuộc trò chuyện.",
    metadata: { handoff: "joined", agent: "Lan" } };
  scripted([
    'event: handoff\ndata: {"state":"held","agent":"Lan"}\n\n'
      + 'event: handoff\nid: 3\ndata: {"state":"none"}\n\n'
      + 'event: handoff\nid: 4\ndata: {"state":"held","agent":"Lan"}\n\n'
      + `event: message\nid: 5\ndata: ${JSON.stringify(line)}\n\n`
      + closed("conversation_deleted", false),
  ]);
  const got = [];
  start("c4", "s", "pk", "https://shop.example", "", words, (kind, text, author, raw) => got.push([kind, text, raw ? raw.metadata : null]));
  await sleep(300);
  assert.deepEqual(got, [
    // The state on attaching (no id): who answers now.
    ["notice", "a person · Lan answers", null],
    // A change: no notice of its own; the line it left in the log, as stored.
    ["assistant", line.content, line.metadata],
  ]);
  stop();
});
