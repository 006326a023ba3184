// concierge-sql: the rental template's SQL validator as a Worker (src/lib.rs says what it
// answers). The main Worker reaches it through its SQL_CHECK service binding only
// (workers_dev = false, no routes). The wasm is built by scripts/build-sqlcheck.sh.
import { initSync, check } from "./build/sqlcheck.js";
import wasm from "./build/sqlcheck_bg.wasm";

initSync({ module: wasm });

const JSON_TYPE = { "content-type": "application/json" };

export default {
  async fetch(request) {
    if (request.method !== "POST") {
      const body = { error: { code: "method_not_allowed", message: "POST a JSON body" } };
      return new Response(JSON.stringify(body), {
        status: 405,
        headers: { ...JSON_TYPE, allow: "POST" },
      });
    }
    const answer = check(await request.text());
    const space = answer.indexOf(" ");
    return new Response(answer.slice(space + 1), {
      status: Number(answer.slice(0, space)),
      headers: JSON_TYPE,
    });
  },
};
