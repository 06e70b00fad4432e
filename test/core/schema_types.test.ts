/**
 * Type-level checks of schema inference, verified by `deno check` (the test runner checks types
 * first). Each `@ts-expect-error` line must fail to compile; the same calls also fail at run time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  type CreateInput,
  defineSchema,
  type FieldName,
  type FieldValue,
  SchemaRegistry,
  type Values,
} from "../../src/core/schema.ts";
import type { MapScalar } from "../../src/core/field_type.ts";
import type { FieldRead } from "../../src/core/schema_types.ts";
import { isCairnError } from "../../src/core/errors.ts";

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

/** Compiles only when given `true`, so `expectType<Equal<A, B>>(true)` asserts A = B. */
function expectType<T extends true>(ok: T): void {
  assert.equal(ok, true);
}

const Task = defineSchema({
  ns: "task",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    done: { type: "boolean", default: false },
    status: { type: "string", required: true, default: "open" },
    tags: { type: "set" },
    notes: { type: "text" },
    rank: { type: "number", validate: (n) => n >= 0 || "rank must be ≥ 0" },
    due: { type: "date" },
    meta: { type: "map" },
    likes: { type: "counter" },
  },
  indexes: ["rank"],
});

test("Values maps each field type to its typed form; only required fields are always there", () => {
  expectType<
    Equal<Values<typeof Task>, {
      readonly title: string;
      readonly status: string;
      readonly done?: boolean;
      readonly tags?: ReadonlySet<string>;
      readonly notes?: string;
      readonly rank?: number;
      readonly due?: Date;
      readonly meta?: ReadonlyMap<string, MapScalar>;
      readonly likes?: number;
    }>
  >(true);
});

test("CreateInput makes required fields without a default mandatory, all others optional", () => {
  expectType<
    Equal<CreateInput<typeof Task>, {
      title: string;
      status?: string;
      done?: boolean;
      tags?: ReadonlySet<string>;
      notes?: string;
      rank?: number;
      due?: Date;
      meta?: ReadonlyMap<string, MapScalar>;
      likes?: number;
    }>
  >(true);
});

test("FieldName and FieldValue name a schema's fields and their typed values", () => {
  expectType<
    Equal<
      FieldName<typeof Task>,
      "title" | "done" | "status" | "tags" | "notes" | "rank" | "due" | "meta" | "likes"
    >
  >(true);
  expectType<Equal<FieldValue<typeof Task, "due">, Date>>(true);
  expectType<Equal<FieldValue<typeof Task, "tags">, ReadonlySet<string>>>(true);
  expectType<Equal<FieldValue<typeof Task, "likes">, number>>(true);
});

test("FieldRead, what item.get returns, includes undefined exactly for fields not required", () => {
  expectType<Equal<FieldRead<typeof Task, "title">, string>>(true);
  expectType<Equal<FieldRead<typeof Task, "status">, string>>(true);
  // A default fills in `create` only: the field can be unset later, so it may be absent.
  expectType<Equal<FieldRead<typeof Task, "done">, boolean | undefined>>(true);
  expectType<Equal<FieldRead<typeof Task, "due">, Date | undefined>>(true);
  const absent: FieldRead<typeof Task, "due"> = Task.create({ title: "x" }).due;
  assert.equal(absent, undefined);
  // @ts-expect-error: `due` may be absent, so it must be checked before use
  assert.throws(() => absent.getTime(), TypeError);
});

test("create and checkField return typed values", () => {
  const task = Task.create({ title: "write", tags: new Set(["a"]) });
  const title: string = task.title;
  const tags: ReadonlySet<string> | undefined = task.tags;
  const rank: number | undefined = Task.checkField("rank", 3);
  assert.deepEqual([title, tags, rank], ["write", new Set(["a"]), 3]);
});

test("create rejects wrong types, unknown fields and missing required fields", () => {
  // @ts-expect-error title must be a string
  assert.throws(() => Task.create({ title: 3 }));
  // @ts-expect-error title is required
  assert.throws(() => Task.create({ done: true }));
  // @ts-expect-error unknown field
  assert.throws(() => Task.create({ title: "a", tilte: "b" }));
  // @ts-expect-error a set holds strings
  assert.throws(() => Task.create({ title: "a", tags: new Set([1]) }));
  // @ts-expect-error a date field takes a Date, not its wire form
  assert.throws(() => Task.create({ title: "a", due: 1_700_000_000_000 }));
});

test("checkField checks the field name and the value's type", () => {
  // @ts-expect-error rank is a number
  assert.throws(() => Task.checkField("rank", "3"));
  // @ts-expect-error unknown field
  assert.throws(() => Task.checkField("rnak", 3));
});

test("definitions are typed: defaults, validators and indexes must match the fields", () => {
  assert.throws(() =>
    // @ts-expect-error default of the wrong type
    defineSchema({ ns: "x", version: 1, fields: { n: { type: "number", default: "1" } } })
  );
  assert.throws(() =>
    // @ts-expect-error unknown field type
    defineSchema({ ns: "x", version: 1, fields: { n: { type: "float" } } })
  );
  assert.throws(() =>
    // @ts-expect-error an index must name a field
    defineSchema({ ns: "x", version: 1, fields: { n: { type: "number" } }, indexes: ["m"] })
  );
  defineSchema({
    ns: "x",
    version: 1,
    // @ts-expect-error a string validator has no numeric comparison
    fields: { s: { type: "string", validate: (s) => s.toFixed(0) === "0" } },
  });
});

test("the registry's upgrade returns the target schema's values", () => {
  const TaskV2 = defineSchema({
    ns: "task",
    version: 2,
    fields: { title: { type: "string", required: true }, priority: { type: "number" } },
    upgrade: ({ title }) => ({ title, priority: 0 }),
  });
  const registry = new SchemaRegistry();
  registry.register(Task);
  const upgraded = registry.upgrade(Task.create({ title: "t" }), "task@1", TaskV2);
  expectType<Equal<typeof upgraded, Values<typeof TaskV2>>>(true);
  assert.deepEqual(upgraded, { title: "t", priority: 0 });
});

test("with `from`, upgrade is typed from the previous version's values to this version's input", () => {
  const TaskV2 = defineSchema({
    ns: "task",
    version: 2,
    from: Task,
    fields: { title: { type: "string", required: true }, priority: { type: "number" } },
    upgrade: (old) => {
      expectType<Equal<typeof old, Values<typeof Task>>>(true);
      return { title: old.title, priority: old.rank ?? 0 };
    },
  });
  const registry = new SchemaRegistry();
  registry.register(Task);
  const stored = Task.create({ title: "t", rank: 3 });
  assert.deepEqual(registry.upgrade(stored, "task@1", TaskV2), { title: "t", priority: 3 });

  defineSchema({
    ns: "task",
    version: 2,
    from: Task,
    fields: { title: { type: "string", required: true } },
    // @ts-expect-error the previous version has no field "name"
    upgrade: (old) => ({ title: old.name }),
  });
  defineSchema({
    ns: "task",
    version: 2,
    from: Task,
    fields: { title: { type: "string", required: true } },
    // @ts-expect-error the result lacks the required field "title"
    upgrade: (old) => ({ priority: old.rank }),
  });
});

test("`from` must be the schema of the version before, in the same namespace", () => {
  const fields = { title: { type: "string" } } as const;
  for (const def of [{ ns: "task", version: 3 }, { ns: "other", version: 2 }]) {
    assert.throws(
      () => defineSchema({ ...def, from: Task, fields }),
      (err: unknown) => isCairnError(err, "E_BAD_SCHEMA") && /got task@1/.test(err.message),
    );
  }
  assert.throws(
    () => defineSchema({ ns: "task", version: 2, from: {} as typeof Task, fields }),
    (err: unknown) => isCairnError(err, "E_BAD_SCHEMA"),
  );
});
