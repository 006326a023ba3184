// A bare pass-through relay: the floor the end-to-end benchmark compares the Worker with.
// It forwards the request body to the upstream's chat endpoint and returns the upstream's
// streamed body untouched (no parsing, no storage). Used only by `make bench-e2e`.
export default {
  async fetch(request) {
    // The cold-start benchmark's first request (`make bench-cold-start`).
    if (new URL(request.url).pathname === "/health") return new Response("ok");
    const upstream = new URL(request.url).searchParams.get("upstream");
    const answer = await fetch(`${upstream}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: await request.text(),
    });
    return new Response(answer.body, {
      status: answer.status,
      headers: { "content-type": "text/event-stream" },
    });
  },
};
