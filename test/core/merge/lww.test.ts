import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mergeLastWriterWins, type ScalarWire } from "../../../src/core/merge/lww.ts";
import {
  at,
  copiesMergeOnce,
  groupingDoesNotMatter,
  noChangeGivesBase,
  orderDoesNotMatter,
  RUNS,
  sides,
} from "../../harness/stamps.ts";
import { compareStamps } from "../../../src/core/merge/types.ts";

/** Few distinct values, so sides often agree with base or with each other. */
const scalar: fc.Arbitrary<ScalarWire | undefined> = fc.oneof(
  fc.constantFrom("a", "b", 1, 2, true, false),
  fc.constant(undefined),
);

test("lww: the order of the sides does not matter", () => {
  fc.assert(orderDoesNotMatter(mergeLastWriterWins, scalar, scalar), RUNS);
});

test("lww: a side merged with a copy of itself counts once", () => {
  fc.assert(copiesMergeOnce(mergeLastWriterWins, scalar, scalar), RUNS);
});

test("lww: with no change the base stays", () => {
  fc.assert(noChangeGivesBase(mergeLastWriterWins, scalar), RUNS);
});

test("lww: grouping sides adjacent in stamp order does not matter", () => {
  fc.assert(
    groupingDoesNotMatter(mergeLastWriterWins, scalar, scalar, { adjacentOnly: true }),
    RUNS,
  );
});

test("lww: the result is the latest change, or base when nothing changed", () => {
  fc.assert(
    fc.property(scalar, sides(scalar), (base, list) => {
      const changes = list.filter((s) => s.value !== base);
      const latest = changes.sort((x, y) => compareStamps(y.stamp, x.stamp))[0];
      assert.equal(mergeLastWriterWins(base, list), latest ? latest.value : base);
    }),
    RUNS,
  );
});

test("lww: the later write wins, even when it is the earlier side in the list", () => {
  const merged = mergeLastWriterWins("draft", [
    { value: "final", stamp: at(2) },
    { value: "review", stamp: at(1) },
  ]);
  assert.equal(merged, "final");
});

test("lww: equal clocks are ordered by session", () => {
  const merged = mergeLastWriterWins(0, [
    { value: 2, stamp: at(5, "b") },
    { value: 1, stamp: at(5, "a") },
  ]);
  assert.equal(merged, 2);
});

test("lww: a side that kept the value does not override an older change", () => {
  const merged = mergeLastWriterWins(false, [
    { value: true, stamp: at(1) },
    { value: false, stamp: at(9) },
  ]);
  assert.equal(merged, true);
});

test("lww: removing the field is a change like any other", () => {
  assert.equal(
    mergeLastWriterWins("x", [{ value: undefined, stamp: at(2) }, { value: "y", stamp: at(1) }]),
    undefined,
  );
  assert.equal(
    mergeLastWriterWins(undefined, [{ value: undefined, stamp: at(2) }, {
      value: "y",
      stamp: at(1),
    }]),
    "y",
  );
});

test("lww: grouping fails when the third side's stamp falls between the group's", () => {
  // Why the grouping law is restricted to adjacent stamps: a changed base 0 → 1 at t1, b kept
  // 0 at t3; merged first they give 1 stamped t3, which now outranks c's change at t2.
  const [t1, t2, t3] = [at(1), at(2), at(3)];
  const atOnce = mergeLastWriterWins(0, [
    { value: 1, stamp: t1 },
    { value: 0, stamp: t3 },
    { value: 2, stamp: t2 },
  ]);
  const first = mergeLastWriterWins(0, [{ value: 1, stamp: t1 }, { value: 0, stamp: t3 }]);
  const grouped = mergeLastWriterWins(0, [{ value: first, stamp: t3 }, { value: 2, stamp: t2 }]);
  assert.equal(atOnce, 2);
  assert.equal(grouped, 1);
});
