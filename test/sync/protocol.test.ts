/**
 * The sync protocol's codec: every frame type round-trips, and hostile bytes — random bytes,
 * random MessagePack values, truncated and bit-flipped frames, fields of the wrong type, extra
 * and missing fields, unknown types, oversize input — are refused with E_PROTOCOL or E_TOO_LARGE
 * and nothing else. Seeded: CAIRN_PROTOCOL_SEED=S replays a run (the seed is printed on failure).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { Packr } from "msgpackr";
import { MIN_BLOCK_BYTES } from "../../src/core/block.ts";
import { isCairnError } from "../../src/core/errors.ts";
import {
  binCost,
  CLOSE,
  decodeFrame,
  DEFAULT_MAX_FRAME,
  encodeFrame,
  type Frame,
  frameOverhead,
  groupFrames,
  proofMessage,
} from "../../src/sync/protocol.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

const SEED = envInteger("CAIRN_PROTOCOL_SEED") ?? 16_2026;
const packr = new Packr({ useRecords: false, moreTypes: false });
// For hostile values: typed arrays and Dates as extension types, BigInts of any size.
const hostilePackr = new Packr({ useRecords: false, moreTypes: true, largeBigIntToFloat: true });
const SESSION = "AbCdEfGhIjKlMnOpQrStU_";
const OTHER = "zZyYxXwWvVuUtTsSrRqQ-9";

function bytes(length: number, fill = 7): Uint8Array {
  return new Uint8Array(length).fill(fill);
}

/** One frame of every type, with fields that exercise their shapes. */
const SAMPLES: Frame[] = [
  { type: "hello", versions: [1, 2], session: SESSION, publicKey: bytes(32), token: "app" },
  { type: "hello", versions: [1], session: SESSION, publicKey: bytes(32), token: null },
  {
    type: "challenge",
    version: 1,
    serverId: "server-1",
    nonce: bytes(32, 9),
    limits: { maxFrame: DEFAULT_MAX_FRAME, heartbeatMs: 15_000 },
  },
  { type: "prove", signature: bytes(64, 3) },
  { type: "welcome" },
  { type: "subscribe", repo: "/data/todos", cursor: ["e1", 12], versionVector: null },
  {
    type: "subscribe",
    repo: "/data/todos",
    cursor: null,
    versionVector: { [SESSION]: 3, [OTHER]: 0 },
  },
  { type: "unsubscribe", repo: "/data/todos" },
  { type: "credit", repo: "/data/todos", bytes: 1 << 20 },
  { type: "blocks", repo: "/data/tasks", frames: [bytes(60), bytes(300, 1), bytes(70_000, 2)] },
  { type: "synced", repo: "/data/todos", cursor: ["e1", 40], versionVector: { [SESSION]: 9 } },
  { type: "synced", repo: "/data/todos", cursor: ["e1", 0], versionVector: null },
  { type: "push", repo: "/data/x", id: 7, frames: [bytes(MIN_BLOCK_BYTES)] },
  {
    type: "ack",
    repo: "/data/x",
    id: 7,
    applied: 2,
    duplicates: 1,
    rejected: [{ index: 3, code: "E_FORBIDDEN", message: "no write right" }],
    position: 99,
  },
  { type: "live", repo: "/data/x", frames: [bytes(140)], position: 100 },
  { type: "members", repo: "/data/x", writers: [bytes(32, 1), bytes(32, 2)], canWrite: false },
  { type: "denied", repo: "/data/x", right: "read", code: "E_FORBIDDEN", message: "not yours" },
  { type: "ping", n: 1 },
  { type: "pong", n: 2 ** 40 },
  { type: "goaway", reason: "restarting", retryAfterMs: 500 },
  { type: "error", code: "E_AUTH", message: "bad proof" },
  { type: "reset", repo: "/data/x" },
];

/** The shape of each frame type's fields, in wire order: the oracle for wrong-type tests. */
const FIELD_KINDS: Record<Frame["type"], Kind[]> = {
  hello: ["uint[]", "session", "bin32", "str?"],
  challenge: ["uint", "name", "bin32", "limits"],
  prove: ["bin64"],
  welcome: [],
  subscribe: ["repo", "cursor?", "vector?"],
  unsubscribe: ["repo"],
  credit: ["repo", "uint"],
  blocks: ["repo", "block[]"],
  synced: ["repo", "cursor", "vector?"],
  push: ["repo", "uint", "block[]"],
  ack: ["repo", "uint", "uint", "uint", "rejected", "uint"],
  live: ["repo", "block[]", "uint"],
  members: ["repo", "bin32[]", "bool"],
  denied: ["repo", "right", "str", "str"],
  ping: ["uint"],
  pong: ["uint"],
  goaway: ["str", "uint"],
  error: ["str", "str"],
  reset: ["repo"],
};
type Kind =
  | "uint"
  | "uint[]"
  | "str"
  | "str?"
  | "name"
  | "session"
  | "repo"
  | "bin32"
  | "bin64"
  | "block[]"
  | "bin32[]"
  | "bool"
  | "right"
  | "limits"
  | "cursor"
  | "cursor?"
  | "vector?"
  | "rejected";

/** Values that are wrong for most kinds; `accepts` says which ones a kind takes anyway. */
const SUBSTITUTES: unknown[] = [
  -1,
  1.5,
  2 ** 53,
  0,
  "",
  "x",
  "x".repeat(300),
  "/data/ok",
  SESSION,
  null,
  true,
  [],
  [1, "a"],
  {},
  { a: 1 },
  bytes(0),
  bytes(31),
  bytes(32),
  bytes(64),
  [bytes(32)],
  [bytes(3)],
  [bytes(MIN_BLOCK_BYTES)],
  [bytes(MIN_BLOCK_BYTES), bytes(MIN_BLOCK_BYTES - 1)],
  ["e1", 1],
  [[1, "E", "m"]],
  "read",
  { maxFrame: 1, heartbeatMs: 2 },
  { [SESSION]: 1 },
];

function accepts(kind: Kind, v: unknown): boolean {
  const uint = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  const bin = (x: unknown, n?: number) =>
    x instanceof Uint8Array && (n === undefined || x.length === n);
  const plain = (x: unknown): x is Record<string, unknown> =>
    typeof x === "object" && x !== null && !Array.isArray(x) && !(x instanceof Uint8Array);
  const cursor = (x: unknown) =>
    Array.isArray(x) && x.length === 2 && typeof x[0] === "string" && x[0].length > 0 &&
    x[0].length <= 128 && uint(x[1]);
  switch (kind) {
    case "uint":
      return uint(v);
    case "uint[]":
      return Array.isArray(v) && v.every(uint);
    case "str":
      return typeof v === "string";
    case "str?":
      return v === null || typeof v === "string";
    case "name":
      return typeof v === "string" && v.length > 0 && v.length <= 128;
    case "session":
      return v === SESSION;
    case "repo":
      return v === "/data/ok";
    case "bin32":
      return bin(v, 32);
    case "bin64":
      return bin(v, 64);
    case "block[]":
      return Array.isArray(v) && v.every((x) => bin(x) && x.length >= MIN_BLOCK_BYTES);
    case "bin32[]":
      return Array.isArray(v) && v.every((x) => bin(x, 32));
    case "bool":
      return typeof v === "boolean";
    case "right":
      return v === "read";
    case "limits":
      return plain(v) && Object.keys(v).length === 2 && uint(v.maxFrame) && uint(v.heartbeatMs);
    case "cursor":
      return cursor(v);
    case "cursor?":
      return v === null || cursor(v);
    case "vector?":
      return v === null ||
        (plain(v) && Object.entries(v).every(([k, x]) => /^[\w-]{22}$/.test(k) && uint(x)));
    case "rejected":
      return Array.isArray(v) &&
        v.every((e) =>
          Array.isArray(e) && e.length === 3 && uint(e[0]) && typeof e[1] === "string" &&
          typeof e[2] === "string"
        );
  }
}

/** Decoding either succeeds or throws a CairnError E_PROTOCOL / E_TOO_LARGE; nothing else. */
function decodeOrRefuse(input: Uint8Array, maxFrame = DEFAULT_MAX_FRAME): Frame | undefined {
  try {
    return decodeFrame(input, maxFrame);
  } catch (err) {
    if (isCairnError(err, "E_PROTOCOL") || isCairnError(err, "E_TOO_LARGE")) return undefined;
    throw new Error(`decodeFrame threw something else: ${String(err)}`, { cause: err });
  }
}

function assertRefused(input: Uint8Array, what: string, maxFrame = DEFAULT_MAX_FRAME): void {
  const frame = decodeOrRefuse(input, maxFrame);
  assert.equal(frame, undefined, `${what} must be refused, decoded ${JSON.stringify(frame)}`);
}

/** A decoded frame is valid: it re-encodes to bytes that decode to the same frame. */
function assertValid(frame: Frame): void {
  assert.deepEqual(decodeFrame(encodeFrame(frame), DEFAULT_MAX_FRAME), frame);
}

function wire(frame: Frame): unknown[] {
  return packr.unpack(encodeFrame(frame)) as unknown[];
}

function run<Ts>(property: fc.IProperty<Ts>, numRuns: number): void {
  fc.assert(property, { numRuns, seed: SEED });
}

test("protocol: every frame type round-trips through encode and decode", () => {
  for (const frame of SAMPLES) {
    const decoded = decodeFrame(encodeFrame(frame), DEFAULT_MAX_FRAME);
    assert.deepEqual(
      { ...decoded, ...binsToArrays(decoded) },
      { ...frame, ...binsToArrays(frame) },
      frame.type,
    );
  }
  const types = new Set(SAMPLES.map((frame) => frame.type));
  assert.equal(types.size, Object.keys(FIELD_KINDS).length, "a sample of every type");
});

/** Buffers (Node) and Uint8Arrays (Deno) compare equal once both are plain number arrays. */
function binsToArrays(frame: Frame): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(frame)) {
    if (value instanceof Uint8Array) out[key] = Array.from(value);
    else if (Array.isArray(value) && value[0] instanceof Uint8Array) {
      out[key] = value.map((v: Uint8Array) => Array.from(v));
    }
  }
  return out;
}

test("protocol: a frame is [type number, ...fields] in the spec's order", () => {
  assert.deepEqual(wire({ type: "ping", n: 5 }), [15, 5]);
  assert.deepEqual(wire({ type: "welcome" }), [4]);
  assert.deepEqual(wire({ type: "reset", repo: "/data/a" }), [19, "/data/a"]);
  const ack = wire(SAMPLES.find((frame) => frame.type === "ack")!);
  assert.deepEqual(ack, [11, "/data/x", 7, 2, 1, [[3, "E_FORBIDDEN", "no write right"]], 99]);
  assert.equal(CLOSE.tooLarge, 1009);
});

test("protocol: random bytes are refused with E_PROTOCOL or decode to a valid frame", () => {
  run(
    fc.property(fc.uint8Array({ maxLength: 200 }), (input) => {
      const frame = decodeOrRefuse(input);
      if (frame !== undefined) assertValid(frame);
    }),
    3000,
  );
});

test("protocol: random MessagePack values, also under a valid type number, are refused or valid", () => {
  const value = fc.anything({
    maxDepth: 3,
    withNullPrototype: true,
    withBigInt: true,
    withDate: true,
    withTypedArray: true,
    withSparseArray: true,
  });
  run(
    fc.property(value, (v) => {
      const frame = decodeOrRefuse(hostilePackr.pack(v));
      if (frame !== undefined) assertValid(frame);
    }),
    1500,
  );
  run(
    fc.property(
      fc.integer({ min: -2, max: 22 }),
      fc.array(fc.oneof(value, fc.constantFrom(...SUBSTITUTES)), { maxLength: 7 }),
      (type, fields) => {
        const frame = decodeOrRefuse(hostilePackr.pack([type, ...fields]));
        if (frame !== undefined) assertValid(frame);
      },
    ),
    2000,
  );
});

test("protocol: every truncation of a valid frame is refused", () => {
  let cases = 0;
  for (const frame of SAMPLES) {
    const encoded = encodeFrame(frame);
    // Every cut of small frames; a spread of cuts through the large ones.
    const step = Math.max(1, Math.floor(encoded.length / 400));
    for (let length = 0; length < encoded.length; length += step) {
      assertRefused(encoded.subarray(0, length), `${frame.type} cut at ${length}`);
      cases++;
    }
  }
  assert.ok(cases > 1000, `${cases} truncations`);
});

test("protocol: bit-flipped frames are refused or decode to a valid frame", () => {
  run(
    fc.property(
      fc.constantFrom(...SAMPLES.filter((f) => encodeFrame(f).length < 2000)),
      fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
      (frame, flips) => {
        const flipped = encodeFrame(frame).slice();
        for (const flip of flips) flipped[(flip >> 3) % flipped.length] ^= 1 << (flip & 7);
        const decoded = decodeOrRefuse(flipped);
        if (decoded !== undefined) assertValid(decoded);
      },
    ),
    3000,
  );
});

test("protocol: a field of the wrong type (non-bin for bin included) is refused", () => {
  let refused = 0;
  for (const frame of SAMPLES) {
    const fields = wire(frame);
    const kinds = FIELD_KINDS[frame.type];
    for (let i = 0; i < kinds.length; i++) {
      for (const substitute of SUBSTITUTES) {
        const changed = [...fields];
        changed[i + 1] = substitute;
        const decoded = decodeOrRefuse(packr.pack(changed));
        const what = `${frame.type} field ${i} (${kinds[i]}) = ${JSON.stringify(substitute)}`;
        if (accepts(kinds[i], substitute)) assert.notEqual(decoded, undefined, what);
        else {
          assert.equal(decoded, undefined, what);
          refused++;
        }
      }
    }
  }
  assert.ok(refused > 800, `${refused} wrong-type cases refused`);
});

test("protocol: extra fields, missing fields and unknown types are refused", () => {
  for (const frame of SAMPLES) {
    const fields = wire(frame);
    assertRefused(packr.pack([...fields, null]), `${frame.type} with an extra field`);
    assertRefused(packr.pack([...fields, 0, "x"]), `${frame.type} with two extra fields`);
    for (let keep = 1; keep < fields.length; keep++) {
      assertRefused(packr.pack(fields.slice(0, keep)), `${frame.type} with ${keep - 1} fields`);
    }
  }
  for (const type of [0, 20, 255, -1, 1.5, "hello", null, true, [1], { 0: 1 }]) {
    assertRefused(packr.pack([type]), `type ${JSON.stringify(type)}`);
    assertRefused(packr.pack([type, "/data/x"]), `type ${JSON.stringify(type)} with a field`);
  }
  for (const notFrame of [[], {}, 15, "ping", null, bytes(4), { type: 15, n: 1 }]) {
    assertRefused(packr.pack(notFrame), `${JSON.stringify(notFrame)} as a frame`);
  }
  // A valid frame followed by more bytes is not one frame.
  assertRefused(new Uint8Array([...encodeFrame({ type: "ping", n: 1 }), 0x01]), "trailing byte");
  assertRefused(new Uint8Array(0), "no bytes");
});

test("protocol: strict values: sessions, keys, repo paths, uints, version vectors", () => {
  const hello = wire(SAMPLES[0]);
  const withField = (i: number, v: unknown) => {
    const changed = [...hello];
    changed[i] = v;
    return packr.pack(changed);
  };
  for (const session of [SESSION.slice(1), `${SESSION}A`, `${SESSION.slice(1)}+`, "a".repeat(21)]) {
    assertRefused(withField(2, session), `session ${session}`);
  }
  assertRefused(withField(1, [1, -1]), "a negative version");
  assertRefused(withField(1, [2 ** 64]), "a 64-bit version");
  const subscribe = wire(SAMPLES[5]);
  for (const repo of ["data", "/", "/data/../x", "/data/a b", `/${"a".repeat(240)}`, "/data/é"]) {
    const changed = [...subscribe];
    changed[1] = repo;
    assertRefused(packr.pack(changed), `repo ${repo}`);
  }
  const vectors = [{ short: 1 }, { [SESSION]: -1 }, { [SESSION]: 1.5 }, { [SESSION]: "1" }, [1]];
  for (const vector of vectors) {
    assertRefused(
      packr.pack([5, "/data/x", null, vector]),
      `vector ${JSON.stringify(vector)}`,
    );
  }
  assertRefused(packr.pack([5, "/data/x", ["", 1], null]), "an empty epoch");
  assertRefused(packr.pack([5, "/data/x", ["e", 1, 2], null]), "a cursor of three");
  assertRefused(packr.pack([9, "/data/x", null, null]), "synced without a cursor");
  // uint64 on the wire (decoded as BigInt) is not a safe integer.
  assertRefused(
    new Uint8Array([0x92, 15, 0xcf, 0, 0x20, 0, 0, 0, 0, 0, 0]),
    "a ping of 2^53 as uint64",
  );
});

test("protocol: bytes over maxFrame are E_TOO_LARGE before any decoding", () => {
  const frame = encodeFrame({ type: "push", repo: "/data/x", id: 1, frames: [bytes(5000)] });
  assert.throws(
    () => decodeFrame(frame, frame.length - 1),
    (err) => isCairnError(err, "E_TOO_LARGE"),
  );
  assert.ok(decodeFrame(frame, frame.length));
  assert.throws(
    () => decodeFrame(new Uint8Array(DEFAULT_MAX_FRAME + 1), DEFAULT_MAX_FRAME),
    (err) => isCairnError(err, "E_TOO_LARGE"),
  );
  run(
    fc.property(fc.uint8Array({ minLength: 65, maxLength: 300 }), (input) => {
      assert.throws(() => decodeFrame(input, 64), (err) => isCairnError(err, "E_TOO_LARGE"));
    }),
    500,
  );
});

test("protocol: deep nesting and huge declared lengths are refused, not crashed on", () => {
  const deep = new Uint8Array(100_000).fill(0x91); // arrays of one array, 100,000 deep
  assertRefused(deep, "100,000 nested arrays");
  // An array32 header claiming 2^32-1 elements, and a bin32 claiming 4 GiB, with no bytes after.
  assertRefused(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff]), "a huge array header");
  assertRefused(
    new Uint8Array([0x93, 8, 0xa2, 0x2f, 0x61, 0xc6, 0xff, 0xff, 0xff, 0xff]),
    "huge bin",
  );
});

test("protocol: groupFrames keeps every blocks frame <= maxFrame, in order, and refuses a block too large", () => {
  const random = seededRandom(SEED);
  const repo = "/data/groups";
  for (let round = 0; round < 200; round++) {
    const maxFrame = 300 + Math.floor(random() * 5000);
    const overhead = frameOverhead(repo);
    const largest = maxFrame - overhead - 5;
    const sizes = Array.from(
      { length: Math.floor(random() * 40) },
      () => Math.floor(random() * Math.min(largest, random() < 0.1 ? largest : 400)),
    );
    const frames = sizes.map((size, i) => bytes(size, i & 0xff));
    const groups = groupFrames(frames, maxFrame, overhead);
    assert.deepEqual(groups.flat(), frames, `seed ${SEED} round ${round}: order kept`);
    for (const group of groups) {
      assert.ok(group.length > 0, "no empty group");
      for (const type of ["blocks", "live", "push"] as const) {
        const frame: Frame = type === "blocks"
          ? { type, repo, frames: group }
          : type === "live"
          ? { type, repo, frames: group, position: Number.MAX_SAFE_INTEGER }
          : { type, repo, id: Number.MAX_SAFE_INTEGER, frames: group };
        const size = encodeFrame(frame).length;
        assert.ok(
          size <= maxFrame,
          `seed ${SEED} round ${round}: ${type} of ${size} > ${maxFrame}`,
        );
      }
    }
  }
  assert.equal(binCost(255), 257);
  assert.equal(binCost(256), 259);
  assert.equal(binCost(65_536), 65_541);
  assert.throws(
    () => groupFrames([bytes(10), bytes(2000)], 1000, frameOverhead(repo)),
    (err) => isCairnError(err, "E_TOO_LARGE"),
  );
  assert.deepEqual(groupFrames([], 1000, 10), []);
});

test("protocol: proofMessage is the prefix, nonce, server id, a zero byte and the session id", () => {
  const nonce = bytes(32, 0xab);
  const message = proofMessage(nonce, "srv", SESSION);
  const prefix = new TextEncoder().encode("cairn-sync/2\n");
  assert.deepEqual(Array.from(message.subarray(0, prefix.length)), Array.from(prefix));
  assert.deepEqual(
    Array.from(message.subarray(prefix.length, prefix.length + 32)),
    Array.from(nonce),
  );
  const rest = message.subarray(prefix.length + 32);
  assert.equal(new TextDecoder().decode(rest), `srv\0${SESSION}`);
  // Server id and session are separated, so moving a character across the boundary changes it.
  assert.notDeepEqual(
    proofMessage(nonce, "srvA", SESSION.slice(1)),
    proofMessage(nonce, "srv", `A${SESSION.slice(1)}`),
  );
});
