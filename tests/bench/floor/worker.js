// The durable floor: the least a durable conversation does per turn, with none of
// Concierge's logic, in the design Concierge follows since issue 47: the conversation's
// object is its record. The Worker forwards the turn to the conversation's object; the
// object asks the upstream, stores the visitor's message in its own SQLite meanwhile,
// passes the upstream's stream on untouched while keeping its text, and stores that text as
// the reply when the stream ends. Used only by `make bench-e2e`.
const SCHEMA =
  "CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, " +
  "seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, UNIQUE (conversation_id, seq))";
const INSERT =
  "INSERT INTO messages (id, conversation_id, seq, role, content) VALUES (?1, ?2, " +
  "(SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?2), ?3, ?4)";

export class Conversation {
  constructor(state) {
    this.sql = state.storage.sql;
    this.sql.exec(SCHEMA);
  }

  async fetch(request) {
    // `POST /warm`: the object started (as a conversation's creation starts Concierge's).
    if (new URL(request.url).pathname === "/warm") return new Response(null, { status: 204 });
    const { upstream, conversation, body } = await request.json();
    const store = async (role, content) => {
      this.sql.exec(INSERT, crypto.randomUUID(), conversation, role, content);
    };
    const asked = fetch(`${upstream}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const stored = store("user", body);
    const answer = await asked;
    await stored;
    let text = "";
    const decoder = new TextDecoder();
    const kept = new TransformStream({
      transform(chunk, controller) {
        text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
      flush: () => store("assistant", text),
    });
    answer.body.pipeTo(kept.writable);
    return new Response(kept.readable, { headers: { "content-type": "text/event-stream" } });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    // Each object creates its own table: nothing to set up.
    if (url.pathname === "/setup") return new Response("ok");
    const conversation = url.searchParams.get("conversation");
    const object = env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(conversation));
    if (url.pathname === "/warm") return object.fetch("https://object/warm", { method: "POST" });
    return object.fetch("https://object/turn", {
      method: "POST",
      body: JSON.stringify({
        upstream: url.searchParams.get("upstream"),
        conversation,
        body: await request.text(),
      }),
    });
  },
};
