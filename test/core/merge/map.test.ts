import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { type MapWire, mergeMap } from "../../../src/core/merge/map.ts";
import { compareStamps } from "../../../src/core/merge/types.ts";
import {
  at,
  copiesMergeOnce,
  groupingDoesNotMatter,
  noChangeGivesBase,
  orderDoesNotMatter,
  RUNS,
  sides,
} from "../../harness/stamps.ts";

/** Wire form: keys sorted; few keys and values so sides touch the same keys. */
const mapValue: fc.Arbitrary<MapWire> = fc.dictionary(
  fc.constantFrom("a", "b", "c", "__proto__"),
  fc.constantFrom<MapWire[string]>("x", "y", 1, true, null),
  { maxKeys: 4, noNullPrototype: true },
).map((map) => Object.fromEntries(Object.entries(map).sort(([k1], [k2]) => (k1 < k2 ? -1 : 1))));
const maybeMap = fc.option(mapValue, { nil: undefined });

test("map: the order of the sides does not matter", () => {
  fc.assert(orderDoesNotMatter(mergeMap, maybeMap, maybeMap), RUNS);
});

test("map: a side merged with a copy of itself counts once", () => {
  fc.assert(copiesMergeOnce(mergeMap, maybeMap, maybeMap), RUNS);
});

test("map: with no change the base stays", () => {
  fc.assert(noChangeGivesBase(mergeMap, maybeMap), RUNS);
});

test("map: grouping sides adjacent in stamp order does not matter", () => {
  fc.assert(groupingDoesNotMatter(mergeMap, maybeMap, maybeMap, { adjacentOnly: true }), RUNS);
});

test("map: each key is its latest change, keys come out sorted", () => {
  fc.assert(
    fc.property(maybeMap, sides(maybeMap, { minLength: 1 }), (base, list) => {
      const merged = mergeMap(base, list) ?? {};
      const keys = Object.keys(merged);
      assert.deepEqual(keys, [...keys].sort());
      const valueAt = (map: MapWire | undefined, key: string) =>
        map && Object.hasOwn(map, key) ? map[key] : undefined;
      const latestFirst = [...list].sort((x, y) => compareStamps(y.stamp, x.stamp));
      for (const key of ["a", "b", "c", "__proto__"]) {
        const change = latestFirst.find((s) => valueAt(s.value, key) !== valueAt(base, key));
        assert.equal(
          valueAt(merged, key),
          change ? valueAt(change.value, key) : valueAt(base, key),
          key,
        );
      }
    }),
    RUNS,
  );
});

test("map: concurrent edits of different keys keep both", () => {
  const merged = mergeMap({ color: "red", size: 1 }, [
    { value: { color: "blue", size: 1 }, stamp: at(1) },
    { value: { color: "red", size: 2 }, stamp: at(2) },
  ]);
  assert.deepEqual(merged, { color: "blue", size: 2 });
});

test("map: edits of the same key: the later one wins", () => {
  const merged = mergeMap({ color: "red" }, [
    { value: { color: "green" }, stamp: at(2) },
    { value: { color: "blue" }, stamp: at(1) },
  ]);
  assert.deepEqual(merged, { color: "green" });
});

test("map: a later removal of a key wins over an earlier change", () => {
  const merged = mergeMap({ a: 1, b: 1 }, [
    { value: { a: 2, b: 1 }, stamp: at(1) },
    { value: { b: 1 }, stamp: at(2) },
  ]);
  assert.deepEqual(merged, { b: 1 });
});

test("map: null is a value, distinct from a missing key", () => {
  const merged = mergeMap({ a: 1 }, [
    { value: { a: null }, stamp: at(1) },
    { value: { a: 1, b: null }, stamp: at(2) },
  ]);
  assert.deepEqual(merged, { a: null, b: null });
});

test("map: keys of the result are in sorted order", () => {
  const merged = mergeMap({ m: 1 }, [
    { value: { m: 1, z: 1 }, stamp: at(1) },
    { value: { a: 1, m: 1 }, stamp: at(2) },
  ]);
  assert.deepEqual(Object.keys(merged ?? {}), ["a", "m", "z"]);
});

test("map: grouping fails when the third side's stamp falls between the group's", () => {
  // Why the grouping law is restricted to adjacent stamps: the merged pair carries one stamp
  // for all its keys, the latest, so an early change inside it outranks c's later change.
  const [t1, t2, t3] = [at(1), at(2), at(3)];
  const a = { value: { k: "a" }, stamp: t1 };
  const b = { value: { k: "base", other: "b" }, stamp: t3 };
  const c = { value: { k: "c" }, stamp: t2 };
  const base = { k: "base" };
  const grouped = mergeMap(base, [{ value: mergeMap(base, [a, b]), stamp: t3 }, c]);
  assert.deepEqual(mergeMap(base, [a, b, c]), { k: "c", other: "b" });
  assert.deepEqual(grouped, { k: "a", other: "b" });
});
