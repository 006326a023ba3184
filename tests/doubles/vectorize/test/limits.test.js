// The Vectorize double's documented behaviour and limits, on the double itself
// (`node --test tests/doubles/vectorize/test/`). The index configuration is the
// deployment's: scripts/vectorize-setup.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { VectorIndexDouble, parseSetup } from "../src/index.js";

const setup = parseSetup(
  readFileSync(new URL("../../../../scripts/vectorize-setup.sh", import.meta.url), "utf8"),
);

/** An index with the deployment's metadata indexes, `dimensions` wide, on a fake clock. */
function index({ dimensions = 4, delayMs = 0 } = {}) {
  const clock = { now: 1_000_000 };
  const double = new VectorIndexDouble({
    ...setup,
    dimensions,
    delayMs,
    now: () => clock.now,
  });
  return { double, clock };
}

const unit = (i, n = 4) => Array.from({ length: n }, (_, j) => (j === i ? 1 : 0));
const refused = (fn, pattern) => assert.throws(fn, (e) => pattern.test(e.message), String(pattern));

test("the deployment's index: 1024 cosine dimensions, the fields the Worker filters on", () => {
  assert.equal(setup.dimensions, 1024);
  assert.equal(setup.metric, "cosine");
  assert.deepEqual(
    [...setup.metadataIndexes.entries()].sort(),
    [
      ["conversation_id", "string"],
      ["department", "string"],
      ["scope", "string"],
      ["site_id", "string"],
      ["source", "string"],
    ],
  );
});

test("writes become visible only after the configured delay, in order", () => {
  const { double, clock } = index({ delayMs: 1500 });
  const { mutationId } = double.upsert([{ id: "a", values: unit(0), metadata: { site_id: "s1" } }]);
  assert.match(mutationId, /^[0-9a-f-]{36}$/);
  const ask = () => double.query(unit(0), { topK: 5, filter: { site_id: "s1" } }).matches.map((m) => m.id);
  assert.deepEqual(ask(), []);
  assert.deepEqual(double.getByIds(["a"]), []);
  assert.equal(double.describe().vectorCount, 0);
  clock.now += 1499;
  assert.deepEqual(ask(), []);
  clock.now += 1;
  assert.deepEqual(ask(), ["a"]);
  assert.equal(double.describe().processedUpToMutation, mutationId);
  // A delete, then a re-upsert of the same id: applied in order.
  double.deleteByIds(["a"]);
  clock.now += 10;
  double.upsert([{ id: "a", values: unit(1), metadata: { site_id: "s1" } }]);
  assert.deepEqual(ask(), ["a"], "the delete is not visible yet");
  clock.now += 1490;
  assert.deepEqual(ask(), [], "deleted, the re-upsert not visible yet");
  clock.now += 10;
  assert.deepEqual(double.getByIds(["a"])[0].values, unit(1));
});

test("cosine scores, best first, topK of the filtered set", () => {
  const { double } = index();
  double.upsert([
    { id: "same", values: [1, 0, 0, 0], metadata: { site_id: "s1" } },
    { id: "near", values: [1, 1, 0, 0], metadata: { site_id: "s1" } },
    { id: "far", values: [0, 0, 1, 0], metadata: { site_id: "s1" } },
    { id: "other-site", values: [2, 0, 0, 0], metadata: { site_id: "s2" } },
  ]);
  const { matches, count } = double.query([3, 0, 0, 0], { topK: 2, filter: { site_id: "s1" }, returnMetadata: "all" });
  assert.equal(count, 2);
  assert.deepEqual(matches.map((m) => m.id), ["same", "near"]);
  assert.ok(Math.abs(matches[0].score - 1) < 1e-6);
  assert.ok(Math.abs(matches[1].score - Math.SQRT1_2) < 1e-6);
  assert.deepEqual(matches[0].metadata, { site_id: "s1" });
  const bare = double.query([3, 0, 0, 0], { topK: 1 });
  assert.equal(bare.matches[0].metadata, undefined, "returnMetadata defaults to none");
});

test("namespaces: a query given one sees only its vectors, whatever their metadata", () => {
  const { double } = index();
  double.upsert([
    { id: "a1", values: [1, 0, 0, 0], namespace: "site_a", metadata: { site_id: "site_a" } },
    // Site B's vector claiming site A in its metadata, and closer to the query.
    { id: "b1", values: [2, 0, 0, 0], namespace: "site_b", metadata: { site_id: "site_a" } },
    { id: "none", values: [3, 0, 0, 0], metadata: { site_id: "site_a" } },
  ]);
  const ask = (options) =>
    double.query([1, 0, 0, 0], { topK: 5, filter: { site_id: "site_a" }, ...options }).matches.map((m) => m.id);
  assert.deepEqual(ask({ namespace: "site_a" }), ["a1"]);
  assert.deepEqual(ask({ namespace: "site_b" }), ["b1"]);
  assert.deepEqual(ask({ namespace: "site_c" }), []);
  assert.deepEqual(ask({}), ["a1", "b1", "none"].sort(), "no namespace: every vector");
  // Ids are global: an upsert in another namespace moves the vector; deletes take ids.
  double.upsert([{ id: "a1", values: [1, 0, 0, 0], namespace: "site_b", metadata: { site_id: "site_a" } }]);
  assert.deepEqual(ask({ namespace: "site_a" }), []);
  double.deleteByIds(["b1"]);
  assert.deepEqual(ask({ namespace: "site_b" }), ["a1"]);
  refused(() => ask({ namespace: "" }), /code = 40008\): invalid namespace/);
  refused(() => ask({ namespace: "n".repeat(65) }), /65 bytes; the maximum is 64 bytes/);
  refused(
    () => double.upsert([{ id: "x", values: unit(0), namespace: 7 }]),
    /VECTOR_UPSERT_ERROR \(code = 40008\): invalid namespace: 7/,
  );
});

test("topK: at most 20 with metadata or values, at most 100 without", () => {
  const { double } = index();
  refused(() => double.query(unit(0), { topK: 21, returnMetadata: "all" }), /code = 40025\): max top K is 20, but got 21/);
  refused(() => double.query(unit(0), { topK: 21, returnMetadata: "indexed" }), /max top K is 20/);
  refused(() => double.query(unit(0), { topK: 21, returnValues: true }), /max top K is 20/);
  double.query(unit(0), { topK: 20, returnMetadata: "all" });
  double.query(unit(0), { topK: 100 });
  refused(() => double.query(unit(0), { topK: 101 }), /max top K is 100, but got 101/);
  refused(() => double.query(unit(0), { topK: 0 }), /topK must be a positive integer/);
  refused(() => double.query(unit(0), { topK: 5, returnMetadata: true }), /returnMetadata must be/);
});

test("dimensions: the index's own, at most 1536", () => {
  assert.throws(() => index({ dimensions: 1537 }), /1 to 1536/);
  index({ dimensions: 1536 });
  const { double } = index({ dimensions: 4 });
  refused(() => double.upsert([{ id: "a", values: [1, 0, 0] }]), /VECTOR_UPSERT_ERROR .*expected 4 dimensions, and got 3/);
  refused(() => double.query([1, 0, 0, 0, 0]), /VECTOR_QUERY_ERROR .*expected 4 dimensions, and got 5/);
  refused(() => double.upsert([{ id: "a", values: [1, 0, NaN, 0] }]), /finite numbers/);
});

test("ids: 1 to 64 bytes (UTF-8), on every operation", () => {
  const { double } = index();
  double.upsert([{ id: "x".repeat(64), values: unit(0) }]);
  refused(() => double.upsert([{ id: "x".repeat(65), values: unit(0) }]), /65 bytes; the maximum is 64 bytes/);
  // 22 three-byte characters: 22 characters, 66 bytes.
  refused(() => double.upsert([{ id: "ệ".repeat(22), values: unit(0) }]), /66 bytes/);
  refused(() => double.upsert([{ id: "", values: unit(0) }]), /invalid vector id/);
  refused(() => double.deleteByIds(["x".repeat(65)]), /VECTOR_DELETE_ERROR/);
  refused(() => double.getByIds(["x".repeat(65)]), /VECTOR_GET_ERROR/);
});

test("metadata: at most 10 KiB per vector; at most 1000 vectors per write", () => {
  const { double } = index();
  double.upsert([{ id: "a", values: unit(0), metadata: { text: "x".repeat(10_000) } }]);
  refused(
    () => double.upsert([{ id: "a", values: unit(0), metadata: { text: "x".repeat(10_300) } }]),
    /code = 40016\).*the maximum is 10240 bytes/,
  );
  const many = Array.from({ length: 1001 }, (_, i) => ({ id: `v${i}`, values: unit(0) }));
  refused(() => double.upsert(many), /1001 vectors in one batch; the maximum is 1000/);
  double.upsert(many.slice(0, 1000));
});

test("filters: only on fields with a metadata index, refused otherwise", () => {
  const { double } = index();
  refused(
    () => double.query(unit(0), { filter: { document_id: "faq" } }),
    /VECTOR_QUERY_ERROR .*"document_id", which has no metadata index/,
  );
  refused(() => double.query(unit(0), { filter: { title: { $eq: "x" } } }), /no metadata index/);
  refused(() => double.query(unit(0), { filter: {} }), /non-empty object/);
  refused(() => double.query(unit(0), { filter: { $or: [] } }), /invalid filter key/);
  refused(() => double.query(unit(0), { filter: { site_id: { $regex: "s" } } }), /unsupported filter operator "\$regex"/);
  refused(() => double.query(unit(0), { filter: { site_id: { $in: "s1" } } }), /\$in on "site_id" takes an array/);
  refused(() => double.query(unit(0), { filter: { site_id: { $in: Array(300).fill("site_0123456789") } } }), /less than 2048 bytes/);
});

test("filter operators: $eq, $ne, $in, $nin, ranges, on indexed values", () => {
  const { double } = index();
  const doc = (id, scope, department) => ({ id, values: unit(0), metadata: { site_id: "s1", source: "knowledge", scope, department } });
  double.upsert([
    doc("pub", "public", "hr"),
    doc("int", "internal", "hr"),
    doc("priv", "private", "it"),
    { id: "mem", values: unit(0), metadata: { site_id: "s1", source: "conversation", conversation_id: "c1" } },
    { id: "num", values: unit(0), metadata: { site_id: 5, source: "knowledge" } },
  ]);
  const ids = (filter) => double.query(unit(0), { topK: 20, filter }).matches.map((m) => m.id).sort();
  assert.deepEqual(ids({ site_id: { $eq: "s1" }, source: { $eq: "knowledge" } }), ["int", "priv", "pub"]);
  assert.deepEqual(ids({ site_id: "s1", scope: { $in: ["public", "internal"] }, department: { $in: ["hr"] } }), ["int", "pub"]);
  assert.deepEqual(ids({ site_id: "s1", scope: { $in: [] } }), []);
  assert.deepEqual(ids({ site_id: "s1", scope: { $nin: ["private"] }, source: "knowledge" }), ["int", "pub"]);
  assert.deepEqual(ids({ site_id: "s1", source: { $ne: "knowledge" } }), ["mem"]);
  assert.deepEqual(ids({ site_id: "s1", conversation_id: "c1" }), ["mem"]);
  assert.deepEqual(ids({ site_id: "s1", scope: { $gte: "private" } }), ["priv", "pub"]);
  // A number where the index holds strings is not indexed: no string filter finds it.
  assert.deepEqual(ids({ site_id: { $in: ["5", 5] } }), []);
});

test("string metadata indexes hold the first 64 bytes of a value", () => {
  const { double } = index();
  const long = "s".repeat(70);
  double.upsert([{ id: "a", values: unit(0), metadata: { site_id: long } }]);
  const ids = (filter) => double.query(unit(0), { filter }).matches.map((m) => m.id);
  assert.deepEqual(ids({ site_id: long }), []);
  assert.deepEqual(ids({ site_id: "s".repeat(64) }), ["a"]);
});
