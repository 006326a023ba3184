// The conversation's life beyond the panel's own requests, in plain JS (widget/src/live.rs
// starts it; plain JS keeps the widget inside its download budget, scripts/sizes.sh):
// - resume: `reopen(after)` asks `GET /conversations/{id}/stream` for a turn's events after
//   event `after` (the Worker numbers every event of a conversation, `id:`), with backoff
//   while the network is down, and hands the body's reader to the panel, which reads it
//   into the same answer (widget/src/chat/follow.rs). The running turn's first event id is
//   kept in localStorage with the conversation id (`turn`), so after a reload mid-answer
//   the panel follows the turn from its start; `done` forgets it.
// - live: `start` reads `GET /conversations/{id}/events` (fetch: EventSource cannot send
//   the key headers) until the conversation changes, reconnecting with `Last-Event-ID`.
//   Another client's turn is followed through `reopen` like one of its own: a `started`
//   of a turn this panel is not reading, or one right after another tab's visitor message
//   (also while the panel's own post waits in line behind it, or its own turn runs); a
//   stored message from elsewhere (another tab's visitor message, a person's reply, the
//   line a handoff change leaves in the log) is handed to the panel, which draws it as
//   history does. The live stream starts with the handoff's current state (a frame without
//   an id), so after a reload the panel says who holds the conversation. The panel's own messages coming
//   back are not shown twice. A stream the server ends says why last (`closed` `{code,
//   reconnect}`): after its bounded life (`reconnect`) it is opened again at once; after
//   the conversation's deletion, a key rotation or the token's expiry it is not (a new
//   `start` with a fresh token follows it again).

let session = {}; // conversation id, API headers, words, the panel's callback
let generation = 0;
let controller;
let busy = false; // the panel sent a message and reads its turn
let first = -1; // the first event id of the turn the panel reads
const mine = new Set(); // first event ids of the turns the panel read itself
const shown = new Set(); // ids of the messages handed to the panel
let echoes = []; // the visitor's messages sent from here, not yet back
let seen = -1; // the live stream's last event id
let state = "none"; // the handoff's state
let foreign = false; // the last visitor message came from elsewhere (its turn is not ours)
let closed = null; // why the server ended the live stream (`closed`), if it said
const slot = () => "concierge.turn." + session.site;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function get(route, after, signal, method) {
  const headers = { accept: "text/event-stream", "x-api-key": session.key, "x-embedder-origin": session.embedder };
  if (session.token) headers["x-user-token"] = session.token;
  if (after >= 0) headers["last-event-id"] = String(after);
  return fetch(`/conversations/${encodeURIComponent(session.id)}/${route}`, { method, headers, signal, cache: "no-store" });
}

/** Follow conversation `id` live, on behalf of the panel (`on(kind, text, author, raw)`,
 * kind `user`, `assistant` (the stored message in `raw`), `notice` or `follow` with the
 * turn's first event id). Words: [a person, "{0} is answering"]. */
export function start(id, site, key, embedder, token, words, on) {
  stop();
  session = { id, site, key, embedder, token, words, on };
  seen = -1;
  state = "none";
  foreign = false;
  live(generation);
}

/** Stop following (a new conversation, another identity). */
export function stop() {
  generation++;
  controller?.abort();
}

/** The Stop button: the server stops the running turn (the panel's stream then ends with
 * what it kept, marked stopped); when it stopped none (the post still waits in line, or the
 * route is unknown), the panel's `request` is aborted instead. */
export function halt(request) {
  const r = () => request.abort();
  get("stop", -1, null, "POST").then((s) => s.status == 200 || r(), r);
}

/** Whether the panel's own post waits in line (sent, its turn not started yet). */
export const queued = () => busy && first < 0;

/** The panel sends `text` and will read its turn. */
export function sending(text) {
  busy = true;
  echoes = [...echoes.slice(-3), text];
}

/** The panel read event `id` of the turn it reads (the first one is kept). */
export function turn(id) {
  busy = true;
  if (first >= 0) return;
  first = id;
  mine.add(id);
  try {
    localStorage.setItem(slot(), session.id + " " + id);
  } catch (_) {}
}

/** The turn the panel read is over. */
export function done() {
  busy = false;
  first = -1;
  try {
    localStorage.removeItem(slot());
  } catch (_) {}
}

/** After a reload: the event before the turn this panel was reading, or -2 when it read
 * none of this conversation's (then nothing is followed). */
export function resumed() {
  const [id, first] = (localStorage.getItem(slot()) || "").split(" ");
  done();
  return id == session.id && first ? Number(first) - 1 : -2;
}

/** A reader of the turn's events after `after` (-1: from its start), asked again with
 * backoff while the network fails; null when there is nothing more (204), on a refusal,
 * once `signal` aborts, or after about 25 s. */
export async function reopen(after, signal) {
  for (let i = 0; i < 8; i++) {
    if (i) await sleep(500 << Math.min(i - 1, 3));
    if (signal?.aborted) return null;
    try {
      const r = await get("stream", after, signal);
      if (r.ok && r.status != 204) return r.body.getReader();
      if (r.ok || (r.status < 500 && r.status != 429)) return null;
    } catch (_) {}
  }
  return null;
}

async function live(mark) {
  let delay = 1000;
  while (mark == generation) {
    controller = new AbortController();
    try {
      const r = await get("events", seen, controller.signal);
      // No live route, a refusal, or nothing to follow: stop.
      if (r.status == 204 || (r.status < 500 && r.status != 429 && !r.ok)) return;
      if (r.ok) {
        delay = 1000;
        closed = null;
        await read(r.body.getReader(), mark);
        // Ended by the server: again at once after its bounded life, never otherwise.
        if (closed && !closed.reconnect) return;
        if (closed) continue;
      }
    } catch (_) {}
    if (mark != generation) return;
    await sleep(delay);
    delay = Math.min(delay * 2, 15000);
  }
}

/** Read SSE frames (`event:`, `data:`, `id:`; comments are pings). */
async function read(reader, mark) {
  const decoder = new TextDecoder();
  let buffer = "";
  let frame = { data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done || mark != generation) return;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (!line) {
        if (frame.data.length) handle(frame.event || "message", frame.data.join("\n"), frame.id);
        frame = { data: [] };
        continue;
      }
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const text = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field == "data") frame.data.push(text);
      else if (field == "event") frame.event = text;
      else if (field == "id") frame.id = text;
    }
  }
}

function handle(name, data, id) {
  const n = id == null || id === "" ? -1 : Number(id);
  if (n >= 0) {
    if (n <= seen) return; // seen before a reconnection
    seen = n;
  }
  let d;
  try {
    d = JSON.parse(data);
  } catch (_) {
    return;
  }
  const { on, words } = session;
  if (name == "closed") closed = d;
  else if (name == "handoff") {
    const before = state;
    state = d.state;
    // What changed comes as the line the change left in the log (a stored `handoff`
    // message, below, shown as history shows it); on attaching (no id), who holds it.
    if (n < 0 && state == "held" && before != "held") {
      on("notice", words[1].replace("{0}", d.agent ? words[0] + " · " + d.agent : words[0]), "", null);
    }
  } else if (name == "message" && d.role) {
    if (d.id && shown.has(d.id)) return;
    shown.add(d.id);
    const echo = d.role == "user" ? echoes.indexOf(d.content) : -1;
    if (d.role == "user") foreign = echo < 0;
    if (echo >= 0) echoes.splice(echo, 1);
    else if (d.role == "user" || d.role == "assistant") on(d.role, String(d.content || ""), "", d);
  } else if (name == "started" && n >= 0) {
    // `foreign`: another tab's visitor message came just before (its turn, surely not ours).
    if (!mine.has(n) && (foreign || !busy)) on("follow", String(n), foreign ? "1" : "", null);
    foreign = false;
  }
}
