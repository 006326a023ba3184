// Binding-call counters (COUNT_BINDINGS=on: the storage-budget test and the load
// benchmark; off in production). The Worker's env and a Durable Object's state are wrapped
// in proxies that count every call the Worker makes on its bindings before passing it on,
// unchanged, to the real binding: D1 statements (`single` ones outside a batch), batches and
// the rows and milliseconds D1
// reports for them, KV operations, Durable Object requests, Durable Object storage
// operations, queue messages, and any other binding's calls by method; D1 statements are
// also counted by the tables they name. Counting happens at
// the binding's edge, never by timing a simulator. The counters are this isolate's
// (`wrangler dev` runs the Worker, its Durable Objects and its queue consumers in one).

const counts = Object.create(null);

function add(key, n) {
  if (!n) return;
  counts[key] = (counts[key] || 0) + n;
}

/** Count `n` more of `key` (what the Worker itself observes, e.g. queue deliveries). */
export function record(key, n) {
  add(key, n);
}

/** A JSON snapshot of every counter. */
export function snapshot() {
  return JSON.stringify(counts);
}

/** Zero every counter. */
export function reset() {
  for (const key of Object.keys(counts)) delete counts[key];
}

// D1 reports rows and its own milliseconds in each result's `meta`.
function d1Meta(at, result) {
  const meta = result && result.meta;
  if (!meta) return;
  add(`${at}.rows_read`, meta.rows_read || 0);
  add(`${at}.rows_written`, meta.rows_written || 0);
  add(`${at}.ms`, meta.duration || 0);
}

// A proxy of `target` whose methods in `wrapped` are replaced; every other property is the
// target's own (functions bound to it: the runtime's objects refuse another `this`).
// `constructor` stays unbound: workers-rs checks a binding's type by its constructor's name.
function proxy(target, wrapped) {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.prototype.hasOwnProperty.call(wrapped, prop)) return wrapped[prop];
      const value = Reflect.get(t, prop);
      // `Function.prototype.bind` itself: on an RPC stub, `value.bind` would be a remote method.
      return typeof value === "function" && prop !== "constructor"
        ? Function.prototype.bind.call(value, t)
        : value;
    },
  });
}

// The SQL of each counted statement (a batch gets the statements themselves).
const sqlOf = new WeakMap();

// One statement counted against each table it names (`<at>.table.<name>`): which data a
// request reached, e.g. that a rental turn reads none of `rental_*` in the shared D1.
function tables(at, sql) {
  const names = new Set();
  for (const m of String(sql || "").matchAll(/\b(?:from|join|into|update)\s+([a-z_][a-z0-9_]*)/gi)) {
    names.add(m[1].toLowerCase());
  }
  for (const name of names) add(`${at}.table.${name}`, 1);
}

// The site ids a statement binds (every statement about a site binds its id):
// `<at>.site.<id>` counts the statements that were about site `<id>` (issue 47's noisy
// neighbour: which sites' work a database ran).
const SITE_ID = /^site_[A-Za-z0-9_-]{6,40}$/;
const sitesOf = new WeakMap();

function sites(at, statement) {
  for (const id of sitesOf.get(statement) || []) add(`${at}.site.${id}`, 1);
}

// `at` is the counters' prefix: `<scope>:d1.<binding>`.
function statement(at, real, sql, bound) {
  const run = (method) => async (...args) => {
    add(`${at}.statements`, 1);
    add(`${at}.single`, 1);
    tables(at, sql);
    sites(at, counted);
    const result = await real[method](...args);
    d1Meta(at, result);
    return result;
  };
  const counted = proxy(real, {
    bind: (...args) =>
      statement(at, real.bind(...args), sql, args.filter((a) => typeof a === "string" && SITE_ID.test(a))),
    first: run("first"),
    all: run("all"),
    run: run("run"),
    raw: run("raw"),
  });
  sqlOf.set(counted, sql);
  if (bound && bound.length > 0) sitesOf.set(counted, bound);
  return counted;
}

function d1(at, real) {
  return proxy(real, {
    prepare: (sql) => statement(at, real.prepare(sql), sql, []),
    batch: async (statements) => {
      add(`${at}.batches`, 1);
      add(`${at}.statements`, statements.length);
      for (const s of statements) {
        tables(at, sqlOf.get(s));
        sites(at, s);
      }
      const results = await real.batch(statements);
      for (const r of results || []) d1Meta(at, r);
      return results;
    },
    exec: (sql) => {
      add(`${at}.exec`, 1);
      return real.exec(sql);
    },
  });
}

function stub(at, real) {
  return proxy(real, {
    fetch: (...args) => {
      add(`${at}.requests`, 1);
      return real.fetch(...args);
    },
  });
}

function namespace(at, real) {
  return proxy(real, {
    get: (...args) => stub(at, real.get(...args)),
    getByName: (...args) => stub(at, real.getByName(...args)),
  });
}

// Every method call counted by name (KV, queues, Vectorize, services, AI, storage).
function byMethod(prefix, real, extra) {
  return new Proxy(real, {
    get(t, prop) {
      const value = Reflect.get(t, prop);
      if (typeof value !== "function" || prop === "constructor") return value;
      return (...args) => {
        add(`${prefix}.${String(prop)}`, 1);
        if (extra) extra(String(prop), args);
        // `Reflect.apply`, not `value.apply`: on an RPC stub (a service binding such as the
        // Vectorize double) `apply` would be looked up as a remote method and fail.
        return Reflect.apply(value, t, args);
      };
    },
  });
}

function binding(scope, name, real) {
  const kind = real && real.constructor && real.constructor.name;
  switch (kind) {
    case "D1Database":
      return d1(`${scope}:d1.${name}`, real);
    case "DurableObjectNamespace":
      return namespace(`${scope}:do.${name}`, real);
    case "KvNamespace":
      return byMethod(`${scope}:kv.${name}`, real);
    case "WorkerQueue":
      return byMethod(`${scope}:queue.${name}`, real, (method, args) => {
        if (method === "send") add(`${scope}:queue.${name}.messages`, 1);
        if (method === "sendBatch") add(`${scope}:queue.${name}.messages`, (args[0] || []).length);
      });
    default:
      return byMethod(`${scope}:${kind || "binding"}.${name}`, real);
  }
}

/**
 * The Worker's env with every binding counted (vars and secrets pass through). `scope`
 * names who makes the calls (`fetch`, `object`, `queue.<name>`, `scheduled`): each
 * counter is `<scope>:<binding kind>.<binding>.<what>`.
 */
export function wrapEnv(env, scope) {
  const cache = new Map();
  return new Proxy(env, {
    get(t, prop) {
      const value = Reflect.get(t, prop);
      if (typeof prop !== "string" || value === null || typeof value !== "object") return value;
      if (!cache.has(prop)) cache.set(prop, binding(scope, prop, value));
      return cache.get(prop);
    },
  });
}

// Rows stored in a record, by table (`object:do_sql.insert.<table>`: an INSERT that wrote):
// what the load benchmark divides the objects' disk growth by.
const INSERT = /^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+([a-z_][a-z0-9_]*)/i;

function inserts(counted) {
  return new Proxy(counted, {
    get(t, prop) {
      if (prop !== "exec") return Reflect.get(t, prop);
      return (query, ...params) => {
        const cursor = t.exec(query, ...params);
        const m = INSERT.exec(String(query));
        if (m && m[1] !== "outbox" && m[1] !== "record_meta") {
          // `rowsWritten` once the statement has run (the cursor runs it eagerly).
          if (cursor.rowsWritten > 0) add(`object:do_sql.insert.${m[1].toLowerCase()}`, 1);
        }
        return cursor;
      };
    },
  });
}

/**
 * A Durable Object's state whose storage operations are counted (`object:do_storage.<op>`),
 * its SQL statements too (`object:do_sql.exec`: the conversation's record).
 */
export function wrapState(state) {
  let storage = null;
  return proxy(state, {
    get storage() {
      if (!storage) {
        const real = state.storage;
        const sql = inserts(byMethod("object:do_sql", real.sql));
        const counted = byMethod("object:do_storage", real);
        storage = new Proxy(counted, {
          get: (t, prop) => (prop === "sql" ? sql : Reflect.get(t, prop)),
        });
      }
      return storage;
    },
  });
}
