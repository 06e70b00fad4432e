import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mergeSet } from "../../../src/core/merge/set.ts";
import {
  at,
  copiesMergeOnce,
  groupingDoesNotMatter,
  noChangeGivesBase,
  orderDoesNotMatter,
  RUNS,
  sides,
} from "../../harness/stamps.ts";

/** Wire form: sorted, unique; a small alphabet so sides overlap. */
const setValue = fc.uniqueArray(fc.constantFrom<string>("a", "b", "c", "d", "e"), { maxLength: 5 })
  .map((elements) => elements.sort());
const maybeSet = fc.option(setValue, { nil: undefined });

test("set: the order of the sides does not matter", () => {
  fc.assert(orderDoesNotMatter(mergeSet, maybeSet, maybeSet), RUNS);
});

test("set: a side merged with a copy of itself counts once", () => {
  fc.assert(copiesMergeOnce(mergeSet, maybeSet, maybeSet), RUNS);
});

test("set: with no change the base stays", () => {
  fc.assert(noChangeGivesBase(mergeSet, maybeSet), RUNS);
});

test("set: grouping the sides does not matter", () => {
  fc.assert(groupingDoesNotMatter(mergeSet, maybeSet, maybeSet), RUNS);
});

test("set: every added element is in, every removed element is out", () => {
  fc.assert(
    fc.property(maybeSet, sides(maybeSet, { minLength: 1 }), (base, list) => {
      const merged = mergeSet(base, list) ?? [];
      const before = new Set(base);
      for (const s of list) {
        const after = new Set(s.value);
        for (const e of after) if (!before.has(e)) assert.ok(merged.includes(e), `added ${e}`);
        for (const e of before) if (!after.has(e)) assert.ok(!merged.includes(e), `removed ${e}`);
      }
      for (const e of merged) assert.ok(before.has(e) || list.some((s) => s.value?.includes(e)));
      assert.deepEqual(merged, [...new Set(merged)].sort());
    }),
    RUNS,
  );
});

test("set: concurrent adds of different tags keep both", () => {
  const merged = mergeSet(["home"], [
    { value: ["home", "urgent"], stamp: at(1) },
    { value: ["errand", "home"], stamp: at(2) },
  ]);
  assert.deepEqual(merged, ["errand", "home", "urgent"]);
});

test("set: a removal wins over a side that only kept the element", () => {
  const merged = mergeSet(["a", "b"], [
    { value: ["b"], stamp: at(1) },
    { value: ["a", "b", "c"], stamp: at(2) },
  ]);
  assert.deepEqual(merged, ["b", "c"]);
});

test("set: an absent set counts as empty", () => {
  assert.deepEqual(
    mergeSet(["a"], [{ value: undefined, stamp: at(1) }, { value: ["a", "b"], stamp: at(2) }]),
    ["b"],
  );
  assert.deepEqual(mergeSet(["a"], [{ value: undefined, stamp: at(1) }]), []);
  assert.equal(mergeSet(undefined, [{ value: undefined, stamp: at(1) }]), undefined);
});
