import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { ItemSnapshot, RestoredItems } from "../../src/core/snapshot.ts";
import { ItemMap } from "../../src/repo/item_map.ts";

function state(tag: string, live: boolean): ItemSnapshot {
  return { leaves: [], wire: live ? { tag } : undefined, schema: "s@1", deltas: 0 };
}

/** Restored items as storage would hand them over, counting the states it had to make. */
function restoredItems(entries: readonly [string, boolean][]) {
  const made: (ItemSnapshot | undefined)[] = [];
  const items: RestoredItems & { made: number } = {
    count: entries.length,
    liveCount: entries.filter(([, live]) => live).length,
    made: 0,
    indexOf: (key) => entries.findIndex(([k]) => k === key),
    keyAt: (index) => entries[index][0],
    isLive: (index) => entries[index][1],
    itemAt(index) {
      if (!made[index]) items.made++;
      return made[index] ??= {
        ...state(`restored ${index}`, entries[index][1]),
        live: entries[index][1],
      };
    },
  };
  return items;
}

const keyArb = fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h");

test("an item map behaves as a Map whose first entries are the restored ones", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(keyArb, fc.boolean()), { selector: ([key]) => key, maxLength: 5 }),
      fc.array(fc.tuple(keyArb, fc.boolean(), fc.boolean()), { maxLength: 12 }),
      (restored, steps) => {
        const items = restoredItems(restored);
        const map = new ItemMap(items);
        const model = new Map<string, ItemSnapshot>();
        restored.forEach((_, i) => model.set(items.keyAt(i), items.itemAt(i)));
        steps.forEach(([key, isSet, live], step) => {
          if (isSet) {
            const next = state(`step ${step}`, live);
            map.set(key, next);
            model.set(key, next);
          }
          assert.equal(map.get(key), model.get(key));
          assert.equal(map.has(key), model.has(key));
        });
        assert.equal(map.size, model.size);
        assert.deepEqual([...map], [...model]);
        assert.deepEqual([...map.keys()], [...model.keys()]);
        assert.deepEqual([...map.values()], [...model.values()]);
        const seen: [string, ItemSnapshot][] = [];
        map.forEach((value, key, self) => {
          assert.equal(self, map);
          seen.push([key, value]);
        });
        assert.deepEqual(seen, [...model]);
        const live = [...model].filter(([, s]) => s.wire !== undefined).map(([key]) => key);
        assert.deepEqual([...map.liveKeys()], live);
      },
    ),
    { seed: 0x17e3, numRuns: 500 },
  );
});

test("restoring makes no state: a restored item's state is made on its first lookup, once", () => {
  const items = restoredItems([["a", true], ["b", false], ["c", true]]);
  const map = new ItemMap(items);
  assert.equal(map.size, 3);
  assert.deepEqual([...map.liveKeys()], ["a", "c"]);
  assert.equal(map.has("b"), true);
  assert.equal(items.made, 0, "neither size, has nor liveKeys makes states");
  assert.equal(map.get("c"), map.get("c"));
  assert.equal(items.made, 1);
  assert.equal(map.get("z"), undefined);
  map.set("z", state("new", true));
  assert.deepEqual([...map.keys()], ["a", "b", "c", "z"]);
});
