// A local double of the Worker for widget development: serves www/ and speaks the
// conversation API contract the widget is built against (the same routes, shapes and
// native SSE stream as the Worker). Lets the browser scenarios run before — and
// independently of — the Worker's conversation routes. The real tests run against
// `wrangler dev` (tests/tests/browser.rs); this is a development aid.
//
// Usage: node api_double.mjs [port]   (prints "listening <url>")
//
// Behaviour, by the visitor's message:
//   contains "bảo hành"/"warranty"  → a `warranty` message asking for the serial
//   "0979825281"                    → the warranty record (S23 Ultra, 12/8/2026)
//   contains "#fail-once"           → the first attempt fails (`failed`), the retry succeeds
//   anything else                   → a markdown answer streamed in word pieces, 60 ms apart
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const www = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../www");
const port = Number(process.argv[2] || 0);
const conversations = new Map();
const failedOnce = new Set();
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm" };
const GREETING = "Xin chào quý khách! Em là trợ lý ảo của cửa hàng. Quý khách cần em hỗ trợ gì ạ?";
export const ANSWER = "Dạ, **Galaxy S23 Ultra** hiện có giá *22.490.000 VND*:\n- 12GB RAM\n- 256GB\n\nQuý khách cần em tư vấn thêm không ạ?";

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function error(res, status, code, message) {
  json(res, status, { error: { code, message } });
}

async function body(req) {
  let text = "";
  for await (const chunk of req) text += chunk;
  try {
    return JSON.parse(text || "{}");
  } catch {
    return null;
  }
}

function message(role, content, kind) {
  return { id: "m" + Math.random().toString(36).slice(2, 10), role, content, kind, created_at: Date.now(), metadata: {} };
}

function pieces(text) {
  return text.match(/\s*\S+/g) || [];
}

async function stream(res, conversation, content) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let seq = 0;
  const send = (event, data) => res.write((event ? `event: ${event}\n` : "") + `id: ${seq++}\ndata: ${JSON.stringify(data)}\n\n`);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  send("started", { conversation_id: conversation.id });
  if (content.includes("#fail-once") && !failedOnce.has(conversation.id)) {
    failedOnce.add(conversation.id);
    await sleep(100);
    send("failed", { error: { code: "upstream_error", message: "The model is unavailable." } });
    return res.end();
  }
  let kind = "answer";
  let text = ANSWER;
  if (/bảo hành|warranty/i.test(content)) {
    kind = "warranty";
    text = "Quý khách vui lòng cung cấp số serial của sản phẩm để em kiểm tra thời hạn bảo hành ạ?";
  } else if (content.trim() === "0979825281") {
    kind = "warranty";
    text = "Thông tin bảo hành: Sản phẩm 'S23 Ultra', Serial '0979825281', hết bảo hành vào ngày 12/8/2026. Quý khách có cần em hỗ trợ gì thêm không ạ?";
  }
  for (const piece of pieces(text)) {
    await sleep(60);
    send(null, { chunk: piece });
  }
  const stored = message("assistant", text, kind);
  conversation.messages.push(stored);
  send("completed", { message_id: stored.id, kind });
  res.end();
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://x");
  const parts = url.pathname.split("/").filter(Boolean);
  const api = url.pathname === "/widget/config" || parts[0] === "conversations";
  if (api && !(req.headers["x-api-key"] || "").startsWith("pk_")) return error(res, 401, "unauthorized", "A key is required.");
  if (req.method === "GET" && url.pathname === "/widget/config") {
    return json(res, 200, { title: null, language: "vi", starter_prompts: ["Kiểm tra bảo hành", "Galaxy S23 Ultra giá bao nhiêu?"] });
  }
  if (req.method === "POST" && url.pathname === "/conversations") {
    const input = await body(req);
    const conversation = { id: "c" + Math.random().toString(36).slice(2, 12), messages: [message("assistant", input?.language === "en" ? "Hello! How can I help?" : GREETING, "greeting")] };
    conversations.set(conversation.id, conversation);
    return json(res, 201, { conversation_id: conversation.id, messages: conversation.messages });
  }
  if (parts[0] === "conversations" && parts.length === 3) {
    const conversation = conversations.get(parts[1]);
    if (!conversation) return error(res, 404, "not_found", "No such conversation.");
    if (req.method === "GET" && parts[2] === "history") {
      return json(res, 200, { conversation_id: conversation.id, messages: conversation.messages });
    }
    if (req.method === "POST" && parts[2] === "messages") {
      const input = await body(req);
      if (!input || typeof input.content !== "string" || !input.content.trim()) return error(res, 400, "bad_request", "content is required");
      conversation.messages.push(message("user", input.content, "message"));
      return stream(res, conversation, input.content);
    }
  }
  if (req.method === "GET" && !api) {
    // Like Workers static assets: "/" is index.html, "/chat" is chat.html.
    const name = url.pathname.endsWith("/") ? url.pathname + "index.html" : path.extname(url.pathname) ? url.pathname : url.pathname + ".html";
    const file = path.join(www, name);
    if (file.startsWith(www) && fs.existsSync(file) && fs.statSync(file).isFile()) {
      res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
      return fs.createReadStream(file).pipe(res);
    }
  }
  error(res, 404, "not_found", "Not found.");
});

server.listen(port, "127.0.0.1", () => console.log(`listening http://127.0.0.1:${server.address().port}`));
