// A busy store is not an error for a visitor (issue 47, item 8). The Worker's env is wrapped
// so that a D1 statement or batch that fails with a transient error — the database busy or
// overloaded, the connection to it lost, its object reset — is tried again, after 40, 120
// and 360 ms (each with up to half again of jitter), at most four attempts in all: about
// 0.8 s, well inside a turn's deadline. Only errors Cloudflare documents as transient are
// retried (D1's "Retry queries" guide and error list); any other error, and the last
// attempt's, reach the Worker unchanged, which answers 503 only then. A retried write
// is safe: a statement refused as busy or overloaded did not run, and the Worker's writes
// carry their own ids (a repeated insert conflicts instead of doubling).
//
// For tests only, `inject(n)` makes the next `n` statements or batches fail with a busy
// error before they reach D1 (`POST /debug/d1-faults`, behind DEBUG_ROUTES).

const TRANSIENT = [
  "SQLITE_BUSY",
  "database is locked",
  "D1 DB is overloaded",
  "Too many requests queued",
  "Network connection lost",
  "storage caused object to be reset",
  "reset because its code was updated",
  "Durable Object is overloaded",
];
const DELAYS_MS = [40, 120, 360];

let injected = 0;
let retried = 0;

/** Fail the next `n` D1 calls with a busy error (tests). */
export function inject(n) {
  injected = Math.max(0, n | 0);
}

/** How many D1 calls were tried again since this isolate started. */
export function retries() {
  return retried;
}

/** Whether `error` (or its message) is one of the transient store errors. */
export function transient(error) {
  const text = [error, error && error.message, error && error.cause && error.cause.message]
    .map((part) => String(part || ""))
    .join(" ");
  return TRANSIENT.some((needle) => text.includes(needle));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function attempt(call) {
  for (let i = 0; ; i++) {
    try {
      if (injected > 0) {
        injected--;
        // Shaped as D1's own: a `D1_ERROR` whose cause says why (workers-rs reads it).
        const why = "database is locked: SQLITE_BUSY (injected by a test)";
        throw new Error(`D1_ERROR: ${why}`, { cause: new Error(why) });
      }
      return await call();
    } catch (error) {
      if (i >= DELAYS_MS.length || !transient(error)) throw error;
      retried++;
      await sleep(DELAYS_MS[i] * (1 + Math.random() / 2));
    }
  }
}

// As in count.js: a proxy whose listed methods are replaced, everything else the target's
// own (functions bound to it), `constructor` unbound (workers-rs checks it by name).
function proxy(target, wrapped) {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.prototype.hasOwnProperty.call(wrapped, prop)) return wrapped[prop];
      const value = Reflect.get(t, prop);
      return typeof value === "function" && prop !== "constructor" ? value.bind(t) : value;
    },
  });
}

function statement(real) {
  const run = (method) => (...args) => attempt(() => real[method](...args));
  return proxy(real, {
    bind: (...args) => statement(real.bind(...args)),
    first: run("first"),
    all: run("all"),
    run: run("run"),
    raw: run("raw"),
  });
}

function d1(real) {
  return proxy(real, {
    prepare: (sql) => statement(real.prepare(sql)),
    batch: (statements) => attempt(() => real.batch(statements)),
  });
}

/** `env` with every D1 binding retried on transient errors. */
export function wrapEnv(env) {
  const wrapped = new Map();
  return new Proxy(env, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof prop !== "string" || value === null || typeof value !== "object") return value;
      if (!wrapped.has(prop)) {
        const kind = value.constructor && value.constructor.name;
        wrapped.set(prop, kind === "D1Database" ? d1(value) : value);
      }
      return wrapped.get(prop);
    },
  });
}
