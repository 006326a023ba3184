// A faithful in-memory double of a Cloudflare Vectorize (V2) index: the behaviour and the
// limits the Concierge Worker relies on, as Cloudflare documents them
// (developers.cloudflare.com/vectorize/platform/limits/ and
// /vectorize/reference/metadata-filtering/):
//
// - `upsert` / `insert` / `deleteByIds` are asynchronous mutations: they return a
//   `mutationId` at once and become visible to `query` / `getByIds` / `describe` only
//   after `delayMs` (the service is eventually consistent), in the order they were made;
// - vectors have exactly the index's dimensions (at most 1536), finite float32 values,
//   ids of 1 to 64 bytes, metadata of at most 10 KiB (JSON), at most 1000 per write;
// - `query` scores by cosine similarity, applies the filter first and returns the `topK`
//   best: `topK` at most 20 with `returnValues` or `returnMetadata` "all"/"indexed", at
//   most 100 without;
// - a filter is a non-empty object under 2048 bytes of compact JSON, keys neither empty nor
//   containing `"`, nor starting with `$`, at most 512 characters; values are
//   primitives (implicit `$eq`) or `{ $eq|$ne|$lt|$lte|$gt|$gte: primitive }`,
//   `{ $in|$nin: [primitives] }`; a filter on a property without a metadata index is
//   refused (the index list comes from scripts/vectorize-setup.sh, the deployment's own);
// - a string metadata index holds the first 64 bytes of a value (cut on a UTF-8
//   character boundary); a value of another type than the index's is not indexed;
// - a vector may be written in a namespace (`namespace`, a string of 1 to 64 bytes); a
//   query given a `namespace` sees only that namespace's vectors, whatever their metadata,
//   one without sees every vector; ids stay global to the index (an upsert of an id in
//   another namespace moves it; `deleteByIds` and `getByIds` take ids alone).
//
// Errors are thrown as the binding throws them: `VECTOR_<OP>_ERROR (code = N): message`.
// Code 40025 (topK) and 40016 (metadata size) are the service's; the others are this
// double's own numbering in the same style.

export const MAX_DIMENSIONS = 1536;
export const MAX_ID_BYTES = 64;
export const MAX_METADATA_BYTES = 10 * 1024;
export const MAX_TOP_K_WITH_DETAILS = 20;
export const MAX_TOP_K = 100;
export const MAX_BATCH = 1000;
export const MAX_FILTER_BYTES = 2048;
export const MAX_FILTER_KEY_CHARS = 512;
export const MAX_METADATA_INDEXES = 10;
export const INDEXED_STRING_BYTES = 64;
export const MAX_NAMESPACE_BYTES = 64;

const encoder = new TextEncoder();
const bytes = (text) => encoder.encode(text).length;

export class VectorizeError extends Error {
  constructor(operation, code, message) {
    super(`VECTOR_${operation}_ERROR (code = ${code}): ${message}`);
    this.name = "Error";
  }
}

/**
 * The deployment's index configuration from scripts/vectorize-setup.sh: its
 * dimensions (the `VECTORIZE_DIMENSIONS:-N` default), metric and metadata indexes (one
 * `create-metadata-index … --property-name=P --type=T` per line).
 */
export function parseSetup(text) {
  const dimensions = Number(/VECTORIZE_DIMENSIONS:-(\d+)/.exec(text)?.[1] ?? NaN);
  const metric = /--metric=(\w+)/.exec(text)?.[1] ?? "cosine";
  const metadataIndexes = new Map();
  for (const line of text.split("\n")) {
    if (line.trimStart().startsWith("#") || !line.includes("create-metadata-index")) continue;
    const name = /--property-name=([^\s"']+)/.exec(line)?.[1];
    const type = /--type=(\w+)/.exec(line)?.[1];
    if (name && type) metadataIndexes.set(name, type);
  }
  return { dimensions, metric, metadataIndexes };
}

/** The first `INDEXED_STRING_BYTES` bytes of `text`, cut on a character boundary. */
function indexedString(text) {
  let out = "";
  let used = 0;
  for (const ch of text) {
    const n = bytes(ch);
    if (used + n > INDEXED_STRING_BYTES) break;
    out += ch;
    used += n;
  }
  return out;
}

const isPrimitive = (v) => ["string", "number", "boolean"].includes(typeof v);

function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / (Math.sqrt(na) * Math.sqrt(nb));
}

export class VectorIndexDouble {
  /**
   * @param {{dimensions: number, metric?: string, metadataIndexes: Map<string,string>,
   *   delayMs?: number, now?: () => number}} config
   */
  constructor(config) {
    const { dimensions, metric = "cosine", metadataIndexes, delayMs = 0, now = Date.now } = config;
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS) {
      throw new Error(`index dimensions must be 1 to ${MAX_DIMENSIONS}, not ${dimensions}`);
    }
    if (metric !== "cosine") throw new Error(`only the cosine metric is modelled, not ${metric}`);
    if (metadataIndexes.size > MAX_METADATA_INDEXES) {
      throw new Error(`at most ${MAX_METADATA_INDEXES} metadata indexes, not ${metadataIndexes.size}`);
    }
    for (const [name, type] of metadataIndexes) {
      if (!["string", "number", "boolean"].includes(type)) {
        throw new Error(`metadata index ${name}: type ${type} is not string, number or boolean`);
      }
    }
    this.dimensions = dimensions;
    this.metric = metric;
    this.metadataIndexes = metadataIndexes;
    this.delayMs = delayMs;
    this.now = now;
    /** id -> {id, values, metadata}: what queries see. */
    this.vectors = new Map();
    /** Mutations made but not yet visible, oldest first. */
    this.pending = [];
    this.sequence = 0;
    this.processedUpToMutation = null;
    this.processedUpToDatetime = null;
  }

  /** Applies every mutation whose delay has passed, in order. */
  settle() {
    const now = this.now();
    while (this.pending.length > 0 && this.pending[0].visibleAt <= now) {
      const mutation = this.pending.shift();
      mutation.apply();
      this.processedUpToMutation = mutation.id;
      this.processedUpToDatetime = new Date(mutation.visibleAt).toISOString();
    }
  }

  enqueue(apply) {
    this.sequence += 1;
    const id = `00000000-0000-4000-8000-${String(this.sequence).padStart(12, "0")}`;
    this.pending.push({ id, visibleAt: this.now() + this.delayMs, apply });
    this.settle();
    return { mutationId: id };
  }

  checkId(operation, id) {
    if (typeof id !== "string" || id.length === 0) {
      throw new VectorizeError(operation, 40001, `invalid vector id: ${JSON.stringify(id)}`);
    }
    if (bytes(id) > MAX_ID_BYTES) {
      throw new VectorizeError(
        operation,
        40002,
        `vector id "${id}" is ${bytes(id)} bytes; the maximum is ${MAX_ID_BYTES} bytes`,
      );
    }
  }

  /** A vector's or a query's namespace: absent, or a string of 1 to 64 bytes. */
  checkNamespace(operation, namespace) {
    if (namespace === undefined) return undefined;
    if (typeof namespace !== "string" || namespace.length === 0) {
      throw new VectorizeError(operation, 40008, `invalid namespace: ${JSON.stringify(namespace)}`);
    }
    if (bytes(namespace) > MAX_NAMESPACE_BYTES) {
      throw new VectorizeError(
        operation,
        40009,
        `namespace "${namespace}" is ${bytes(namespace)} bytes; the maximum is ${MAX_NAMESPACE_BYTES} bytes`,
      );
    }
    return namespace;
  }

  checkValues(operation, values, what) {
    const array = Array.isArray(values) || ArrayBuffer.isView(values) ? Array.from(values) : null;
    if (array === null) {
      throw new VectorizeError(operation, 40003, `${what}: values must be an array of numbers`);
    }
    if (array.length !== this.dimensions) {
      throw new VectorizeError(
        operation,
        40004,
        `${what}: expected ${this.dimensions} dimensions, and got ${array.length} dimensions`,
      );
    }
    if (!array.every((v) => typeof v === "number" && Number.isFinite(v))) {
      throw new VectorizeError(operation, 40003, `${what}: values must be finite numbers`);
    }
    return Float32Array.from(array);
  }

  checkVectors(operation, vectors) {
    if (!Array.isArray(vectors)) {
      throw new VectorizeError(operation, 40005, "expected an array of vectors");
    }
    if (vectors.length > MAX_BATCH) {
      throw new VectorizeError(
        operation,
        40006,
        `${vectors.length} vectors in one batch; the maximum is ${MAX_BATCH}`,
      );
    }
    return vectors.map((vector) => {
      this.checkId(operation, vector?.id);
      const values = this.checkValues(operation, vector.values, `vector "${vector.id}"`);
      const metadata = vector.metadata ?? {};
      if (typeof metadata !== "object" || Array.isArray(metadata)) {
        throw new VectorizeError(operation, 40007, `vector "${vector.id}": metadata must be an object`);
      }
      const size = bytes(JSON.stringify(metadata));
      if (size > MAX_METADATA_BYTES) {
        throw new VectorizeError(
          operation,
          40016,
          `vector "${vector.id}": metadata is ${size} bytes; the maximum is ${MAX_METADATA_BYTES} bytes`,
        );
      }
      const namespace = this.checkNamespace(operation, vector.namespace);
      return { id: vector.id, values, metadata: structuredClone(metadata), namespace };
    });
  }

  upsert(vectors) {
    const checked = this.checkVectors("UPSERT", vectors);
    return this.enqueue(() => {
      for (const vector of checked) this.vectors.set(vector.id, vector);
    });
  }

  insert(vectors) {
    const checked = this.checkVectors("INSERT", vectors);
    return this.enqueue(() => {
      for (const vector of checked) {
        if (!this.vectors.has(vector.id)) this.vectors.set(vector.id, vector);
      }
    });
  }

  deleteByIds(ids) {
    if (!Array.isArray(ids)) throw new VectorizeError("DELETE", 40005, "expected an array of ids");
    if (ids.length > MAX_BATCH) {
      throw new VectorizeError("DELETE", 40006, `${ids.length} ids in one call; the maximum is ${MAX_BATCH}`);
    }
    for (const id of ids) this.checkId("DELETE", id);
    const copy = [...ids];
    return this.enqueue(() => {
      for (const id of copy) this.vectors.delete(id);
    });
  }

  getByIds(ids) {
    if (!Array.isArray(ids)) throw new VectorizeError("GET", 40005, "expected an array of ids");
    for (const id of ids) this.checkId("GET", id);
    this.settle();
    return ids
      .filter((id) => this.vectors.has(id))
      .map((id) => {
        const v = this.vectors.get(id);
        return { id, values: Array.from(v.values), metadata: structuredClone(v.metadata) };
      });
  }

  describe() {
    this.settle();
    return {
      vectorCount: this.vectors.size,
      dimensions: this.dimensions,
      processedUpToDatetime: this.processedUpToDatetime,
      processedUpToMutation: this.processedUpToMutation,
    };
  }

  /** The filter, checked and normalised to `[property, operator, operand]` conditions. */
  checkFilter(filter) {
    const refuse = (code, message) => {
      throw new VectorizeError("QUERY", code, message);
    };
    if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
      refuse(40030, "filter must be a non-empty object");
    }
    const keys = Object.keys(filter);
    if (keys.length === 0) refuse(40030, "filter must be a non-empty object");
    const size = bytes(JSON.stringify(filter));
    if (size >= MAX_FILTER_BYTES) {
      refuse(40031, `filter is ${size} bytes of JSON; it must be less than ${MAX_FILTER_BYTES} bytes`);
    }
    const conditions = [];
    for (const key of keys) {
      if (key.length === 0 || key.includes('"') || key.startsWith("$") || key.length > MAX_FILTER_KEY_CHARS) {
        refuse(40032, `invalid filter key ${JSON.stringify(key)}`);
      }
      if (!this.metadataIndexes.has(key)) {
        refuse(
          40033,
          `filter on property "${key}", which has no metadata index; ` +
            `create one with \`wrangler vectorize create-metadata-index <index> --property-name=${key} --type=string\``,
        );
      }
      const value = filter[key];
      if (value === null || isPrimitive(value)) {
        conditions.push([key, "$eq", value]);
        continue;
      }
      if (typeof value !== "object" || Array.isArray(value) || Object.keys(value).length === 0) {
        refuse(40034, `invalid filter value for "${key}": ${JSON.stringify(value)}`);
      }
      for (const [op, operand] of Object.entries(value)) {
        switch (op) {
          case "$eq":
          case "$ne":
            if (operand !== null && !isPrimitive(operand)) {
              refuse(40034, `${op} on "${key}" takes a string, number, boolean or null`);
            }
            break;
          case "$in":
          case "$nin":
            if (!Array.isArray(operand) || !operand.every((v) => v === null || isPrimitive(v))) {
              refuse(40034, `${op} on "${key}" takes an array of strings, numbers, booleans or nulls`);
            }
            break;
          case "$lt":
          case "$lte":
          case "$gt":
          case "$gte":
            if (!["string", "number"].includes(typeof operand)) {
              refuse(40034, `${op} on "${key}" takes a string or a number`);
            }
            break;
          default:
            refuse(40035, `unsupported filter operator ${JSON.stringify(op)} on "${key}"`);
        }
        conditions.push([key, op, operand]);
      }
    }
    return conditions;
  }

  /** The value of `property` as its metadata index holds it (undefined: not indexed). */
  indexedValue(metadata, property) {
    const value = property.split(".").reduce((v, k) => (v == null ? undefined : v[k]), metadata);
    const type = this.metadataIndexes.get(property);
    if (typeof value !== type) return undefined;
    return type === "string" ? indexedString(value) : value;
  }

  matches(metadata, conditions) {
    return conditions.every(([property, op, operand]) => {
      const value = this.indexedValue(metadata, property);
      switch (op) {
        case "$eq":
          return value !== undefined && value === operand;
        case "$ne":
          return value !== operand;
        case "$in":
          return value !== undefined && operand.includes(value);
        case "$nin":
          return !operand.includes(value);
        case "$lt":
          return value !== undefined && typeof value === typeof operand && value < operand;
        case "$lte":
          return value !== undefined && typeof value === typeof operand && value <= operand;
        case "$gt":
          return value !== undefined && typeof value === typeof operand && value > operand;
        case "$gte":
          return value !== undefined && typeof value === typeof operand && value >= operand;
        default:
          return false;
      }
    });
  }

  query(vector, options = {}) {
    const refuse = (code, message) => {
      throw new VectorizeError("QUERY", code, message);
    };
    const values = this.checkValues("QUERY", vector, "query vector");
    const { topK = 5, returnValues = false, returnMetadata = "none", filter, namespace } = options ?? {};
    if (!["none", "indexed", "all"].includes(returnMetadata)) {
      refuse(40020, `returnMetadata must be "none", "indexed" or "all", not ${JSON.stringify(returnMetadata)}`);
    }
    if (typeof returnValues !== "boolean") refuse(40021, "returnValues must be a boolean");
    if (!Number.isInteger(topK) || topK < 1) refuse(40022, `topK must be a positive integer, not ${topK}`);
    const details = returnValues || returnMetadata !== "none";
    const max = details ? MAX_TOP_K_WITH_DETAILS : MAX_TOP_K;
    if (topK > max) refuse(40025, `max top K is ${max}, but got ${topK}`);
    this.checkNamespace("QUERY", namespace);
    const conditions = filter === undefined ? [] : this.checkFilter(filter);
    this.settle();
    const scored = [];
    for (const v of this.vectors.values()) {
      if (namespace !== undefined && v.namespace !== namespace) continue;
      if (!this.matches(v.metadata, conditions)) continue;
      scored.push({ v, score: cosine(values, v.values) });
    }
    scored.sort((a, b) => b.score - a.score || (a.v.id < b.v.id ? -1 : 1));
    const matches = scored.slice(0, topK).map(({ v, score }) => {
      const match = { id: v.id, score };
      if (returnValues) match.values = Array.from(v.values);
      if (returnMetadata === "all") match.metadata = structuredClone(v.metadata);
      if (returnMetadata === "indexed") {
        match.metadata = Object.fromEntries(
          Object.entries(v.metadata).filter(([k]) => this.metadataIndexes.has(k)),
        );
      }
      return match;
    });
    return { count: matches.length, matches };
  }
}
