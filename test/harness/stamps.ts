/**
 * For the merge rule tests: generators of stamps and sides, and the laws every rule is checked
 * against, as fast-check properties.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  compareStamps,
  type FieldMerge,
  type MergeSide,
  type Stamp,
} from "../../src/core/merge/types.ts";

/** Small ranges, so equal clocks (ties broken by session, then seq) come up often. */
export const stamp: fc.Arbitrary<Stamp> = fc.record({
  hlc: fc.integer({ min: 0, max: 4 }),
  session: fc.constantFrom("s1", "s2", "s3"),
  seq: fc.integer({ min: 1, max: 3 }),
}, { noNullPrototype: true });

const stampKey = (s: Stamp) => `${s.hlc}/${s.session}/${s.seq}`;

/** `count` distinct stamps, in ascending order. Distinct sides (leaves) never share a stamp. */
export function ascendingStamps(count: number): fc.Arbitrary<Stamp[]> {
  return fc.uniqueArray(stamp, { selector: stampKey, minLength: count, maxLength: count })
    .map((stamps) => stamps.sort(compareStamps));
}

/** Between minLength and maxLength sides with distinct stamps, values drawn from `value`. */
export function sides<V>(
  value: fc.Arbitrary<V | undefined>,
  { minLength = 0, maxLength = 4 } = {},
): fc.Arbitrary<MergeSide<V>[]> {
  return fc.uniqueArray(fc.record({ value, stamp }, { noNullPrototype: true }), {
    selector: (side) => stampKey(side.stamp),
    minLength,
    maxLength,
  });
}

/** A list together with a shuffled copy of it. */
export function shuffled<T>(items: T[]): fc.Arbitrary<[T[], T[]]> {
  return fc.tuple(
    fc.constant(items),
    fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }),
  );
}

function side<V>(value: V | undefined, stamp: Stamp): MergeSide<V> {
  return { value, stamp };
}

/** Commutative: any permutation of the sides gives the same result. */
export function orderDoesNotMatter<V>(
  merge: FieldMerge<V>,
  base: fc.Arbitrary<V | undefined>,
  value: fc.Arbitrary<V | undefined>,
) {
  return fc.property(
    base,
    sides(value, { maxLength: 5 }).chain(shuffled),
    (b, [list, shuffled]) => {
      assert.deepEqual(merge(b, shuffled), merge(b, list));
    },
  );
}

/** Idempotent: a side merged with a copy of itself (another stamp) is merged once. */
export function copiesMergeOnce<V>(
  merge: FieldMerge<V>,
  base: fc.Arbitrary<V | undefined>,
  value: fc.Arbitrary<V | undefined>,
) {
  return fc.property(base, value, ascendingStamps(2), (b, v, [s1, s2]) => {
    const once = merge(b, [side(v, s1)]);
    assert.deepEqual(merge(b, [side(v, s1), side(v, s2)]), once);
    assert.deepEqual(merge(b, [side(v, s2), side(v, s1)]), once);
  });
}

/** With no sides, or only sides that left the field as it was, the result is base. */
export function noChangeGivesBase<V>(merge: FieldMerge<V>, base: fc.Arbitrary<V | undefined>) {
  return fc.property(base, ascendingStamps(3), (b, stamps) => {
    assert.deepEqual(merge(b, []), b);
    assert.deepEqual(merge(b, stamps.map((s) => side(b, s))), b);
  });
}

/**
 * Associative in the grouping sense: merging a and b first, then that result (stamped with the
 * later of their stamps) with c, equals merging a, b and c at once. `adjacentOnly` restricts the
 * group {a, b} to sides next to each other in stamp order (c is earlier or later than both),
 * which is all last-writer-wins rules admit: see the examples in their tests.
 */
export function groupingDoesNotMatter<V>(
  merge: FieldMerge<V>,
  base: fc.Arbitrary<V | undefined>,
  value: fc.Arbitrary<V | undefined>,
  { adjacentOnly = false } = {},
) {
  const order = adjacentOnly ? fc.constantFrom([0, 1, 2], [1, 2, 0]) : fc.constantFrom(
    [0, 1, 2],
    [0, 2, 1],
    [1, 2, 0],
  );
  return fc.property(
    base,
    fc.tuple(value, value, value),
    ascendingStamps(3),
    order,
    (b, values, stamps, [ia, ib, ic]) => {
      const [a, bSide, c] = [ia, ib, ic].map((i) => side(values[i], stamps[i]));
      const ab = side(merge(b, [a, bSide]), stamps[Math.max(ia, ib)]);
      assert.deepEqual(merge(b, [ab, c]), merge(b, [a, bSide, c]));
    },
  );
}

/** Stamps for hand-written examples: `at(1)` is earlier than `at(2)`. */
export function at(hlc: number, session = "s"): Stamp {
  return { hlc, session, seq: 1 };
}

/** Runs per property; every merge property test uses at least this many. */
export const RUNS = { numRuns: 300 };
