import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { mergeCounter } from "../../../src/core/merge/counter.ts";
import {
  at,
  groupingDoesNotMatter,
  noChangeGivesBase,
  orderDoesNotMatter,
  RUNS,
  sides,
} from "../../harness/stamps.ts";

const count = fc.option(fc.integer({ min: -1000, max: 1000 }), { nil: undefined });
const fraction = fc.option(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { nil: undefined });

test("counter: the order of the sides does not matter", () => {
  fc.assert(orderDoesNotMatter(mergeCounter, count, count), RUNS);
});

test("counter: the order of the sides does not matter, even for fractions", () => {
  fc.assert(orderDoesNotMatter(mergeCounter, fraction, fraction), RUNS);
});

test("counter: with no change the base stays", () => {
  fc.assert(noChangeGivesBase(mergeCounter, count), RUNS);
});

test("counter: grouping the sides does not matter (integers)", () => {
  fc.assert(groupingDoesNotMatter(mergeCounter, count, count), RUNS);
});

test("counter: the result is base plus every side's increment", () => {
  fc.assert(
    fc.property(count, sides(count), (base, list) => {
      const expected = list.reduce((sum, s) => sum + (s.value ?? 0) - (base ?? 0), base ?? 0);
      const allAbsent = base === undefined && list.every((s) => s.value === undefined);
      assert.equal(mergeCounter(base, list), allAbsent ? undefined : expected);
    }),
    RUNS,
  );
});

test("counter: two concurrent increments both count", () => {
  assert.equal(mergeCounter(5, [{ value: 6, stamp: at(1) }, { value: 6, stamp: at(2) }]), 7);
});

test("counter: increments and decrements add up", () => {
  const sides = [{ value: 13, stamp: at(1) }, { value: 7, stamp: at(2) }, {
    value: 10,
    stamp: at(3),
  }];
  assert.equal(mergeCounter(10, sides), 10);
});

test("counter: an absent counter counts as 0", () => {
  assert.equal(
    mergeCounter(undefined, [{ value: 2, stamp: at(1) }, { value: 3, stamp: at(2) }]),
    5,
  );
  assert.equal(mergeCounter(undefined, [{ value: undefined, stamp: at(1) }]), undefined);
});

test("counter: a single change is taken exactly, without rounding", () => {
  assert.equal(
    mergeCounter(0.1, [{ value: 0.3, stamp: at(1) }, { value: 0.1, stamp: at(2) }]),
    0.3,
  );
});

test("counter: a sum past the largest number stays at it, whatever the order of the sides", () => {
  const huge = [{ value: 1.7e308, stamp: at(1) }, { value: 1.7e308, stamp: at(2) }];
  assert.equal(mergeCounter(0, huge), Number.MAX_VALUE);
  assert.equal(mergeCounter(0, huge.map((s) => ({ ...s, value: -s.value }))), -Number.MAX_VALUE);
  // An increment itself past the largest number: (1.7e308 − −1.7e308) from the base.
  const wide = [{ value: 1.7e308, stamp: at(1) }, { value: -1e308, stamp: at(2) }];
  assert.equal(mergeCounter(-1.7e308, wide), Number.MAX_VALUE);
  const extreme = fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), {
    nil: undefined,
  });
  fc.assert(orderDoesNotMatter(mergeCounter, extreme, extreme), RUNS);
  fc.assert(
    fc.property(extreme, sides(extreme), (base, list) => {
      const merged = mergeCounter(base, list);
      assert.ok(merged === undefined || Number.isFinite(merged), String(merged));
    }),
    RUNS,
  );
});
