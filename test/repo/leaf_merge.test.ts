/**
 * LeafMerge keeps, per field, only the leaves whose value there is not the very value of base,
 * and adds leaves one at a time. The oracle is the rule itself (mergeField) given every leaf's
 * value, in stamp order, as a merge of all leaves at once always did.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Commit, FieldRecord, WireValue } from "../../src/core/commit.ts";
import { compareStamps, mergeField } from "../../src/core/merge/mod.ts";
import { defineSchema } from "../../src/core/schema.ts";
import type { Schema as AnySchema } from "../../src/core/schema_types.ts";
import { LeafMerge } from "../../src/repo/leaf_merge.ts";
import { ALL_TYPES } from "../harness/schemas.ts";

const Schema = defineSchema(ALL_TYPES) as unknown as AnySchema;
const FIELDS = Schema.fieldNames;

const scalarFor: Record<string, fc.Arbitrary<WireValue>> = {
  title: fc.constantFrom("a", "b", "c"),
  rank: fc.oneof(fc.integer({ min: -2, max: 2 }), fc.double({ min: -1, max: 1, noNaN: true })),
  done: fc.boolean(),
  due: fc.integer({ min: 0, max: 3 }),
  tags: fc.uniqueArray(fc.constantFrom("x", "y", "z", "w"), { maxLength: 3 }).map((tags) =>
    tags.sort()
  ),
  meta: fc.dictionary(fc.constantFrom("k", "l", "m"), fc.constantFrom(1, 2, "v"), {
    maxKeys: 3,
    noNullPrototype: true,
  }),
  notes: fc.constantFrom("", "ab", "abc", "xbc", "abcd"),
  likes: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.double({ min: 0, max: 5, noNaN: true })),
};

/** A field's value: absent, or one of its type's. */
const fieldValue = (field: string) =>
  fc.option(scalarFor[field], { nil: undefined, freq: 4 }) as fc.Arbitrary<WireValue | undefined>;

const record: fc.Arbitrary<Record<string, WireValue | undefined>> = fc.record(
  Object.fromEntries(FIELDS.map((field) => [field, fieldValue(field)])),
  { noNullPrototype: true },
);

/**
 * How a leaf's field relates to base: the very same value (what a leaf that did not touch the
 * field holds), an equal copy, or a value of its own.
 */
const relation = fc.constantFrom("same", "copy", "own");

const leaf = fc.record({
  hlc: fc.integer({ min: 1, max: 4 }),
  session: fc.constantFrom("s1", "s2", "s3"),
  relations: fc.array(relation, { minLength: FIELDS.length, maxLength: FIELDS.length }),
  own: record,
});

function withoutAbsent(value: Record<string, WireValue | undefined>): FieldRecord {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined),
  ) as FieldRecord;
}

function stamped(hlc: number, session: string, seq: number): Commit {
  return {
    session,
    seq,
    key: "item",
    hlc,
    parents: ["a.1"],
    schema: Schema.id,
    kind: "value",
    value: {},
  };
}

test("leaf merge: leaves added one at a time merge as every leaf's value does at once", () => {
  fc.assert(
    fc.property(
      record,
      fc.array(leaf, { minLength: 2, maxLength: 6 }),
      fc.boolean(),
      fc.infiniteStream(fc.nat()),
      (baseFields, leaves, notesIsDocument, order) => {
        const base = withoutAbsent(baseFields);
        const sides = leaves.map(({ hlc, session, relations, own }, i) => {
          const value: Record<string, WireValue | undefined> = {};
          FIELDS.forEach((field, f) => {
            const relation = relations[f];
            const before = base[field];
            value[field] = relation === "same"
              ? before
              : relation === "copy"
              ? structuredClone(before)
              : own[field];
          });
          return { stamp: stamped(hlc, session, i + 1), value: withoutAbsent(value) };
        });
        const isDocument = (field: string) => notesIsDocument && field === "notes";

        const merge = new LeafMerge(null, Schema, base, isDocument);
        const shuffled = [...sides];
        const picks = order[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = picks.next().value % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
        }
        for (const side of shuffled) merge.add(side.stamp, side.value);

        const inStampOrder = [...sides].sort((a, b) => compareStamps(a.stamp, b.stamp));
        const expected: FieldRecord = {};
        for (const field of FIELDS) {
          if (isDocument(field)) {
            if (sides.some((side) => side.value[field] !== undefined)) expected[field] = "";
            continue;
          }
          const type = Schema.fields[field].type;
          const value = mergeField(
            type,
            base[field],
            inStampOrder.map((side) => ({ stamp: side.stamp, value: side.value[field] })),
          );
          if (value !== undefined) expected[field] = value;
        }
        assert.deepStrictEqual(merge.result(), expected);
      },
    ),
    { numRuns: 2_000, seed: 0x1eaf },
  );
});

test("leaf merge: only a live leaf under its schema, starting from its ancestor, may be added", () => {
  const ancestor = stamped(1, "s0", 1);
  const isDocument = (field: string) => field === "notes";
  const merge = new LeafMerge(ancestor, Schema, {}, isDocument);
  const fromAncestor = { ...stamped(2, "s1", 1), parents: ["s0.1"] };
  assert.equal(merge.accepts(fromAncestor, isDocument), true);
  assert.equal(merge.accepts({ ...fromAncestor, parents: ["s0.2"] }, isDocument), false);
  assert.equal(merge.accepts({ ...fromAncestor, parents: ["s0.1", "s2.1"] }, isDocument), false);
  assert.equal(merge.accepts({ ...fromAncestor, schema: "all@2" }, isDocument), false);
  const deleted: Commit = { ...fromAncestor, kind: "delete" } as Commit;
  assert.equal(merge.accepts(deleted, isDocument), false);
  // A text field that has become a document since (or stopped being one) merges another way.
  assert.equal(merge.accepts(fromAncestor, () => false), false);
  assert.equal(
    new LeafMerge(null, Schema, {}, isDocument).accepts(fromAncestor, isDocument),
    false,
  );
});
