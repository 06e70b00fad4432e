/**
 * Every public method, called with junk arguments (issue #20): only `CairnError`s come out —
 * thrown by synchronous methods, as rejections by asynchronous ones — nothing is reported as
 * uncaught later (a junk listener taken in would be), and what the repository holds is unchanged.
 * A call that would write is always given at least one invalid argument, decided by an oracle
 * written here from docs/api.md, not by the code under test; such a call must fail.
 *
 * Then the repository is closed and every call is made again: each method of its handles is
 * E_CLOSED. Seeded (fast-check): CAIRN_JUNK_RUNS=N runs N, CAIRN_JUNK_SEED=S replays seed S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Cairn,
  commitFromJson,
  commitFromJsonLine,
  commitId,
  commitToJson,
  commitToJsonLine,
  decodeCommit,
  defineSchema,
  encodeCommit,
  isCairnError,
  type Item,
  type LiveQuery,
  type RepositoryHandle,
} from "cairndb";
import { ALL_TYPES } from "../harness/schemas.ts";
import { captureUncaught, envInteger, snapshot } from "../harness/peers.ts";

const All = defineSchema(ALL_TYPES);
const FIELDS: Record<string, { type: string; required?: boolean }> = ALL_TYPES.fields;
const FIELD_NAMES = Object.keys(FIELDS);
const TEXT = "hello"; // k1's notes: positions 0..5, no surrogate pair
const PATH = "/data/things";
const KEYS = ["k1", "k2", "k3"];

// ── the oracle: what a valid argument is, per docs/api.md ───────────────────────────────────

const isWellFormedString = (v: unknown): v is string => typeof v === "string" && v.isWellFormed();
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null &&
  [Object.prototype, null].includes(Object.getPrototypeOf(v));
const isMapScalar = (v: unknown) =>
  v === null || typeof v === "boolean" || isWellFormedString(v) ||
  (typeof v === "number" && Number.isFinite(v));

/** Whether `value` may be written to a field of `type` (undefined: unset an optional field). */
function validValue(field: string, value: unknown): boolean {
  const { type, required } = FIELDS[field];
  if (value === undefined) return required !== true;
  switch (type) {
    case "string":
    case "text":
      return isWellFormedString(value);
    case "number":
    case "counter":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "date":
      return value instanceof Date && !Number.isNaN(value.getTime());
    case "set":
      return value instanceof Set && [...value].every(isWellFormedString);
    case "map":
      return value instanceof Map &&
        [...value].every(([k, v]) => isWellFormedString(k) && k !== "__proto__" && isMapScalar(v));
    default:
      return false;
  }
}

const isIndex = (v: unknown, max: number): v is number =>
  Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;

function validEdit(field: unknown, index: unknown, length: unknown, text: unknown): boolean {
  return field === "notes" && isIndex(index, TEXT.length) &&
    isIndex(length, TEXT.length - (index as number)) && isWellFormedString(text);
}

const PATH_PATTERN = /^(\/[A-Za-z0-9_\-][A-Za-z0-9_.\-]*)+$/;
const validPath = (v: unknown) => typeof v === "string" && PATH_PATTERN.test(v) && v.length <= 238;

// ── junk ────────────────────────────────────────────────────────────────────────────────────

const loneSurrogates = fc.constantFrom("\uD800", "a\uDC00", "\uDFFF\uD800x");

/** Values of every kind, the usual suspects first. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    true,
    false,
    0,
    -1,
    1.5,
    Number.NaN,
    Infinity,
    -0,
    "",
    "x",
    "change",
    "title",
    "notes",
    "k1",
    PATH,
    "__proto__",
    "x".repeat(600),
  ),
  loneSurrogates,
  fc.integer(),
  fc.double(),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.bigInt(),
  fc.constant(Symbol("junk")),
  fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  fc.constant(new Map<unknown, unknown>([["title", "x"], [1, 2]])),
  fc.constant(new Set<unknown>(["a", 1])),
  fc.constant(new Date(Number.NaN)),
  fc.constant(new Date(0)),
  fc.uint8Array({ maxLength: 24 }),
  fc.constant(() => true),
  fc.constant(JSON.parse('{"__proto__": {"polluted": true}}')),
  fc.constant(Object.create(null)),
);

const notString = junk.filter((v) => typeof v !== "string");
/** Not a key for a new item (undefined is no key: one is generated). */
const notNewKey = fc.oneof(
  junk.filter((v) =>
    v !== undefined && !(isWellFormedString(v) && v.length > 0 && v.length <= 512)
  ),
  fc.constant("k1"), // a live item's key: E_KEY_EXISTS
);
const notField = junk.filter((v) => !FIELD_NAMES.includes(v as string));
const notFunction = junk.filter((v) => typeof v !== "function");
const notEvent = junk.filter((v) => v !== "change");
const notPath = junk.filter((v) => !validPath(v));
const notSchema = fc.oneof(junk, fc.constant({ id: "all@1", ns: "all", version: 1, fields: {} }));

/** A field and a value it does not accept. */
const badFieldValue = fc.oneof(
  fc.tuple(notField, junk),
  fc.tuple(fc.constantFrom(...FIELD_NAMES), junk).filter(([f, v]) => !validValue(f, v)),
);

/** A field and a bad value, as an object's entry: a string key (a Symbol key is no data). */
const badEntry = badFieldValue.filter(([f]) => typeof f === "string");

/** What `update` must refuse (or, for `{}`, take as nothing to do). */
const badChanges = fc.oneof(
  junk.filter((v) => !isPlainObject(v)),
  badEntry.map(([f, v]) => ({ [f as string]: v })),
  fc.constant({}),
);

/** What `create` must refuse as its input. */
const badInput = fc.oneof(
  junk.filter((v) => !isPlainObject(v)),
  badEntry.map(([f, v]) => ({ title: "t", [f as string]: v })),
  fc.constant({}), // title is required
);

/** Options of `create` that are not `undefined` or `{ key }` with a new, valid key. */
const badCreateOptions = fc.oneof(
  junk.filter((v) => v !== undefined && !isPlainObject(v)),
  notNewKey.map((key) => ({ key })),
  fc.constant({ key: "new", unknown: 1 }),
);

/** Cairn.open options that must be refused (never a path: no file may be made). */
const badCairnOptions = fc.oneof(
  junk.filter((v) => v !== undefined && !isPlainObject(v)),
  fc.constant({ nope: true }),
  fc.constantFrom(
    ["path", junk.filter((v) => v !== undefined && !(typeof v === "string" && v.length > 0))],
    ["trusted", junk.filter((v) => v !== undefined && typeof v !== "boolean")],
    ["format", junk.filter((v) => v !== undefined && v !== "binary" && v !== "jsonl")],
    ["durability", junk.filter((v) => v !== undefined && v !== "relaxed" && v !== "durable")],
    [
      "secretKey",
      junk.filter((v) => v !== undefined && !(v instanceof Uint8Array && v.length === 32)),
    ],
    ["trust", junk.filter((v) => v !== undefined && !(Array.isArray(v) && v.length === 0))],
    ["schemas", junk.filter((v) => v !== undefined && !(Array.isArray(v) && v.length === 0))],
    ["onWarning", junk.filter((v) => v !== undefined && typeof v !== "function")],
    [
      "workerUrl",
      junk.filter((v) =>
        v !== undefined && !(v instanceof URL) && !(typeof v === "string" && v.length > 0)
      ),
    ],
  ).chain(([name, value]) =>
    (value as fc.Arbitrary<unknown>).map((v) => ({ [name as string]: v }))
  ),
);

/** A text edit with at least one invalid part. */
const badEdit = fc.tuple(
  fc.oneof(fc.constant("notes"), fc.constant("title"), notField),
  fc.oneof(fc.integer({ min: 0, max: TEXT.length }), junk),
  fc.oneof(fc.integer({ min: 0, max: TEXT.length }), junk),
  fc.oneof(fc.constant("x😀"), junk),
).filter(([f, i, n, t]) => !validEdit(f, i, n, t));

// ── the calls ───────────────────────────────────────────────────────────────────────────────

interface Context {
  readonly db: Cairn;
  readonly repo: RepositoryHandle;
  readonly item: Item<typeof All>;
  readonly query: LiveQuery<Item<typeof All>>;
}

interface Call {
  readonly label: string;
  readonly run: (c: Context) => unknown;
  /** Returns a promise: must reject, never throw synchronously. */
  readonly async: boolean;
  /** Must fail: it has an invalid argument (only reads may succeed on junk). */
  readonly mustFail: boolean;
  /** A method of the repository's handles: E_CLOSED once it is closed. */
  readonly ofRepository: boolean;
}

type CallSpec = [string, unknown[]];

/** Each method: its junk arguments, and how it is called. */
const METHODS: {
  readonly name: string;
  readonly args: fc.Arbitrary<unknown[]>;
  readonly run: (c: Context, args: unknown[]) => unknown;
  readonly async?: boolean;
  readonly mustFail?: (args: unknown[]) => boolean;
  readonly ofRepository?: boolean;
}[] = [
  // RepositoryHandle
  {
    name: "repo.create",
    args: fc.oneof(
      fc.tuple(notSchema, junk, junk),
      fc.tuple(fc.constant(All), badInput, fc.constant(undefined)),
      fc.tuple(fc.constant(All), fc.constant({ title: "t" }), badCreateOptions),
    ),
    run: (c, [s, i, o]) => c.repo.create(s as never, i as never, o as never),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "repo.get",
    args: fc.oneof(
      fc.tuple(notString, junk),
      fc.tuple(fc.constantFrom(...KEYS), notSchema.filter((v) => v !== undefined)),
    ),
    run: (c, [k, s]) => c.repo.get(k as string, s as never),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "repo.has",
    args: fc.tuple(notString),
    run: (c, [k]) => c.repo.has(k as string),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "repo.leaves",
    args: fc.tuple(notString),
    run: (c, [k]) => c.repo.leaves(k as string),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "repo.keys",
    args: fc.tuple(junk),
    run: (c) => [...c.repo.keys()],
    ofRepository: true,
  },
  { name: "repo.count", args: fc.tuple(junk), run: (c) => c.repo.count(), ofRepository: true },
  {
    name: "repo.query",
    args: fc.tuple(junk),
    run: (c, [o]) => c.repo.query(o as never).results,
    ofRepository: true,
  },
  {
    name: "repo.createIndex",
    args: fc.tuple(notField),
    run: (c, [f]) => c.repo.createIndex(f as string),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "repo.on",
    args: fc.oneof(fc.tuple(notEvent, junk), fc.tuple(fc.constant("change"), notFunction)),
    run: (c, [e, l]) => c.repo.on(e as "change", l as never),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "repo.flush",
    args: fc.tuple(junk),
    run: (c) => c.repo.flush(),
    async: true,
    ofRepository: true,
  },
  { name: "repo.stats", args: fc.tuple(junk), run: (c) => c.repo.stats(), ofRepository: true },
  {
    name: "repo.versionVector",
    args: fc.tuple(junk),
    run: (c) => c.repo.versionVector(),
    ofRepository: true,
  },
  {
    name: "repo.missingHistory",
    args: fc.tuple(junk),
    run: (c) => c.repo.missingHistory(),
    ofRepository: true,
  },
  {
    name: "repo.exportBlocks",
    args: fc.tuple(junk),
    run: (c, [v]) => c.repo.exportBlocks(v as never),
    async: true,
    ofRepository: true,
  },
  {
    name: "repo.importBlocks",
    args: fc.tuple(fc.oneof(junk, fc.array(junk, { maxLength: 3 }))),
    run: (c, [f]) => c.repo.importBlocks(f as never),
    async: true,
    ofRepository: true,
  },
  // Item (k1, live; its notes are TEXT)
  {
    name: "item.get",
    args: fc.tuple(notField),
    run: (c, [f]) => c.item.get(f as never),
    mustFail: () => true,
    ofRepository: true,
  },
  { name: "item.exists", args: fc.tuple(junk), run: (c) => c.item.exists, ofRepository: true },
  {
    name: "item.toObject",
    args: fc.tuple(junk),
    run: (c) => c.item.toObject(),
    ofRepository: true,
  },
  {
    name: "item.set",
    args: badFieldValue,
    run: (c, [f, v]) => c.item.set(f as never, v as never),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "item.update",
    args: fc.tuple(badChanges),
    run: (c, [changes]) => c.item.update(changes as never),
    mustFail: ([changes]) => !(isPlainObject(changes) && Object.keys(changes).length === 0),
    ofRepository: true,
  },
  {
    name: "item.insertText",
    args: badEdit.map(([f, i, , t]) => [f, i, t]).filter(([f, i, t]) => !validEdit(f, i, 0, t)),
    run: (c, [f, i, t]) => c.item.insertText(f as never, i as number, t as string),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "item.deleteText",
    args: badEdit.map(([f, i, n]) => [f, i, n]).filter(([f, i, n]) => !validEdit(f, i, n, "")),
    run: (c, [f, i, n]) => c.item.deleteText(f as never, i as number, n as number),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "item.replaceText",
    args: badEdit,
    run: (c, [f, i, n, t]) => c.item.replaceText(f as never, i as number, n as number, t as string),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "item.on",
    args: fc.oneof(fc.tuple(notEvent, junk), fc.tuple(fc.constant("change"), notFunction)),
    run: (c, [e, l]) => c.item.on(e as "change", l as never),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "item.commit",
    args: fc.tuple(junk),
    run: (c) => c.item.commit(),
    async: true,
    ofRepository: true,
  },
  // LiveQuery
  {
    name: "query.subscribe",
    args: fc.tuple(notFunction),
    run: (c, [l]) => c.query.subscribe(l as never),
    mustFail: () => true,
    ofRepository: true,
  },
  {
    name: "query.onError",
    args: fc.tuple(notFunction),
    run: (c, [l]) => c.query.onError(l as never),
    mustFail: () => true,
    ofRepository: true,
  },
  // Cairn
  {
    name: "db.trust",
    args: fc.tuple(junk),
    run: (c, [k]) => c.db.trust(k as string),
    async: true,
    mustFail: () => true,
  },
  {
    name: "db.register",
    args: fc.array(notSchema, { minLength: 1, maxLength: 3 }),
    run: (c, schemas) => c.db.register(...(schemas as never[])),
    mustFail: () => true,
  },
  {
    name: "db.open",
    args: fc.tuple(notPath),
    run: (c, [p]) => c.db.open(p as string),
    async: true,
    mustFail: () => true,
  },
  {
    name: "db.close",
    args: fc.tuple(notPath.filter((p) => p !== undefined)),
    run: (c, [p]) => c.db.close(p as string),
    async: true,
    mustFail: () => true,
  },
  {
    name: "Cairn.open",
    args: fc.tuple(badCairnOptions),
    run: async (_, [o]) => {
      const db = await Cairn.open(o as never);
      await db.close(); // not reached: the oracle says it must fail
    },
    async: true,
    mustFail: () => true,
  },
  // The package's functions
  {
    name: "defineSchema",
    args: fc.tuple(junk),
    run: (_, [d]) => defineSchema(d as never),
    mustFail: () => true,
  },
  {
    name: "encodeCommit",
    args: fc.tuple(junk),
    run: (_, [c]) => encodeCommit(c as never),
    mustFail: () => true,
  },
  {
    name: "commitToJson",
    args: fc.tuple(junk),
    run: (_, [c]) => commitToJson(c as never),
    mustFail: () => true,
  },
  {
    name: "commitToJsonLine",
    args: fc.tuple(junk),
    run: (_, [c]) => commitToJsonLine(c as never),
    mustFail: () => true,
  },
  {
    name: "commitId",
    args: fc.tuple(junk.filter((v) => !isPlainObject(v) || typeof v.session !== "string")),
    run: (_, [c]) => commitId(c as never),
    mustFail: () => true,
  },
  {
    name: "decodeCommit",
    args: fc.tuple(junk),
    run: (_, [b]) => decodeCommit(b as never),
    mustFail: () => true,
  },
  {
    name: "commitFromJson",
    args: fc.tuple(junk),
    run: (_, [j]) => commitFromJson(j),
    mustFail: () => true,
  },
  {
    name: "commitFromJsonLine",
    args: fc.tuple(junk),
    run: (_, [l]) => commitFromJsonLine(l as string),
    mustFail: () => true,
  },
  {
    name: "isCairnError",
    args: fc.tuple(junk, junk),
    run: (_, [e, c]) => {
      assert.equal(typeof isCairnError(e, c as never), "boolean");
    },
  },
];

const BY_NAME = new Map(METHODS.map((m) => [m.name, m]));

const callSpec: fc.Arbitrary<CallSpec> = fc.oneof(
  ...METHODS.map((m) => m.args.map((args): CallSpec => [m.name, args])),
);

function toCall([name, args]: CallSpec): Call {
  const method = BY_NAME.get(name)!;
  return {
    label: `${name}(${args.map(describe).join(", ")})`,
    run: (c) => method.run(c, args),
    async: method.async === true,
    mustFail: method.mustFail?.(args) ?? false,
    ofRepository: method.ofRepository === true,
  };
}

function describe(value: unknown): string {
  try {
    return fc.stringify(value);
  } catch {
    return String(value);
  }
}

/** Makes the call; returns the error it failed with, or undefined. Fails on anything but a CairnError. */
async function attempt(call: Call, c: Context): Promise<unknown> {
  let result: unknown;
  try {
    result = call.run(c);
  } catch (err) {
    if (call.async) assert.fail(`${call.label} threw synchronously: ${String(err)}`);
    assert.ok(isCairnError(err), `${call.label} threw ${String(err)}, not a CairnError`);
    return err;
  }
  if (!(result instanceof Promise)) return undefined;
  try {
    await result;
    return undefined;
  } catch (err) {
    assert.ok(isCairnError(err), `${call.label} rejected with ${String(err)}, not a CairnError`);
    return err;
  }
}

// ── the property ────────────────────────────────────────────────────────────────────────────

async function populated(): Promise<Context> {
  const db = await Cairn.open({ schemas: [All] });
  const repo = await db.open(PATH);
  const item = repo.create(All, { title: "one", notes: TEXT, tags: new Set(["a"]), rank: 1 }, {
    key: "k1",
  });
  repo.create(All, { title: "two", meta: new Map([["m", 1]]) }, { key: "k2" });
  repo.create(All, { title: "three" }, { key: "k3" }).delete();
  const query = repo.query({ schema: All, sortBy: "rank" });
  return { db, repo, item, query };
}

async function held(repo: RepositoryHandle) {
  const frames = await repo.exportBlocks();
  return {
    snapshot: snapshot(repo, KEYS, All),
    versionVector: repo.versionVector(),
    frames: frames.map((frame) => Array.from(frame).join(",")),
  };
}

async function junkCalls(specs: CallSpec[]): Promise<void> {
  const c = await populated();
  const before = await held(c.repo);
  const calls = specs.map(toCall);
  const uncaught = await captureUncaught(async () => {
    for (const call of calls) {
      const err = await attempt(call, c);
      if (call.mustFail) assert.ok(err !== undefined, `${call.label} was accepted`);
    }
    assert.deepEqual(await held(c.repo), before, "the repository holds what it held");
    // A junk listener taken in would fail here, on the next change.
    c.item.set("rank", 2);
    await c.repo.flush();
  });
  assert.deepEqual(uncaught.map(String), [], "nothing is reported as uncaught");

  // Closed: every method of the repository's handles is E_CLOSED, whatever its arguments.
  await c.db.close(PATH);
  for (const call of calls) {
    const err = await attempt(call, c);
    if (call.ofRepository) {
      assert.ok(isCairnError(err, "E_CLOSED"), `${call.label} after close gave ${String(err)}`);
    }
  }
  await c.db.close();
}

const RUNS = envInteger("CAIRN_JUNK_RUNS") ?? 200;
const SEED = envInteger("CAIRN_JUNK_SEED") ?? 20261201;

test(`junk arguments to every public method: only CairnErrors, nothing changed (${RUNS} runs, seed ${SEED})`, async () => {
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(callSpec, { minLength: 1, maxLength: 25 }), junkCalls),
      { numRuns: RUNS, seed: SEED },
    );
  } catch (err) {
    throw new Error(
      `junk test failed (replay: CAIRN_JUNK_SEED=${SEED}; fast-check's report below names the ` +
        `run and the calls)\n${(err as Error).message}\n${String((err as Error).cause ?? "")}`,
    );
  }
});

test("the oracle calls valid what Cairn accepts: the junk above is junk because it is invalid", async () => {
  const c = await populated();
  const valid: Record<string, unknown> = {
    title: "ok 😀",
    rank: -0.5,
    done: false,
    due: new Date(0),
    tags: new Set(["x"]),
    meta: new Map<string, unknown>([["k", null]]),
    notes: "hello",
    likes: 3,
  };
  for (const [field, value] of Object.entries(valid)) {
    assert.ok(validValue(field, value), `the oracle takes ${field}`);
    c.item.set(field as never, value as never);
  }
  assert.ok(validValue("rank", undefined) && !validValue("title", undefined));
  c.item.set("rank", undefined);
  for (const [index, length] of [[0, 0], [5, 0], [0, 5], [2, 3]]) {
    assert.ok(validEdit("notes", index, length, "!"));
    c.item.replaceText("notes", index, length, "!");
    c.item.set("notes", TEXT);
  }
  assert.ok(validPath("/a/b-c.d_e") && !validPath("/a/") && !validPath("/" + "a".repeat(238)));
  await c.db.open("/a/b-c.d_e");
  await c.db.close();
});
