// A double of the Workers AI binding (`env.AI`) for local runs and the e2e tests, bound to
// the Worker as the service binding `AI` and called over RPC exactly as the real binding
// is: `env.AI.run(model, inputs, options)`.
//
// It keeps to the binding's documented shapes, and refuses what the service refuses:
// - text generation (`@cf/…` chat models): `inputs.messages` ([{role, content}]) or
//   `inputs.prompt`; `stream: true` resolves to a ReadableStream of server-sent events
//   `data: {"response":"…"}` ending `data: [DONE]`; otherwise `{response, tool_calls?, usage}`;
//   `tools` in the OpenAI-style (`{type: "function", function: {…}}`) or legacy shape;
// - embeddings (`@cf/baai/bge-m3`, 1024 dimensions; other `@cf/baai/bge-*` models at their
//   own size): `inputs.text` (a string or up to 100 strings) resolves to
//   `{shape: [n, dims], data: [[…], …], pooling: "cls"}`.
// Failures are thrown as the binding throws them: an Error whose message starts with the
// service's numeric code.
//
// What it answers: with the var SCRIPT_URL (the test harness's script server), every call
// is first described to `${SCRIPT_URL}/run` ({model, inputs, options}) and the answer says
// what to do (stream these pieces, call these tools, fail before or mid-stream, answer with
// a bad embedding shape). Without it (a local run), chat answers repeat the question and
// embeddings are a hashed bag of words, so texts sharing words are near.

import { WorkerEntrypoint } from "cloudflare:workers";

const EMBEDDING_DIMS = {
  "@cf/baai/bge-m3": 1024,
  "@cf/baai/bge-large-en-v1.5": 1024,
  "@cf/baai/bge-base-en-v1.5": 768,
  "@cf/baai/bge-small-en-v1.5": 384,
};
const MAX_EMBED_TEXTS = 100;
const ROLES = new Set(["system", "user", "assistant", "tool"]);

class AiError extends Error {
  constructor(code, message) {
    // A message that already starts with its code keeps it.
    super(/^\d{4}: /.test(message) ? message : `${code}: ${message}`);
    this.name = "InferenceUpstreamError";
  }
}

const invalid = (message) => new AiError(5006, `Error: ${message}`);

function checkModel(model) {
  if (typeof model !== "string" || !/^@(cf|hf)\/[a-z0-9._-]+\/[a-z0-9._:-]+$/i.test(model)) {
    throw new AiError(5007, `No such model ${model} or task`);
  }
}

function checkChat(inputs) {
  if (inputs === null || typeof inputs !== "object") throw invalid("inputs must be an object");
  const hasMessages = inputs.messages !== undefined;
  if (hasMessages === (inputs.prompt !== undefined)) {
    throw invalid("required properties at '/' are 'messages' or 'prompt' (one of them)");
  }
  if (hasMessages) {
    if (!Array.isArray(inputs.messages) || inputs.messages.length === 0) {
      throw invalid("'/messages' must be a non-empty array");
    }
    inputs.messages.forEach((m, i) => {
      if (!m || !ROLES.has(m.role) || typeof m.content !== "string") {
        throw invalid(`'/messages/${i}' must have a role (system, user, assistant, tool) and string content`);
      }
    });
  } else if (typeof inputs.prompt !== "string") {
    throw invalid("'/prompt' must be a string");
  }
  if (inputs.stream !== undefined && typeof inputs.stream !== "boolean") throw invalid("'/stream' must be boolean");
  if (inputs.max_tokens !== undefined && !(Number.isInteger(inputs.max_tokens) && inputs.max_tokens > 0)) {
    throw invalid("'/max_tokens' must be a positive integer");
  }
  if (inputs.temperature !== undefined && !(typeof inputs.temperature === "number" && inputs.temperature >= 0 && inputs.temperature <= 5)) {
    throw invalid("'/temperature' must be a number from 0 to 5");
  }
  if (inputs.tools !== undefined) {
    if (!Array.isArray(inputs.tools)) throw invalid("'/tools' must be an array");
    inputs.tools.forEach((t, i) => {
      const f = t && t.type === "function" ? t.function : t;
      if (!f || typeof f.name !== "string" || typeof f.description !== "string" || typeof f.parameters !== "object") {
        throw invalid(`'/tools/${i}' must have a name, a description and parameters`);
      }
    });
  }
  if (inputs.response_format !== undefined) {
    const rf = inputs.response_format;
    if (!rf || !["json_object", "json_schema"].includes(rf.type)) {
      throw invalid("'/response_format/type' must be json_object or json_schema");
    }
    if (inputs.stream) throw invalid("JSON mode does not support streaming");
  }
}

function checkEmbed(inputs) {
  const text = inputs && inputs.text;
  const texts = typeof text === "string" ? [text] : text;
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > MAX_EMBED_TEXTS) {
    throw invalid(`'/text' must be a string or 1 to ${MAX_EMBED_TEXTS} strings`);
  }
  if (!texts.every((t) => typeof t === "string")) throw invalid("'/text' items must be strings");
  return texts;
}

// A hashed bag of words, normalised: texts sharing words are near.
function embedOne(text, dims) {
  const v = new Array(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (!word) continue;
    let h = 2166136261;
    for (const ch of word) {
      h ^= ch.codePointAt(0);
      h = Math.imul(h, 16777619) >>> 0;
    }
    v[h % dims] += 1;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function sse(pieces, { between = 5, first = 5, cut = false, usage = null } = {}) {
  const encoder = new TextEncoder();
  return new ReadableStream({
    async start(controller) {
      await sleep(first);
      for (let i = 0; i < pieces.length; i++) {
        if (i > 0) await sleep(between);
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ response: pieces[i], p: "abcdef" })}\n\n`));
      }
      if (cut) {
        await sleep(between);
        controller.error(new AiError(3040, "Capacity temporarily exceeded, please try again."));
        return;
      }
      const last = { response: "" };
      if (usage) last.usage = usage;
      controller.enqueue(encoder.encode(`data: ${JSON.stringify(last)}\n\n`));
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
  });
}

function lastUserText(inputs) {
  if (typeof inputs.prompt === "string") return inputs.prompt;
  const user = [...inputs.messages].reverse().find((m) => m.role === "user");
  return user ? user.content : "";
}

export default class WorkersAiDouble extends WorkerEntrypoint {
  async script(model, inputs, options) {
    const url = this.env.SCRIPT_URL;
    if (!url) return null;
    const response = await fetch(`${url}/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, inputs, options: options ?? null }),
    });
    if (!response.ok) throw new AiError(3000, `script server answered ${response.status}`);
    return response.json();
  }

  async run(model, inputs, options) {
    checkModel(model);
    const dims = EMBEDDING_DIMS[model];
    if (dims !== undefined) {
      const texts = checkEmbed(inputs);
      const plan = (await this.script(model, inputs, options)) ?? { action: "embed" };
      if (plan.action === "error") throw new AiError(plan.code ?? 3040, plan.message ?? "Capacity temporarily exceeded");
      let data = texts.map((t) => embedOne(t, dims));
      if (plan.action === "bad_shape") data = data.map((v) => v.slice(0, 3));
      if (plan.action === "short_batch") data = data.slice(1);
      return { shape: [data.length, data[0] ? data[0].length : 0], data, pooling: "cls" };
    }
    if (model.startsWith("@cf/baai/")) throw new AiError(5007, `No such model ${model} or task`);
    checkChat(inputs);
    const usage = { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 };
    const plan = (await this.script(model, inputs, options)) ?? {
      action: "stream",
      pieces: `Bạn hỏi: ${lastUserText(inputs)}`.split(/(?=\s)/u),
    };
    switch (plan.action) {
      case "error":
        throw new AiError(plan.code ?? 3040, plan.message ?? "Capacity temporarily exceeded, please try again.");
      case "tool_calls":
        if (inputs.stream) {
          // Tool calls come back whole, not streamed.
          return sse([], { usage });
        }
        return { response: null, tool_calls: plan.calls.map((c) => ({ name: c.name, arguments: c.arguments })), usage };
      case "stall":
        await sleep(plan.ms ?? 20000);
        return inputs.stream ? sse([], { usage }) : { response: "", usage };
      case "stream":
      case "cut": {
        const pieces = plan.pieces ?? [];
        if (!inputs.stream) {
          if (plan.action === "cut") throw new AiError(3040, "Capacity temporarily exceeded, please try again.");
          return { response: pieces.join(""), usage };
        }
        return sse(pieces, { between: plan.between_ms ?? 5, first: plan.first_ms ?? 5, cut: plan.action === "cut", usage });
      }
      default:
        throw new AiError(3000, `unknown script action ${plan.action}`);
    }
  }

  async fetch() {
    return new Response("Workers AI double: call env.AI.run(model, inputs, options) over RPC.\n");
  }
}
