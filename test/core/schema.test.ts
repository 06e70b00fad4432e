import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkWireField,
  checkWireRecord,
  defineSchema,
  type FieldDefs,
  SchemaRegistry,
} from "../../src/core/schema.ts";
import { type CairnErrorCode, isCairnError } from "../../src/core/errors.ts";
import { ALL_TYPES } from "../harness/schemas.ts";

const All = defineSchema(ALL_TYPES);

function assertCode(run: () => unknown, code: CairnErrorCode, message?: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(isCairnError(err, code), `expected ${code}, got ${String(err)}`);
    if (message) assert.match(err.message, message);
    return true;
  });
}

/** Input the type system would reject, passed anyway as JavaScript callers can. */
function untyped(value: unknown): never {
  return value as never;
}

// --- definitions ---------------------------------------------------------------------------

test("a schema exposes its id, ns, version, field names and indexes, and is frozen", () => {
  assert.equal(All.id, "all@1");
  assert.equal(All.ns, "all");
  assert.equal(All.version, 1);
  assert.deepEqual(All.fieldNames, [
    "title",
    "rank",
    "done",
    "due",
    "tags",
    "meta",
    "notes",
    "likes",
  ]);
  assert.deepEqual(All.indexes, ["rank"]);
  assert.deepEqual(All.fields.title, { type: "string", required: true });
  assert.ok(Object.isFrozen(All));
  assert.ok(Object.isFrozen(All.fields));
  assert.ok(Object.isFrozen(All.fields.title));
  assert.ok(Object.isFrozen(All.fieldNames));
  assert.ok(Object.isFrozen(All.indexes));
});

test("malformed schema definitions are E_BAD_SCHEMA", () => {
  const ok = { ns: "x", version: 1, fields: { a: { type: "number" } } };
  const bad: [string, unknown][] = [
    ["not an object", "x"],
    ["empty ns", { ...ok, ns: "" }],
    ["ns with @", { ...ok, ns: "x@y" }],
    ["ns not a string", { ...ok, ns: 3 }],
    ["version 0", { ...ok, version: 0 }],
    ["fractional version", { ...ok, version: 1.5 }],
    ["version as string", { ...ok, version: "1" }],
    ["fields not an object", { ...ok, fields: [] }],
    ["empty field name", { ...ok, fields: { "": { type: "string" } } }],
    ["__proto__ field", { ...ok, fields: JSON.parse('{"__proto__": {"type": "string"}}') }],
    ["inherited name", { ...ok, fields: { constructor: { type: "string" } } }],
    ["unknown type", { ...ok, fields: { a: { type: "float" } } }],
    ["missing type", { ...ok, fields: { a: {} } }],
    ["field not an object", { ...ok, fields: { a: "string" } }],
    ["unknown field option", { ...ok, fields: { a: { type: "string", requird: true } } }],
    ["required not boolean", { ...ok, fields: { a: { type: "string", required: 1 } } }],
    ["validate not a function", { ...ok, fields: { a: { type: "number", validate: true } } }],
    ["default of wrong type", { ...ok, fields: { a: { type: "number", default: "1" } } }],
    ["non-finite default", { ...ok, fields: { a: { type: "number", default: NaN } } }],
    ["set default with numbers", { ...ok, fields: { a: { type: "set", default: new Set([1]) } } }],
    [
      "default failing validate",
      { ...ok, fields: { a: { type: "number", default: -1, validate: (n: number) => n >= 0 } } },
    ],
    ["index not a field", { ...ok, indexes: ["b"] }],
    ["index listed twice", { ...ok, indexes: ["a", "a"] }],
    ["indexes not an array", { ...ok, indexes: "a" }],
    ["unknown option", { ...ok, index: ["a"] }],
    ["upgrade on version 1", { ...ok, upgrade: (old: unknown) => old }],
    ["upgrade not a function", { ...ok, version: 2, upgrade: {} }],
  ];
  for (const [why, def] of bad) {
    assert.throws(() => defineSchema(untyped(def)), (err: unknown) => {
      assert.ok(isCairnError(err, "E_BAD_SCHEMA"), `${why}: got ${String(err)}`);
      return true;
    });
  }
});

test("a schema may declare no fields", () => {
  const Empty = defineSchema({ ns: "empty", version: 1, fields: {} });
  assert.deepEqual(Empty.create({}), {});
  assert.deepEqual(Empty.toWire(Empty.create({})), {});
});

// --- create: type checks ------------------------------------------------------------------

test("create rejects a value of the wrong type for every field type with E_WRONG_TYPE", () => {
  const wrong: [string, unknown, RegExp][] = [
    ["title", 3, /"title" expects a string, got number 3/],
    ["notes", ["a"], /"notes" expects a string, got an array/],
    ["rank", "3", /"rank" expects a finite number, got string "3"/],
    ["rank", NaN, /got NaN/],
    ["rank", Infinity, /got Infinity/],
    ["likes", -Infinity, /"likes" expects a finite number, got -Infinity/],
    ["likes", 1n, /got bigint 1/],
    ["done", "true", /"done" expects a boolean, got string "true"/],
    ["done", 0, /got number 0/],
    ["due", "2024-01-01", /"due" expects a valid Date, got string/],
    ["due", 1_700_000_000_000, /got number/],
    ["due", new Date("nope"), /got an invalid Date/],
    ["tags", ["a", "b"], /"tags" expects a Set of strings, got an array/],
    ["tags", new Set(["a", 2]), /got a Set containing number 2/],
    ["meta", { a: 1 }, /"meta" expects a Map .*, got an object/],
    ["meta", new Map([[1, "x"]]), /got a Map with key number 1/],
    ["meta", new Map([["a", { b: 1 }]]), /got a Map whose "a" is an object/],
    ["meta", new Map([["a", NaN]]), /got a Map whose "a" is NaN/],
    ["meta", new Map([["a", undefined]]), /got a Map whose "a" is undefined/],
    ["meta", new Map([["__proto__", 1]]), /got a Map with key string "__proto__"/],
    ["title", null, /got null/],
  ];
  for (const [field, value, message] of wrong) {
    const input = { title: "t", [field]: value };
    assertCode(() => All.create(untyped(input)), "E_WRONG_TYPE", message);
    assertCode(() => All.checkField(untyped(field), untyped(value)), "E_WRONG_TYPE", message);
  }
});

test("create names the schema in its errors and rejects input that is not an object", () => {
  assertCode(() => All.create(untyped({ title: 1 })), "E_WRONG_TYPE", /^E_WRONG_TYPE: all@1 /);
  assertCode(() => All.create(untyped(null)), "E_WRONG_TYPE");
  assertCode(() => All.create(untyped("title")), "E_WRONG_TYPE");
});

test("create rejects unknown fields with E_UNKNOWN_FIELD, even when undefined", () => {
  assertCode(() => All.create(untyped({ title: "t", tilte: "x" })), "E_UNKNOWN_FIELD", /"tilte"/);
  assertCode(() => All.create(untyped({ title: "t", extra: undefined })), "E_UNKNOWN_FIELD");
  assertCode(() => All.create(untyped({ title: "t", toString: "x" })), "E_UNKNOWN_FIELD");
});

test("create requires required fields; an explicit undefined counts as missing", () => {
  assertCode(() => All.create(untyped({})), "E_REQUIRED_FIELD", /all@1 field "title" is required/);
  assertCode(() => All.create(untyped({ title: undefined })), "E_REQUIRED_FIELD");
});

test("create returns own properties only for fields that are present", () => {
  const values = All.create({ title: "t", rank: undefined, done: false });
  assert.deepEqual(Object.keys(values).sort(), ["done", "title"]);
  assert.equal(Object.getPrototypeOf(values), Object.prototype);
});

test("create turns -0 into 0 in numbers, counters and map values", () => {
  const values = All.create({ title: "t", rank: -0, likes: -0, meta: new Map([["z", -0]]) });
  assert.ok(Object.is(values.rank, 0));
  assert.ok(Object.is(values.likes, 0));
  assert.ok(Object.is(values.meta?.get("z"), 0));
});

// --- create: validate -----------------------------------------------------------------------

const Ranked = defineSchema({
  ns: "ranked",
  version: 1,
  fields: {
    rank: { type: "number", validate: (n) => n >= 0 || "rank must be ≥ 0" },
    name: { type: "string", validate: (s) => s.length > 0 },
    tags: { type: "set", validate: (tags) => tags.size <= 2 || `at most 2 tags, got ${tags.size}` },
  },
});

test("validate returning a string is E_INVALID_VALUE with that message", () => {
  assertCode(() => Ranked.create({ rank: -1 }), "E_INVALID_VALUE", /"rank": rank must be ≥ 0$/);
  assertCode(
    () => Ranked.checkField("tags", new Set(["a", "b", "c"])),
    "E_INVALID_VALUE",
    /at most 2 tags, got 3/,
  );
});

test("validate returning false is E_INVALID_VALUE naming the field", () => {
  assertCode(() => Ranked.create({ name: "" }), "E_INVALID_VALUE", /"name": failed validation/);
});

test("validate returning true accepts, and runs only after the type check", () => {
  assert.deepEqual(Ranked.create({ rank: 0, name: "a" }), { rank: 0, name: "a" });
  assertCode(() => Ranked.create(untyped({ name: 5 })), "E_WRONG_TYPE");
});

// --- defaults and copies ----------------------------------------------------------------------

const Defaults = defineSchema({
  ns: "defaults",
  version: 1,
  fields: {
    status: { type: "string", required: true, default: "open" },
    done: { type: "boolean", default: false },
    tags: { type: "set", default: new Set(["new"]) },
    meta: { type: "map", default: new Map([["k", 1]]) },
    since: { type: "date", default: new Date(0) },
    created: { type: "date", default: () => new Date(1000) },
  },
});

test("defaults fill absent fields, and given values win over defaults", () => {
  assert.deepEqual(Defaults.create({}), {
    status: "open",
    done: false,
    tags: new Set(["new"]),
    meta: new Map([["k", 1]]),
    since: new Date(0),
    created: new Date(1000),
  });
  const given = Defaults.create({ status: "closed", done: true, tags: new Set() });
  assert.equal(given.status, "closed");
  assert.equal(given.done, true);
  assert.deepEqual(given.tags, new Set());
});

test("Set, Map and Date defaults are copied, so no two values share an instance", () => {
  const a = Defaults.create({});
  const b = Defaults.create({});
  assert.notEqual(a.tags, b.tags);
  assert.notEqual(a.meta, b.meta);
  assert.notEqual(a.since, b.since);
  (a.tags as Set<string>).add("mutated");
  (a.since as Date).setTime(5);
  assert.deepEqual(b.tags, new Set(["new"]));
  assert.deepEqual(Defaults.create({}).tags, new Set(["new"]));
  assert.deepEqual(Defaults.create({}).since, new Date(0));
});

test("a default given as a Set is copied at define time", () => {
  const mine = new Set(["x"]);
  const Mine = defineSchema({
    ns: "mine",
    version: 1,
    fields: { t: { type: "set", default: mine } },
  });
  mine.add("later");
  assert.deepEqual(Mine.create({}).t, new Set(["x"]));
  assert.deepEqual(Mine.fields.t.default, new Set(["x"]));
});

test("a function default is called once per created value and its result is checked", () => {
  let calls = 0;
  const Counted = defineSchema({
    ns: "counted",
    version: 1,
    fields: {
      n: { type: "number", default: () => ++calls },
      bad: { type: "number", default: untyped(() => "one") },
    },
  });
  assert.equal(calls, 0);
  assert.equal(Counted.create({ bad: 0 }).n, 1);
  assert.equal(Counted.create({ bad: 0, n: 7 }).n, 7);
  assert.equal(calls, 1);
  assertCode(() => Counted.create({}), "E_WRONG_TYPE", /"bad" expects a finite number/);
});

test("create copies the caller's Sets, Maps and Dates", () => {
  const tags = new Set(["a"]);
  const meta = new Map<string, string | number>([["k", "v"]]);
  const due = new Date(10);
  const values = All.create({ title: "t", tags, meta, due });
  tags.add("b");
  meta.set("k2", 2);
  due.setTime(20);
  assert.deepEqual(values.tags, new Set(["a"]));
  assert.deepEqual(values.meta, new Map([["k", "v"]]));
  assert.deepEqual(values.due, new Date(10));
});

// --- checkField -------------------------------------------------------------------------------

test("checkField returns the normalized value and copies it", () => {
  const tags = new Set(["a"]);
  const checked = All.checkField("tags", tags);
  assert.notEqual(checked, tags);
  assert.deepEqual(checked, tags);
  assert.ok(Object.is(All.checkField("rank", -0), 0));
  assert.equal(All.checkField("title", "x"), "x");
});

test("checkField: undefined unsets an optional field, E_REQUIRED_FIELD for a required one", () => {
  assert.equal(All.checkField("rank", undefined), undefined);
  assertCode(() => All.checkField("title", undefined), "E_REQUIRED_FIELD");
  assertCode(() => Defaults.checkField("status", undefined), "E_REQUIRED_FIELD");
});

test("checkField rejects unknown fields and runs validate", () => {
  assertCode(
    () => All.checkField(untyped("nope"), untyped(1)),
    "E_UNKNOWN_FIELD",
    /all@1 has no field "nope"/,
  );
  assertCode(() => All.checkField(untyped("toString"), untyped(1)), "E_UNKNOWN_FIELD");
  assertCode(() => Ranked.checkField("rank", -5), "E_INVALID_VALUE");
});

// --- wire form ------------------------------------------------------------------------------

test("toWire writes the canonical wire form of every type", () => {
  const values = All.create({
    title: "t",
    rank: -0,
    done: true,
    due: new Date(1_700_000_000_123),
    tags: new Set(["b", "a", "c"]),
    meta: new Map<string, string | number | boolean | null>([["z", 1], ["a", null], ["m", true]]),
    notes: "hello",
    likes: 3,
  });
  const wire = All.toWire(values);
  assert.deepEqual(wire, {
    done: true,
    due: 1_700_000_000_123,
    likes: 3,
    meta: { a: null, m: true, z: 1 },
    notes: "hello",
    rank: 0,
    tags: ["a", "b", "c"],
    title: "t",
  });
  assert.ok(Object.is(wire.rank, 0));
  assert.deepEqual(Object.keys(wire), [
    "done",
    "due",
    "likes",
    "meta",
    "notes",
    "rank",
    "tags",
    "title",
  ]);
  assert.deepEqual(Object.keys(wire.meta as object), ["a", "m", "z"]);
});

test("toWire is byte-for-byte reproducible whatever the insertion order", () => {
  const a = All.toWire(All.create({
    title: "t",
    tags: new Set(["y", "x"]),
    meta: new Map([["b", 1], ["a", 2]]),
    rank: 1,
  }));
  const b = All.toWire(All.create({
    rank: 1,
    meta: new Map([["a", 2], ["b", 1]]),
    tags: new Set(["x", "y"]),
    title: "t",
  }));
  assert.equal(JSON.stringify(a), JSON.stringify(b));
});

test("a set's wire form is its unique elements in code-unit order, whatever its size", () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: "binary", maxLength: 4 }), { maxLength: 20 }),
      (list) => {
        if (list.every((e) => e.isWellFormed())) {
          const wire = All.createWire({ title: "t", tags: new Set(list) }).tags;
          // The built-in sort is the reference order.
          assert.deepEqual(wire, [...new Set(list)].sort());
        } else {
          // An element with a lone surrogate is refused, not rewritten (docs/api.md, "Strings").
          assertCode(() => All.createWire({ title: "t", tags: new Set(list) }), "E_WRONG_TYPE");
        }
      },
    ),
    { numRuns: 500, seed: 11 },
  );
});

test("toWire leaves out absent fields", () => {
  assert.deepEqual(All.toWire(All.create({ title: "t" })), { title: "t" });
});

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const allInput = fc.record({
  title: fc.string(),
  rank: fc.double({ noNaN: true, noDefaultInfinity: true }),
  done: fc.boolean(),
  due: fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms)),
  tags: fc.array(fc.string({ maxLength: 6 }), { maxLength: 6 }).map((a) => new Set(a)),
  meta: fc.array(
    fc.tuple(fc.string({ maxLength: 6 }).filter((k) => k !== "__proto__"), scalar),
    { maxLength: 6 },
  ).map((entries) => new Map(entries)),
  notes: fc.string(),
  likes: fc.integer(),
}, { requiredKeys: ["title"], noNullPrototype: true });

test("fromWire(toWire(values)) gives the values back, for every type", () => {
  fc.assert(
    fc.property(allInput, (input) => {
      const values = All.create(input);
      assert.deepEqual(All.fromWire(All.toWire(values)), values);
    }),
    { numRuns: 300 },
  );
});

test("wire records survive JSON and encode to the same text again", () => {
  fc.assert(
    fc.property(allInput, (input) => {
      const text = JSON.stringify(All.toWire(All.create(input)));
      const back = All.fromWire(JSON.parse(text));
      assert.equal(JSON.stringify(All.toWire(back)), text);
    }),
    { numRuns: 300 },
  );
});

test("checkWireRecord and checkWireField refuse exactly what fromWire and fieldFromWire refuse, with the same error", () => {
  const outcome = (f: () => unknown) => {
    try {
      f();
      return "taken";
    } catch (err) {
      assert.ok(isCairnError(err), String(err));
      return `${err.code}: ${err.message}`;
    }
  };
  // Each field's own wire form, mostly, or any other value: a record the import check may meet.
  const fieldWire = fc.oneof(
    { weight: 3, arbitrary: allInput.map((input) => All.toWire(All.create(input))) },
    { weight: 2, arbitrary: fc.constant({}) },
  ).chain((wire) =>
    fc.dictionary(
      fc.constantFrom(...Object.keys(ALL_TYPES.fields), "stray", "__proto__x"),
      fc.oneof(fc.constant(undefined), fc.jsonValue(), scalar, fc.array(scalar, { maxLength: 3 })),
      { maxKeys: 3, noNullPrototype: true },
    ).map((changes) => {
      const record: Record<string, unknown> = { ...wire };
      for (const [field, value] of Object.entries(changes)) {
        if (value === undefined) delete record[field];
        else record[field] = value;
      }
      return record;
    })
  );
  let refused = 0;
  fc.assert(
    fc.property(fc.oneof(fieldWire, fc.jsonValue()), (record) => {
      const expected = outcome(() => All.fromWire(record));
      assert.equal(outcome(() => checkWireRecord(All, record)), expected);
      if (expected !== "taken") refused++;
      if (typeof record !== "object" || record === null || Array.isArray(record)) return;
      for (const [field, wire] of Object.entries(record)) {
        assert.equal(
          outcome(() => checkWireField(All, field, wire)),
          outcome(() => All.fieldFromWire(field as never, wire)),
        );
      }
    }),
    { numRuns: 2_000, seed: 20261128 },
  );
  assert.ok(refused > 200 && refused < 1_800, `${refused} of 2,000 refused: both outcomes seen`);
});

test("fieldToWire and fieldFromWire convert one field", () => {
  assert.deepEqual(All.fieldToWire("tags", new Set(["b", "a"])), ["a", "b"]);
  assert.deepEqual(All.fieldFromWire("tags", ["a", "b"]), new Set(["a", "b"]));
  assert.deepEqual(All.fieldFromWire("due", 5), new Date(5));
  assert.deepEqual(All.fieldToWire("meta", new Map([["b", 1], ["a", -0]])), { a: 0, b: 1 });
  assert.ok(Object.is(All.fieldToWire("likes", -0), 0));
  assertCode(() => All.fieldToWire(untyped("nope"), untyped(1)), "E_UNKNOWN_FIELD");
  assertCode(() => All.fieldFromWire(untyped("nope"), 1), "E_CORRUPT_ENCODING");
  assertCode(() => All.fieldFromWire("rank", "1"), "E_CORRUPT_ENCODING");
});

test("fromWire rejects hostile records with E_CORRUPT_ENCODING", () => {
  const hostile: [string, unknown][] = [
    ["not an object", "title"],
    ["null", null],
    ["an array", [["title", "t"]]],
    ["a class instance", new Date()],
    ["unknown field", { title: "t", extra: 1 }],
    ["own __proto__ field", JSON.parse('{"title": "t", "__proto__": 1}')],
    ["required field missing", { rank: 1 }],
    ["string as number", { title: 1 }],
    ["text as array", { title: "t", notes: ["a"] }],
    ["number as string", { title: "t", rank: "1" }],
    ["NaN number", { title: "t", rank: NaN }],
    ["infinite counter", { title: "t", likes: Infinity }],
    ["boolean as number", { title: "t", done: 1 }],
    ["date as string", { title: "t", due: "2024-01-01" }],
    ["fractional date", { title: "t", due: 1.5 }],
    ["date out of range", { title: "t", due: 8.64e15 + 1 }],
    ["date as Date", { title: "t", due: new Date() }],
    ["set as object", { title: "t", tags: { a: true } }],
    ["set with a number", { title: "t", tags: ["a", 1] }],
    ["map as array", { title: "t", meta: [["a", 1]] }],
    ["map with nested object", { title: "t", meta: { a: { b: 1 } } }],
    ["map with an array", { title: "t", meta: { a: [] } }],
    ["map with own __proto__ key", JSON.parse('{"title": "t", "meta": {"__proto__": 1}}')],
    ["undefined value", { title: "t", rank: undefined }],
  ];
  for (const [why, record] of hostile) {
    assert.throws(() => All.fromWire(record), (err: unknown) => {
      assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), `${why}: got ${String(err)}`);
      return true;
    });
  }
});

test("fromWire keeps stored values that a validator would now reject", () => {
  assert.deepEqual(Ranked.fromWire({ rank: -1 }), { rank: -1 });
});

// --- registry and upgrades ------------------------------------------------------------------

const taskV1Fields = {
  title: { type: "string", required: true },
  tags: { type: "set" },
} as const satisfies FieldDefs;

const TaskV1 = defineSchema({ ns: "task", version: 1, fields: taskV1Fields });

const TaskV2 = defineSchema({
  ns: "task",
  version: 2,
  fields: {
    title: { type: "string", required: true },
    tags: { type: "set" },
    priority: { type: "number", required: true },
  },
  upgrade: (old, fromVersion) => ({ ...old, priority: fromVersion * 10 }),
});

const TaskV3 = defineSchema({
  ns: "task",
  version: 3,
  fields: {
    name: { type: "string", required: true },
    tags: { type: "set" },
    priority: { type: "number", required: true },
    archived: { type: "boolean", default: false },
  },
  upgrade: ({ title, ...rest }) => ({ ...rest, name: `${title} (v2)` }),
});

function taskRegistry(): SchemaRegistry {
  const registry = new SchemaRegistry();
  registry.register(TaskV1);
  registry.register(TaskV3);
  registry.register(TaskV2);
  return registry;
}

test("the registry finds schemas by id and the latest version of a namespace", () => {
  const registry = taskRegistry();
  assert.equal(registry.get("task@2"), TaskV2);
  assert.equal(registry.get("task@4"), undefined);
  assert.equal(registry.latest("task"), TaskV3);
  assert.equal(registry.latest("note"), undefined);
});

test("registering the same schema or an identical definition again is fine", () => {
  const registry = taskRegistry();
  assert.equal(registry.register(TaskV1), TaskV1);
  const twin = defineSchema({ ns: "task", version: 1, fields: taskV1Fields });
  registry.register(twin);
  assert.equal(registry.get("task@1"), TaskV1);
});

test("registering a different definition under a known id is E_BAD_SCHEMA", () => {
  const registry = taskRegistry();
  const changes: FieldDefs[] = [
    { title: { type: "text", required: true }, tags: { type: "set" } },
    { title: { type: "string" }, tags: { type: "set" } },
    { title: { type: "string", required: true } },
    { title: { type: "string", required: true }, tags: { type: "set", default: new Set(["a"]) } },
    { title: { type: "string", required: true }, tags: { type: "set", validate: () => true } },
  ];
  for (const fields of changes) {
    const other = defineSchema({ ns: "task", version: 1, fields });
    assertCode(() => registry.register(other), "E_BAD_SCHEMA", /task@1/);
  }
  const indexed = defineSchema({
    ns: "task",
    version: 1,
    fields: taskV1Fields,
    indexes: ["title"],
  });
  assertCode(() => registry.register(indexed), "E_BAD_SCHEMA");
  assertCode(() => registry.register(untyped({ ...TaskV1 })), "E_BAD_SCHEMA", /defineSchema/);
});

test("constant defaults that encode the same count as the same definition", () => {
  const make = () =>
    defineSchema({
      ns: "d",
      version: 1,
      fields: { m: { type: "map", default: new Map([["a", 1]]) } },
    });
  const registry = new SchemaRegistry();
  registry.register(make());
  registry.register(make());
});

test("upgrade applies each version's upgrade in turn, v1 → v2 → v3", () => {
  const registry = taskRegistry();
  const old = TaskV1.create({ title: "write", tags: new Set(["a"]) });
  assert.deepEqual(registry.upgrade(old, "task@1", TaskV3), {
    name: "write (v2)",
    tags: new Set(["a"]),
    priority: 10,
    archived: false,
  });
  const fromV2 = TaskV2.create({ title: "read", priority: 5 });
  assert.deepEqual(registry.upgrade(fromV2, "task@2", TaskV3), {
    name: "read (v2)",
    priority: 5,
    archived: false,
  });
  assert.deepEqual(registry.upgrade(old, "task@1", TaskV2), {
    title: "write",
    tags: new Set(["a"]),
    priority: 10,
  });
});

test("an upgrade is applied lazily to an old value read from the wire", () => {
  const registry = taskRegistry();
  const stored = TaskV1.toWire(TaskV1.create({ title: "old" }));
  const from = registry.get("task@1");
  assert.ok(from);
  const current = registry.upgrade(from.fromWire(stored), from.id, TaskV3);
  assert.equal(current.name, "old (v2)");
  assert.deepEqual(TaskV3.fromWire(TaskV3.toWire(current)), current);
});

test("values already at the target version come back as they are", () => {
  const values = TaskV3.create({ name: "n", priority: 1 });
  assert.equal(taskRegistry().upgrade(values, "task@3", TaskV3), values);
});

test("a version without an upgrade function keeps the old values and fills new defaults", () => {
  const V1 = defineSchema({ ns: "plain", version: 1, fields: { a: { type: "string" } } });
  const V2 = defineSchema({
    ns: "plain",
    version: 2,
    fields: { a: { type: "string" }, b: { type: "boolean", default: true } },
  });
  const registry = new SchemaRegistry();
  registry.register(V1);
  assert.deepEqual(registry.upgrade({ a: "x" }, "plain@1", V2), { a: "x", b: true });
});

test("upgrading from an unknown schema or past a missing version is E_UNKNOWN_SCHEMA", () => {
  const registry = new SchemaRegistry();
  registry.register(TaskV1);
  const old = TaskV1.create({ title: "t" });
  assertCode(() => registry.upgrade(old, "task@1", TaskV3), "E_UNKNOWN_SCHEMA", /task@2/);
  assertCode(() => registry.upgrade(old, "task@9", TaskV3), "E_UNKNOWN_SCHEMA", /task@9/);
  assertCode(() => registry.upgrade(old, "nonsense", TaskV3), "E_UNKNOWN_SCHEMA");
});

test("an upgrade function that throws is E_UPGRADE_FAILED with the cause", () => {
  const boom = new Error("boom");
  const V2 = defineSchema({
    ns: "task",
    version: 2,
    fields: taskV1Fields,
    upgrade: () => {
      throw boom;
    },
  });
  const registry = new SchemaRegistry();
  registry.register(TaskV1);
  assert.throws(() => registry.upgrade(TaskV1.create({ title: "t" }), "task@1", V2), (err) => {
    assert.ok(isCairnError(err, "E_UPGRADE_FAILED"));
    assert.match(err.message, /task@1 to task@2: boom/);
    assert.equal(err.cause, boom);
    return true;
  });
});

test("an upgrade that returns invalid data is E_UPGRADE_FAILED, caused by the check", () => {
  const registry = taskRegistry();
  const Broken = defineSchema({
    ns: "task",
    version: 4,
    fields: { name: { type: "string", required: true } },
    upgrade: (old) => ({ name: old.priority }),
  });
  const Dropping = defineSchema({
    ns: "task",
    version: 4,
    fields: { name: { type: "string", required: true }, priority: { type: "number" } },
  });
  const old = TaskV3.create({ name: "n", priority: 1 });
  const assertCause = (upgrade: () => unknown, code: CairnErrorCode) =>
    assert.throws(upgrade, (err) => {
      assert.ok(isCairnError(err, "E_UPGRADE_FAILED"), String(err));
      assert.ok(isCairnError(err.cause, code), String(err.cause));
      return true;
    });
  assertCause(() => registry.upgrade(old, "task@3", Broken), "E_WRONG_TYPE");
  assertCause(() => registry.upgrade(old, "task@3", Dropping), "E_UNKNOWN_FIELD");
  const NotObject = defineSchema({
    ns: "task",
    version: 4,
    fields: { name: { type: "string" } },
    upgrade: untyped(() => 42),
  });
  assertCode(() => registry.upgrade(old, "task@3", NotObject), "E_UPGRADE_FAILED");
});

test("upgrading to an older version or another namespace is E_UPGRADE_FAILED", () => {
  const registry = taskRegistry();
  const values = TaskV3.create({ name: "n", priority: 1 });
  assertCode(() => registry.upgrade(values, "task@3", TaskV1), "E_UPGRADE_FAILED", /task@3/);
  const Note = defineSchema({ ns: "note", version: 2, fields: {} });
  assertCode(() => registry.upgrade(values, "task@1", Note), "E_UPGRADE_FAILED", /note@2/);
});
