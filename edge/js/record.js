// The conversation's record in its own Durable Object (issue 47, items 1 and 2): the
// object's SQLite holds the conversation's rows (`conversations`, `messages`, `summaries`,
// `message_feedback`) in the schema the shared D1 had, so the store's SQL runs unchanged on
// it; the site's object holds a copy of every conversation of its site (the console's and
// the site-wide reads). D1-shaped handles (prepare/bind/first/all/run/raw, batch) let the
// Rust store reach them:
//
// - `localDb(storage, sites)`: inside the conversation's object, over `storage.sql`; a batch
//   is one `transactionSync`. Statements run in microseconds and never wait for another site.
// - `remoteDb(namespace, site, conversation, fresh)`: in the Worker, whose writes to a
//   conversation (its creation, a vote, an embedding's mark) run in the conversation's
//   object (`POST /sql`), the one writer of its rows.
// - `siteDb(sites, site)`: the copy of a site's conversations in the site's object (`POST
//   https://site/call`, `{"records": …}`), what the Worker reads.
// - `execute(db, body)`: the object's side of `remoteDb`; `executeSite`, `openSite`: the
//   site object's side of `siteDb`.
//
// Every change to a record is noted by triggers in `outbox` and sent to the site's object
// (upserts and deletes by primary key, in an order foreign keys accept) in one request:
// awaited before a turn's reply is final (`settle`), or a few seconds after a write nobody
// settles, serialised per object; a send that fails is tried again by the object's alarm,
// and nothing is lost meanwhile (the object is the record). A conversation's object opened
// for a conversation it has never held imports its rows from the site's object, which
// itself imports its site's rows from the shared D1 (where every conversation lived before
// this design) the first time it is used. The shared D1 is no longer written.

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

// The record's tables, in a conversation's object and in its site's.
const TABLES_SQL = `
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
`;

// The site's copy reads across conversations: the shared D1's indexes for the console.
const SITE_SQL = `
CREATE INDEX IF NOT EXISTS conversations_by_site ON conversations (site_id, created_at);
CREATE INDEX IF NOT EXISTS conversations_site_template
  ON conversations (site_id, template, updated_at DESC);
CREATE INDEX IF NOT EXISTS conversations_handoff
  ON conversations (site_id, handoff_state, handoff_requested_at) WHERE handoff_state <> 'none';
CREATE INDEX IF NOT EXISTS conversations_handoff_client
  ON conversations (site_id, handoff_client) WHERE handoff_state = 'waiting';
CREATE INDEX IF NOT EXISTS messages_site_role_created ON messages (site_id, role, created_at);
CREATE INDEX IF NOT EXISTS message_feedback_by_site ON message_feedback (site_id, updated_at DESC);
`;

// A conversation's object notes each change to its record, to send it to the site's.
const OUTBOX_SQL = `
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

// A statement that only reads.
const READ = /^\s*SELECT\b/i;

/** What a statement answers on an absent record: no rows, no change. */
function nothing() {
  return {
    success: true,
    results: [],
    meta: { changes: 0, last_row_id: 0, rows_read: 0, rows_written: 0, changed_db: false, duration: 0, size_after: 0 },
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

// How long a write nobody settles waits for the writes after it before it is sent: a
// turn's writes (the visitor's message, the reply) go to the site's object in one request.
const COALESCE_MS = 5_000;

// What an object knows of its record: the storage, where its changes go (the site's object,
// once the record is open for a site), the chain of sends (one at a time), and whether the
// record is open (schema, import). A site object's copy (`replica`) sends nothing.
class Record {
  constructor(storage, sites, replica) {
    this.storage = storage;
    this.sites = sites;
    this.replica = !!replica;
    this.target = null;
    this.timer = null;
    this.chain = Promise.resolve();
    this.open = false;
    // Opened for a conversation nobody created (`openRecord`): every statement finds
    // nothing and changes nothing, and nothing is stored.
    this.absent = false;
    // Whether the last `execute` changed the record.
    this.changed = false;
  }
  prepare(query) {
    return new Statement(this, query, []);
  }
  single(statement) {
    if (this.absent) return Promise.resolve(nothing());
    try {
      const result = runOne(this.storage.sql, statement.query, statement.params);
      if (result.meta.changed_db) this.later();
      return Promise.resolve(result);
    } catch (error) {
      return Promise.reject(failure(error));
    }
  }
  batch(statements) {
    if (this.absent) return Promise.resolve(statements.map(nothing));
    try {
      const sql = this.storage.sql;
      const run = () => statements.map((s) => runOne(sql, s.query, s.params));
      // Reads alone need no transaction: they run in one synchronous stretch, which
      // nothing else in the object can interleave with.
      const results = statements.every((s) => READ.test(s.query))
        ? run()
        : this.storage.transactionSync(run);
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
  // A send soon, with the writes after this one (`settle` sends at once).
  later() {
    if (this.replica || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush().catch(() => {});
    }, COALESCE_MS);
  }
  // Sends every noted change to the site's object, after the sends before it.
  flush() {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
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
    // The next write or request sends again.
  }
}

// One round: up to 200 noted changes, sent in one request to the site's object, then
// forgotten (unless changed again meanwhile). Answers how many were sent.
async function flushOnce(record) {
  if (record.absent) return 0;
  const sql = record.storage.sql;
  const noted = sql.exec("SELECT tbl, key, n FROM outbox ORDER BY rowid LIMIT 200").toArray();
  if (noted.length === 0) return 0;
  const target = record.target;
  if (!target) throw new Error("the record's site is not known yet");
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
  const statements = [];
  for (const tbl of DELETE_ORDER) {
    const spec = TABLES[tbl];
    for (const parts of deletes[tbl] || []) {
      const where = spec.key.map((k, i) => `${k} = ?${i + 1}`).join(" AND ");
      statements.push(target.prepare(`DELETE FROM ${tbl} WHERE ${where}`).bind(...parts));
    }
  }
  for (const tbl of UPSERT_ORDER) {
    const { key, columns } = TABLES[tbl];
    const update = columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
    const query =
      `INSERT INTO ${tbl} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")}) ` +
      `ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${update.join(", ")}`;
    for (const row of upserts[tbl] || []) {
      statements.push(target.prepare(query).bind(...columns.map((c) => row[c])));
    }
  }
  if (statements.length > 0) await target.batch(statements);
  // One statement (atomic on its own): what was sent, unless noted again since.
  const sent = JSON.stringify(noted.map(({ tbl, key, n }) => `${tbl}${SEP}${key}${SEP}${n}`));
  sql.exec(
    "DELETE FROM outbox WHERE tbl || char(31) || key || char(31) || n IN (SELECT value FROM json_each(?1))",
    sent,
  );
  return noted.length;
}

async function drain(record) {
  for (let round = 0; round < 50; round++) {
    if ((await flushOnce(record)) === 0) return;
  }
}

/**
 * The D1-shaped handle on a conversation object's own record (`storage`: the object's;
 * `sites`: the site objects' namespace, where its changes go).
 */
export function localDb(storage, sites) {
  return new Record(storage, sites, false);
}

/**
 * Opens `db`'s record for conversation `conversation` of `site`: its tables, and its rows
 * imported from the site's object the first time (unless `fresh`: a conversation being
 * created has none there). Idempotent; concurrent calls share one import.
 */
export function open(db, site, conversation, fresh) {
  if (!db.target && db.sites) db.target = siteDb(db.sites, site);
  if (db.open && db.absent && fresh) {
    db.open = false;
    db.absent = false;
  }
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

function insertInto(table, verb) {
  const { columns } = TABLES[table];
  return `${verb} INTO ${table} (${columns.join(", ")}) VALUES (${columns
    .map((_, i) => `?${i + 1}`)
    .join(", ")})`;
}

async function openRecord(db, site, conversation, fresh) {
  const sql = db.storage.sql;
  const made =
    sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record_meta'").toArray()
      .length > 0;
  if (made) {
    sql.exec(TABLES_SQL + OUTBOX_SQL);
    const done = sql.exec("SELECT value FROM record_meta WHERE key = 'imported'").toArray();
    if (done.length > 0) return;
  }
  let found = [];
  if (!fresh) {
    const from = db.target;
    const by = (table, column) =>
      from
        .prepare(`SELECT * FROM ${table} WHERE ${column} = ?1 AND site_id = ?2`)
        .bind(conversation, site);
    const results = await from.batch([
      by("conversations", "id"),
      by("messages", "conversation_id"),
      by("summaries", "conversation_id"),
      by("message_feedback", "conversation_id"),
    ]);
    found = UPSERT_ORDER.map((table, i) => [table, results[i].results || []]);
    // A conversation nobody created (a mistyped or made-up id): nothing is stored for it.
    if (!made && found[0][1].length === 0) {
      db.absent = true;
      return;
    }
  }
  sql.exec(TABLES_SQL + OUTBOX_SQL);
  db.storage.transactionSync(() => {
    for (const [table, rows] of found) {
      const query = insertInto(table, "INSERT OR REPLACE");
      const { columns } = TABLES[table];
      for (const row of rows) sql.exec(query, ...columns.map((c) => value(row[c])));
    }
    // Imported rows are the site's already.
    sql.exec("DELETE FROM outbox");
    sql.exec("INSERT INTO record_meta (key, value) VALUES ('imported', ?1)", String(Date.now()));
  });
}

/** Sends every change noted so far to the site's object (rejects if it cannot). */
export function settle(db) {
  return db.flush();
}

/** Forgets that the record is open (the object's storage was deleted). */
export function closed(db) {
  db.open = false;
}

// ---- The site's copy (in the site's object).

// The rows of one site the shared D1 held, read a page at a time.
const IMPORT_PAGE = 500;

/**
 * Opens the site object's copy of its conversations (`storage`: the site object's): the
 * tables, and the first time, the site's rows of the shared D1 (`d1`) copied in, a page per
 * transaction (a row a conversation's object has already sent is newer: kept).
 */
export async function openSite(storage, d1, site) {
  const sql = storage.sql;
  sql.exec(TABLES_SQL + SITE_SQL);
  const done = sql.exec("SELECT value FROM record_meta WHERE key = 'imported'").toArray();
  if (done.length > 0) return;
  let copied = 0;
  for (const table of UPSERT_ORDER) {
    const { columns } = TABLES[table];
    const insert = insertInto(table, "INSERT OR IGNORE");
    let after = 0;
    for (;;) {
      const page = await d1
        .prepare(
          `SELECT rowid AS _row, ${columns.join(", ")} FROM ${table} ` +
            `WHERE site_id = ?1 AND rowid > ?2 ORDER BY rowid LIMIT ${IMPORT_PAGE}`,
        )
        .bind(site, after)
        .all();
      const rows = page.results || [];
      if (rows.length === 0) break;
      storage.transactionSync(() => {
        for (const row of rows) sql.exec(insert, ...columns.map((c) => value(row[c])));
      });
      copied += rows.length;
      after = rows[rows.length - 1]._row;
      if (rows.length < IMPORT_PAGE) break;
    }
  }
  sql.exec("INSERT INTO record_meta (key, value) VALUES ('imported', ?1)", String(copied));
}

/** The site object's side of `siteDb`: runs the statements of `body` as one batch. */
export function executeSite(storage, body) {
  return execute(new Record(storage, null, true), body);
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
  send(statements) {
    const stub = this.namespace.get(this.namespace.idFromName(`${this.site}/${this.conversation}`));
    const headers = {
      "content-type": "application/json",
      "x-concierge-site": this.site,
      "x-concierge-conversation": this.conversation,
    };
    if (this.fresh) headers["x-concierge-fresh"] = "1";
    return post(stub, "https://conversation/sql", headers, JSON.stringify(wire(statements)));
  }
}

/** Statements as they travel: `[[query, params], …]`. */
function wire(statements) {
  return statements.map((s) => [s.query, s.params]);
}

/** Sends `body` to an object; the results of its `{"results": […]}` answer. */
async function post(stub, url, headers, body) {
  const response = await stub.fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  let answer;
  try {
    answer = JSON.parse(text);
  } catch (_) {
    answer = null;
  }
  if (!response.ok || !answer || !Array.isArray(answer.results)) {
    const why = (answer && answer.error && answer.error.message) || text || `status ${response.status}`;
    throw failure(why);
  }
  return answer.results;
}

// The Worker's handle on the copy of a site's conversations in its object.
class SiteRemote {
  constructor(namespace, site) {
    this.namespace = namespace;
    this.site = site;
  }
  prepare(query) {
    return new Statement(this, query, []);
  }
  async single(statement) {
    return (await this.batch([statement]))[0];
  }
  batch(statements) {
    const stub = this.namespace.get(this.namespace.idFromName(this.site));
    const headers = { "content-type": "application/json", "x-concierge-site": this.site };
    const body = JSON.stringify({ records: JSON.stringify(wire(statements)) });
    return post(stub, "https://site/call", headers, body);
  }
}

/** The D1-shaped handle on the copy of site `site`'s conversations in its object. */
export function siteDb(namespace, site) {
  return new SiteRemote(namespace, site);
}

/** The D1-shaped handle whose statements run in conversation `conversation`'s object. */
export function remoteDb(namespace, site, conversation, fresh) {
  return new Remote(namespace, site, conversation, !!fresh);
}

/** The object's side of `remoteDb`: runs the statements of `body` as one batch on `db`. */
export async function execute(db, body) {
  const statements = JSON.parse(body).map(([query, params]) => db.prepare(query).bind(...params));
  const results = await db.batch(statements);
  db.changed = results.some((r) => r.meta && r.meta.changed_db);
  return JSON.stringify({ results });
}

/** Whether the last `execute` on `db` changed it. */
export function changed(db) {
  return !!db.changed;
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
