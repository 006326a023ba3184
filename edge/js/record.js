// The conversation's record in its own Durable Object (issue 47, item 1): the object's
// SQLite holds the conversation's rows (`conversations`, `messages`, `summaries`,
// `message_feedback`) in the shared D1's schema, so the store's SQL runs unchanged on
// either. Three D1-shaped handles (prepare/bind/first/all/run/raw, batch) let the Rust
// store reach it:
//
// - `localDb(storage, d1)`: inside the object, over `storage.sql`; a batch is one
//   `transactionSync`. Statements run in microseconds and never wait for another site.
// - `remoteDb(namespace, site, conversation, fresh)`: in the Worker, whose writes to a
//   conversation (its creation, a vote, an embedding's mark) run in the conversation's
//   object (`POST /sql`), the one writer of its rows.
// - `execute(db, body)`: the object's side of `remoteDb`.
//
// Every change to the record is noted by triggers in `outbox` and sent to the shared D1
// (upserts and deletes by primary key, in an order its foreign keys accept), which the
// console and the site-wide reads still read (until the site's object holds them): one D1
// batch, started after the visitor's message is stored and awaited before a turn's reply
// is final, serialised per object; a flush that fails is tried again by the object's alarm,
// and nothing is lost meanwhile (the object is the record). A conversation the shared D1
// held before this record existed is imported from it on the object's first use.

const SEP = "\u001f";

// The record's tables: their columns (the shared D1's, in order) and primary keys.
const TABLES = {
  conversations: {
    key: ["id"],
    columns: [
      "id", "site_id", "user_id", "language", "created_at", "updated_at", "identity", "template",
      "handoff_state", "handoff_requested_at", "handoff_since", "handoff_agent", "handoff_client",
    ],
  },
  messages: {
    key: ["id"],
    columns: [
      "id", "site_id", "conversation_id", "seq", "role", "kind", "content", "metadata",
      "embedding_status", "created_at", "chunk_count", "reply_id", "idempotency_key",
      "tool_steps", "payloads", "compressed",
    ],
  },
  summaries: {
    key: ["conversation_id"],
    columns: ["conversation_id", "site_id", "content", "upto_seq", "updated_at"],
  },
  message_feedback: {
    key: ["message_id", "voter"],
    columns: [
      "site_id", "conversation_id", "message_id", "voter", "rating", "comment", "created_at",
      "updated_at",
    ],
  },
};

// Upserts parents first, deletes children first: the shared D1 enforces its foreign keys.
const UPSERT_ORDER = ["conversations", "messages", "summaries", "message_feedback"];
const DELETE_ORDER = ["message_feedback", "summaries", "messages", "conversations"];

const SCHEMA = `
CREATE TABLE IF NOT EXISTS record_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, site_id TEXT NOT NULL, user_id TEXT,
  language TEXT NOT NULL DEFAULT 'vi', created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  identity TEXT, template TEXT,
  handoff_state TEXT NOT NULL DEFAULT 'none' CHECK (handoff_state IN ('none', 'waiting', 'held')),
  handoff_requested_at INTEGER, handoff_since INTEGER, handoff_agent TEXT, handoff_client TEXT);
CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY, site_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  kind TEXT NOT NULL, content TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}',
  embedding_status TEXT NOT NULL DEFAULT 'pending'
    CHECK (embedding_status IN ('pending', 'done', 'failed', 'skipped')),
  created_at INTEGER NOT NULL, chunk_count INTEGER NOT NULL DEFAULT 0, reply_id TEXT,
  idempotency_key TEXT, tool_steps TEXT, payloads TEXT, compressed INTEGER NOT NULL DEFAULT 0,
  UNIQUE (conversation_id, seq));
CREATE UNIQUE INDEX IF NOT EXISTS messages_by_idempotency_key
  ON messages (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS summaries (
  conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
  site_id TEXT NOT NULL, content TEXT NOT NULL, upto_seq INTEGER NOT NULL,
  updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS message_feedback (
  site_id TEXT NOT NULL,
  conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  voter TEXT NOT NULL, rating INTEGER NOT NULL CHECK (rating IN (-1, 1)), comment TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (message_id, voter));
CREATE TABLE IF NOT EXISTS outbox (
  tbl TEXT NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (tbl, key));
${Object.entries(TABLES)
  .map(([table, { key }]) =>
    ["INSERT", "UPDATE", "DELETE"]
      .map((op) => {
        const row = op === "DELETE" ? "OLD" : "NEW";
        const id = key.map((k) => `${row}.${k}`).join(` || char(31) || `);
        return `CREATE TRIGGER IF NOT EXISTS outbox_${table}_${op.toLowerCase()} AFTER ${op} ON ${table}
  BEGIN INSERT INTO outbox (tbl, key) VALUES ('${table}', ${id})
  ON CONFLICT (tbl, key) DO UPDATE SET n = n + 1; END;`;
      })
      .join("\n"),
  )
  .join("\n")}
`;

// ---- The local handle (inside the object).

/** The bound value as SQLite takes it (D1's own conversions: booleans are 0/1). */
function value(v) {
  if (v === undefined) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  return v;
}

function runOne(sql, query, params) {
  const cursor = sql.exec(query, ...params);
  const results = cursor.toArray();
  const written = cursor.rowsWritten;
  let changes = 0;
  let last = 0;
  if (written > 0) {
    const info = sql.exec("SELECT changes() AS c, last_insert_rowid() AS r").one();
    changes = info.c;
    last = info.r;
  }
  return {
    success: true,
    results,
    meta: {
      changes,
      last_row_id: last,
      rows_read: cursor.rowsRead,
      rows_written: written,
      changed_db: written > 0,
      duration: 0,
      size_after: 0,
    },
  };
}

/** A failure shaped as the store reads D1's (its text carries SQLite's reason). */
function failure(error) {
  const why = String((error && error.message) || error);
  return new Error(`D1_ERROR: ${why}`, { cause: new Error(why) });
}

// A statement of either handle (its `db` runs it: `single`).
class Statement {
  constructor(db, query, params) {
    this.db = db;
    this.query = query;
    this.params = params;
  }
  bind(...params) {
    return new Statement(this.db, this.query, params.map(value));
  }
  all() {
    return this.db.single(this);
  }
  run() {
    return this.db.single(this);
  }
  async first(column) {
    const result = await this.db.single(this);
    const row = result.results[0];
    if (row === undefined) return null;
    return column === undefined || column === null ? row : (row[column] ?? null);
  }
  async raw() {
    const result = await this.db.single(this);
    return result.results.map((row) => Object.values(row));
  }
}

// What an object knows of its record: the storage, the shared D1 it sends changes to, the
// chain of flushes (one at a time), and whether the record is open (schema, import).
class Record {
  constructor(storage, d1) {
    this.storage = storage;
    this.d1 = d1;
    this.chain = Promise.resolve();
    this.open = false;
  }
  prepare(query) {
    return new Statement(this, query, []);
  }
  single(statement) {
    try {
      const result = runOne(this.storage.sql, statement.query, statement.params);
      if (result.meta.changed_db) this.later();
      return Promise.resolve(result);
    } catch (error) {
      return Promise.reject(failure(error));
    }
  }
  batch(statements) {
    try {
      const sql = this.storage.sql;
      const results = this.storage.transactionSync(() =>
        statements.map((s) => runOne(sql, s.query, s.params)),
      );
      if (results.some((r) => r.meta.changed_db)) this.later();
      return Promise.resolve(results);
    } catch (error) {
      return Promise.reject(failure(error));
    }
  }
  exec(query) {
    try {
      this.storage.sql.exec(query);
      this.later();
      return Promise.resolve({ count: 1, duration: 0 });
    } catch (error) {
      return Promise.reject(failure(error));
    }
  }
  // A flush after this one (its failure leaves an alarm to try again).
  later() {
    this.flush().catch(() => {});
  }
  // Sends every noted change to the shared D1, after the flushes before it.
  flush() {
    const next = this.chain.then(
      () => drain(this),
      () => drain(this),
    );
    this.chain = next.catch(() => retryLater(this.storage));
    return next;
  }
}

async function retryLater(storage) {
  try {
    const at = await storage.getAlarm();
    const want = Date.now() + 10_000;
    if (at === null || at === undefined || at > want) await storage.setAlarm(want);
  } catch (_) {
    // The next write or request flushes again.
  }
}

function keyOf(table, row) {
  return TABLES[table].key.map((k) => String(row[k])).join(SEP);
}

// One round: up to 200 noted changes, sent in one D1 batch, then forgotten (unless changed
// again meanwhile). Answers how many were sent.
async function flushOnce(record) {
  const sql = record.storage.sql;
  const noted = sql.exec("SELECT tbl, key, n FROM outbox ORDER BY rowid LIMIT 200").toArray();
  if (noted.length === 0) return 0;
  const upserts = {};
  const deletes = {};
  for (const { tbl, key } of noted) {
    const spec = TABLES[tbl];
    if (!spec) continue;
    const parts = key.split(SEP);
    const where = spec.key.map((k, i) => `${k} = ?${i + 1}`).join(" AND ");
    const row = sql.exec(`SELECT ${spec.columns.join(", ")} FROM ${tbl} WHERE ${where}`, ...parts).toArray()[0];
    if (row) (upserts[tbl] ||= []).push(row);
    else (deletes[tbl] ||= []).push(parts);
  }
  const d1 = record.d1;
  const statements = [];
  for (const tbl of DELETE_ORDER) {
    const spec = TABLES[tbl];
    for (const parts of deletes[tbl] || []) {
      const where = spec.key.map((k, i) => `${k} = ?${i + 1}`).join(" AND ");
      statements.push(d1.prepare(`DELETE FROM ${tbl} WHERE ${where}`).bind(...parts));
    }
  }
  for (const tbl of UPSERT_ORDER) {
    const { key, columns } = TABLES[tbl];
    const update = columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
    const query =
      `INSERT INTO ${tbl} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")}) ` +
      `ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${update.join(", ")}`;
    for (const row of upserts[tbl] || []) {
      statements.push(d1.prepare(query).bind(...columns.map((c) => row[c])));
    }
  }
  if (statements.length > 0) await d1.batch(statements);
  record.storage.transactionSync(() => {
    for (const { tbl, key, n } of noted) {
      sql.exec("DELETE FROM outbox WHERE tbl = ?1 AND key = ?2 AND n = ?3", tbl, key, n);
    }
  });
  return noted.length;
}

async function drain(record) {
  for (let round = 0; round < 50; round++) {
    if ((await flushOnce(record)) === 0) return;
  }
}

/** The D1-shaped handle on an object's own record (`storage`: the object's; `d1`: the shared D1). */
export function localDb(storage, d1) {
  return new Record(storage, d1);
}

/**
 * Opens `db`'s record for conversation `conversation` of `site`: its tables, and its rows
 * imported from the shared D1 the first time (unless `fresh`: a conversation being created
 * has none there). Idempotent; concurrent calls share one import.
 */
export function open(db, site, conversation, fresh) {
  if (db.open) return Promise.resolve();
  if (!db.opening) {
    db.opening = openRecord(db, site, conversation, fresh).then(
      () => {
        db.open = true;
        db.opening = null;
      },
      (error) => {
        db.opening = null;
        throw failure(error);
      },
    );
  }
  return db.opening;
}

async function openRecord(db, site, conversation, fresh) {
  const sql = db.storage.sql;
  sql.exec(SCHEMA);
  const done = sql.exec("SELECT value FROM record_meta WHERE key = 'imported'").toArray();
  if (done.length > 0) return;
  let found = [];
  if (!fresh) {
    const d1 = db.d1;
    const by = (table, column) =>
      d1
        .prepare(`SELECT * FROM ${table} WHERE ${column} = ?1 AND site_id = ?2`)
        .bind(conversation, site);
    const results = await d1.batch([
      by("conversations", "id"),
      by("messages", "conversation_id"),
      by("summaries", "conversation_id"),
      by("message_feedback", "conversation_id"),
    ]);
    found = UPSERT_ORDER.map((table, i) => [table, results[i].results || []]);
  }
  db.storage.transactionSync(() => {
    for (const [table, rows] of found) {
      const { columns } = TABLES[table];
      const query = `INSERT OR REPLACE INTO ${table} (${columns.join(", ")}) VALUES (${columns
        .map((_, i) => `?${i + 1}`)
        .join(", ")})`;
      for (const row of rows) sql.exec(query, ...columns.map((c) => value(row[c])));
    }
    // Imported rows are the shared D1's already.
    sql.exec("DELETE FROM outbox");
    sql.exec("INSERT INTO record_meta (key, value) VALUES ('imported', ?1)", String(Date.now()));
  });
}

/** Waits for every change noted so far to reach the shared D1 (rejects if it cannot). */
export function settle(db) {
  return db.flush();
}

/** Forgets that the record is open (the object's storage was deleted). */
export function closed(db) {
  db.open = false;
}

// ---- The remote handle (the Worker's) and the object's side of it.

class Remote {
  constructor(namespace, site, conversation, fresh) {
    this.namespace = namespace;
    this.site = site;
    this.conversation = conversation;
    this.fresh = fresh;
  }
  prepare(query) {
    return new Statement(this, query, []);
  }
  async single(statement) {
    return (await this.send([statement]))[0];
  }
  batch(statements) {
    return this.send(statements);
  }
  async exec(query) {
    await this.send([new Statement(this, query, [])]);
    return { count: 1, duration: 0 };
  }
  async send(statements) {
    const stub = this.namespace.get(this.namespace.idFromName(`${this.site}/${this.conversation}`));
    const headers = {
      "content-type": "application/json",
      "x-concierge-site": this.site,
      "x-concierge-conversation": this.conversation,
    };
    if (this.fresh) headers["x-concierge-fresh"] = "1";
    const response = await stub.fetch("https://conversation/sql", {
      method: "POST",
      headers,
      body: JSON.stringify(statements.map((s) => [s.query, s.params])),
    });
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch (_) {
      body = null;
    }
    if (!response.ok || !body || !Array.isArray(body.results)) {
      const why = (body && body.error && body.error.message) || text || `status ${response.status}`;
      throw failure(why);
    }
    return body.results;
  }
}

/** The D1-shaped handle whose statements run in conversation `conversation`'s object. */
export function remoteDb(namespace, site, conversation, fresh) {
  return new Remote(namespace, site, conversation, !!fresh);
}

/** The object's side of `remoteDb`: runs the statements of `body` as one batch on `db`. */
export async function execute(db, body) {
  const statements = JSON.parse(body).map(([query, params]) => db.prepare(query).bind(...params));
  const results = await db.batch(statements);
  return JSON.stringify({ results });
}

/** `env` with the object's record as `RECORD` (what the store's turns run on). */
export function withRecord(env, db) {
  return new Proxy(env, {
    get(target, prop) {
      if (prop === "RECORD") return db;
      return Reflect.get(target, prop);
    },
  });
}
