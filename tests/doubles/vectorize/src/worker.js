// The Vectorize double as a Worker: a `WorkerEntrypoint` whose RPC methods are the
// Vectorize binding's (`upsert`, `insert`, `query`, `getByIds`, `deleteByIds`,
// `describe`), bound to the Concierge Worker in place of `[[vectorize]]` through a
// service binding under the same name (`VECTORIZE`). One index per running double,
// kept in memory (a `wrangler dev` session's lifetime).
//
// Its metadata indexes and default dimensions come from scripts/vectorize-setup.sh, the
// deployment's own commands. Vars: VECTORIZE_DOUBLE_DELAY_MS (how long a write takes to
// become visible; default 1000), VECTORIZE_DOUBLE_DIMENSIONS (overrides the script's).
import { WorkerEntrypoint } from "cloudflare:workers";
import setup from "../../../../scripts/vectorize-setup.sh";
import { VectorIndexDouble, parseSetup } from "./index.js";

let index = null;

function indexFor(env) {
  if (index === null) {
    const config = parseSetup(setup);
    const dimensions = Number(env.VECTORIZE_DOUBLE_DIMENSIONS || config.dimensions);
    const delayMs = Number(env.VECTORIZE_DOUBLE_DELAY_MS ?? 1000);
    index = new VectorIndexDouble({ ...config, dimensions, delayMs });
  }
  return index;
}

export default class VectorizeDouble extends WorkerEntrypoint {
  async upsert(vectors) {
    return indexFor(this.env).upsert(vectors);
  }

  async insert(vectors) {
    return indexFor(this.env).insert(vectors);
  }

  async query(vector, options) {
    return indexFor(this.env).query(vector, options);
  }

  async getByIds(ids) {
    return indexFor(this.env).getByIds(ids);
  }

  async deleteByIds(ids) {
    return indexFor(this.env).deleteByIds(ids);
  }

  async describe() {
    return indexFor(this.env).describe();
  }

  async fetch() {
    return Response.json(indexFor(this.env).describe());
  }
}
