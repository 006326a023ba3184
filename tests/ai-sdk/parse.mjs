// Feeds every AI SDK fixture stream (shared/tests/data/encoders/*.ai_sdk.sse, written by
// AiSdkEncoder and blessed by `cargo test -p concierge-core --test turn_encoders`) through
// the `ai` package's own UI message stream parsing, as `useChat` does: the SSE parser with the
// chunk schema, then `readUIMessageStream`. Checks the assembled message against
// `<name>.ai_sdk.expected.json` (derived from the turn's events): its id, text, tool parts,
// data parts and metadata, transient progress, and exactly one `finish` or one `error`.
//
// Run: `node tests/ai-sdk/parse.mjs` (scripts/test.sh does). Exits non-zero on any mismatch.
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deepStrictEqual, strictEqual, ok } from 'node:assert/strict';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'shared', 'tests', 'data', 'encoders');

/** The fixture's bytes as a stream split into small pieces, as a network would deliver them. */
function byteStream(bytes, size) {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

async function check(name, size) {
  const bytes = await readFile(join(dir, `${name}.ai_sdk.sse`));
  const expected = JSON.parse(await readFile(join(dir, `${name}.ai_sdk.expected.json`), 'utf8'));

  // Parse and validate every part with the package's schema; keep them to count the ends.
  const chunks = [];
  const parsed = parseJsonEventStream({ stream: byteStream(bytes, size), schema: uiMessageChunkSchema() })
    .pipeThrough(new TransformStream({
      transform(result, controller) {
        if (!result.success) throw new Error(`${name}: invalid part: ${result.error}`);
        chunks.push(result.value);
        controller.enqueue(result.value);
      },
    }));

  const errors = [];
  let message;
  for await (const snapshot of readUIMessageStream({ stream: parsed, onError: (e) => errors.push(e) })) {
    message = snapshot;
  }
  ok(message, `${name}: no message assembled`);
  const unexpected = errors.filter((e) => e.message !== expected.error).map((e) => String(e));
  deepStrictEqual(unexpected, [], `${name}: the parser reported errors`);
  const count = (type) => chunks.filter((c) => c.type === type).length;

  strictEqual(message.id, expected.message_id ?? '', `${name}: message id`);
  const text = message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  strictEqual(text, expected.text, `${name}: text`);
  for (const part of message.parts.filter((p) => p.type === 'text')) {
    strictEqual(part.state, 'done', `${name}: text part left streaming`);
  }

  const tools = message.parts
    .filter((p) => p.type.startsWith('tool-'))
    .map((p) => {
      const tool = { toolCallId: p.toolCallId, toolName: p.type.slice('tool-'.length), state: p.state, input: p.input };
      if (p.state === 'output-available') tool.output = p.output;
      if (p.state === 'output-error') tool.errorText = p.errorText;
      return tool;
    });
  deepStrictEqual(tools, expected.tools, `${name}: tool parts`);

  const data = message.parts.filter((p) => p.type === 'data-payload').map((p) => p.data);
  deepStrictEqual(data, expected.data, `${name}: data parts`);
  // Progress is transient: it reaches onData, not the message.
  ok(!message.parts.some((p) => p.type === 'data-progress'), `${name}: progress kept in the message`);
  const progress = chunks.filter((c) => c.type === 'data-progress');
  ok(progress.every((c) => c.transient === true), `${name}: progress not transient`);
  deepStrictEqual(progress.map((c) => c.data), expected.progress, `${name}: progress`);

  if (expected.error === null) {
    strictEqual(count('finish'), 1, `${name}: one finish`);
    strictEqual(count('error'), 0, `${name}: no error`);
    deepStrictEqual(errors, [], `${name}: parser errors`);
    deepStrictEqual(message.metadata, expected.finish, `${name}: finish metadata`);
  } else {
    strictEqual(count('finish'), 0, `${name}: no finish`);
    strictEqual(count('error'), 1, `${name}: one error`);
    deepStrictEqual(errors.map((e) => e.message), [expected.error], `${name}: the error part`);
    strictEqual(message.metadata, undefined, `${name}: no metadata`);
  }
  strictEqual(chunks.at(-1).type, expected.error === null ? 'finish' : 'error', `${name}: last part`);
  ok(bytes.toString('utf8').endsWith('data: [DONE]\n\n'), `${name}: ends with [DONE]`);
}

const names = (await readdir(dir))
  .filter((f) => f.endsWith('.ai_sdk.sse'))
  .map((f) => f.slice(0, -'.ai_sdk.sse'.length))
  .sort();
ok(names.length >= 5, `too few fixtures in ${dir}`);
const { version } = JSON.parse(await readFile(join(root, 'node_modules', 'ai', 'package.json'), 'utf8'));
for (const name of names) {
  for (const size of [1 << 20, 7, 1]) await check(name, size);
}
console.log(`ai ${version}: ${names.length} UI message streams parsed as expected (${names.join(', ')})`);
