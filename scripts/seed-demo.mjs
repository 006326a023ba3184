// The demo data that needs the running Worker (`make dev` runs this once /health answers),
// each part checked, so that `make dev` never announces an empty demo:
// - the `analyst` demo's data sets (PUT /admin/data/{name}), read back: the stored data
//   set must have every row and column of its CSV;
// - the demo knowledge bases (the shop demo's and the `knowledge` demo's) queued for
//   indexing (POST /admin/index) and waited for: every document indexed (GET
//   /admin/knowledge), and retrieval (POST /admin/search) finding them.
// Connection errors, timeouts, 429 and 5xx answers are retried with backoff; anything
// else, or a wait past its deadline, fails with exit status 1 and a line naming what.
//   node scripts/seed-demo.mjs <base url> <directory holding don_hang.csv, luong_nhan_vien.csv>
//   CONCIERGE_DEV_SEED_TIMEOUT=300   seconds the knowledge bases may take to be indexed
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [base, dataDir] = process.argv.slice(2);
if (!base || !dataDir) {
    console.error("usage: node scripts/seed-demo.mjs <base url> <data directory>");
    process.exit(2);
}
const indexTimeout = Number(process.env.CONCIERGE_DEV_SEED_TIMEOUT || 300) * 1000;

// The demo sites' secret keys (scripts/seed*.sql), local only.
const ANALYST_KEY = "sk_analyst_demo_local_only";
const DATA_SETS = [
    { name: "don_hang", user: "shop-owner" },
    { name: "luong_nhan_vien", user: "hr-manager" },
];
const KNOWLEDGE_BASES = [
    { demo: "shop demo", key: "sk_demo_local_only" },
    { demo: "knowledge demo", key: "sk_kb_demo_local_only" },
];

/** A failure worth naming: the message says what could not be prepared. */
class SeedError extends Error {}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request: `{status, body}` (body parsed as JSON when it is), or a thrown error. */
async function request(method, path, key, body, contentType = "application/json") {
    const headers = { "x-api-key": key };
    if (body !== undefined) headers["content-type"] = contentType;
    const response = await fetch(base + path, {
        method,
        headers,
        body: body === undefined || typeof body === "string" ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    let parsed = text;
    try {
        parsed = JSON.parse(text);
    } catch {
        // Not JSON: kept as text for the message.
    }
    return { status: response.status, body: parsed };
}

/** `request`, retried on what may pass (no connection, timeouts, 429, 5xx); a 2xx answer
 *  is returned, anything else throws a SeedError naming `what`. */
async function call(what, method, path, key, body, contentType) {
    const delays = [1000, 2000, 4000, 8000];
    for (let attempt = 0; ; attempt++) {
        let problem;
        try {
            const answer = await request(method, path, key, body, contentType);
            if (answer.status >= 200 && answer.status < 300) return answer.body;
            problem = `HTTP ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`;
            if (answer.status !== 429 && answer.status < 500) {
                throw new SeedError(`${what}: ${method} ${path} answered ${problem}`);
            }
        } catch (error) {
            if (error instanceof SeedError) throw error;
            problem = error.cause?.message || error.message;
        }
        if (attempt >= delays.length) {
            throw new SeedError(`${what}: ${method} ${path} failed ${attempt + 1} times (last: ${problem})`);
        }
        await sleep(delays[attempt]);
    }
}

/** The analyst demo's data set `name` uploaded, then read back whole. */
async function uploadDataSet({ name, user }) {
    const csv = readFileSync(join(dataDir, `${name}.csv`), "utf8");
    const lines = csv.split("\n").filter((line) => line.trim() !== "");
    const rows = lines.length - 1;
    const columns = lines[0].split(",").length;
    const what = `the analyst demo data set ${name} (user ${user})`;
    const path = `/admin/data/${name}?user_id=${encodeURIComponent(user)}`;
    await call(`could not upload ${what}`, "PUT", path, ANALYST_KEY, csv, "text/csv");
    const stored = await call(`could not read back ${what}`, "GET", path, ANALYST_KEY);
    if (stored.row_count !== rows || stored.columns?.length !== columns) {
        throw new SeedError(
            `${what} was not stored whole: ${stored.row_count} rows and ` +
                `${stored.columns?.length} columns, expected ${rows} rows and ${columns} columns`,
        );
    }
    console.log(`dev: analyst demo data set ${name} (user ${user}): ${rows} rows`);
}

/** Queue a knowledge base for indexing; the number of its documents. */
async function queueIndexing({ demo, key }) {
    const listed = await call(`could not list the ${demo}'s knowledge documents`, "GET", "/admin/knowledge", key);
    const count = listed.documents?.length ?? 0;
    if (count === 0) throw new SeedError(`the ${demo} has no knowledge documents (the seed SQL did not run?)`);
    const queued = await call(`could not queue the ${demo}'s knowledge base for indexing`, "POST", "/admin/index", key);
    if (queued.queued !== count) {
        throw new SeedError(`the ${demo}'s knowledge base: ${queued.queued} of ${count} documents queued for indexing`);
    }
    return count;
}

/** Wait until every document of a knowledge base is indexed, then check retrieval finds them. */
async function awaitIndexed({ demo, key }, deadline) {
    const what = `the ${demo}'s knowledge base`;
    for (;;) {
        const { documents } = await call(`could not list the ${demo}'s knowledge documents`, "GET", "/admin/knowledge", key);
        const failed = documents.filter((d) => d.index_status === "failed").map((d) => d.id);
        if (failed.length > 0) {
            throw new SeedError(
                `${what} could not be indexed: ${failed.join(", ")} failed (the embeddings endpoint, ` +
                    "EMBED_BASE_URL or else LLM_BASE_URL, and its model EMBED_MODEL: see the Worker's log)",
            );
        }
        const waiting = documents.filter((d) => d.index_status !== "done");
        if (waiting.length === 0) {
            const query = documents[0].title;
            const found = await call(`could not search ${what}`, "POST", "/admin/search", key, { query });
            const passages = (found.results || []).filter((r) => r.source === "knowledge");
            // Vectorize (and its local double) show a write only after a delay.
            if (passages.length === 0 && Date.now() <= deadline) {
                await sleep(1000);
                continue;
            }
            if (passages.length === 0) {
                throw new SeedError(`${what} is indexed, but searching it for "${query}" finds nothing`);
            }
            console.log(`dev: ${what}: ${documents.length} documents indexed and searchable`);
            return;
        }
        if (Date.now() > deadline) {
            const states = waiting.map((d) => `${d.id} (${d.index_status})`).join(", ");
            throw new SeedError(`${what} was not indexed within ${indexTimeout / 1000} s: ${states}`);
        }
        await sleep(1000);
    }
}

try {
    // Indexing runs on the queue in the background: queue it first, upload meanwhile.
    for (const kb of KNOWLEDGE_BASES) {
        const count = await queueIndexing(kb);
        console.log(`dev: the ${kb.demo}'s knowledge base: ${count} documents queued for indexing`);
    }
    for (const set of DATA_SETS) await uploadDataSet(set);
    const deadline = Date.now() + indexTimeout;
    for (const kb of KNOWLEDGE_BASES) await awaitIndexed(kb, deadline);
} catch (error) {
    console.error(`dev: ${error instanceof SeedError ? error.message : error.stack}`);
    process.exit(1);
}
