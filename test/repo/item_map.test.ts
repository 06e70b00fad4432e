import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { ItemState } from "../../src/core/item_state.ts";
import type { RestoredItems } from "../../src/core/snapshot.ts";
import { GeneratedKeys } from "../../src/repo/generated_keys.ts";
import { ItemMap } from "../../src/repo/item_map.ts";

function state(tag: string, live: boolean): ItemState {
  return { leaves: [], wire: live ? { tag } : undefined, schema: "s@1", deltas: 0 };
}

/** Restored items as storage would hand them over, counting the states it had to make. */
function restoredItems(entries: readonly [string, boolean][]) {
  const made: (ItemState | undefined)[] = [];
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

const SESSION = "abcdefgh-jklmnopqrstuv";
/** Keys of a repository that has made none yet: numbers up to its margin are filed by number. */
const generatedKeys = new GeneratedKeys(SESSION, () => 0);

test("generated keys: each number has one key, and only that key reads back as it", () => {
  for (const seq of [1, 9, 10, 35, 36, 1295, 46656, 2 ** 31 - 1]) {
    const key = generatedKeys.make(seq);
    assert.equal(key, `${seq.toString(36)}-abcdefgh`);
    assert.equal(generatedKeys.seqOf(key), seq);
  }
  for (
    const other of [
      "01-abcdefgh", // a leading zero: another spelling of 1
      "A-abcdefgh", // upper case: another spelling of 10
      "-abcdefgh", // no number
      "1-abcdefgX", // another session's prefix
      "1-abcdefg", // a shorter prefix
      "1_abcdefgh",
      "1 -abcdefgh",
      "zzzzzz-abcdefgh", // above 2^31 - 1: left to the hashed path
      "1000000-abcdefgh", // seven digits
      "a",
      "",
    ]
  ) assert.equal(generatedKeys.seqOf(other), -1, other);
  // What a key made now is filed under, without parsing it again: the same answer as parsing.
  for (const seq of [1, 36, 2 ** 31 - 1, 2 ** 31, 36 ** 6 - 1, 36 ** 6]) {
    assert.equal(
      generatedKeys.filedSeq(seq),
      generatedKeys.seqOf(generatedKeys.make(seq)),
      `${seq}`,
    );
  }
});

/** Ordinary keys, generated keys of this session, and look-alikes that are not generated ones. */
const keyArb = fc.constantFrom(
  "a",
  "b",
  "c",
  "d",
  "1-abcdefgh",
  "2-abcdefgh",
  "a-abcdefgh",
  "zz-abcdefgh",
  "zzzz-abcdefgh", // spelled as generated, but far past what the repository made: by hash
  "01-abcdefgh",
  "A-abcdefgh",
  "2-abcdefgX",
);

/**
 * The documented order: restored entries as stored, then keys added later — ordinary ones (and
 * look-alikes whose number is far out) in insertion order, then generated ones by their number.
 */
function documentedOrder(
  model: Map<string, ItemState>,
  restoredCount: number,
): [string, ItemState][] {
  const entries = [...model];
  const restored = entries.slice(0, restoredCount);
  const later = entries.slice(restoredCount);
  const byNumber = ([key]: [string, ItemState]) => generatedKeys.files(generatedKeys.seqOf(key));
  const ordinary = later.filter((entry) => !byNumber(entry));
  const generated = later.filter(byNumber)
    .sort(([a], [b]) => generatedKeys.seqOf(a) - generatedKeys.seqOf(b));
  return [...restored, ...ordinary, ...generated];
}

test("an item map behaves as a Map: restored entries first, generated keys last", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(keyArb, fc.boolean()), { selector: ([key]) => key, maxLength: 5 }),
      fc.array(fc.tuple(keyArb, fc.boolean(), fc.boolean()), { maxLength: 12 }),
      fc.boolean(),
      (restored, steps, withRestored) => {
        const items = withRestored ? restoredItems(restored) : undefined;
        const map = new ItemMap(items, generatedKeys);
        const model = new Map<string, ItemState>();
        if (items) restored.forEach((_, i) => model.set(items.keyAt(i), items.itemAt(i)));
        steps.forEach(([key, isSet, live], step) => {
          if (isSet) {
            const next = state(`step ${step}`, live);
            map.set(key, next);
            model.set(key, next);
          }
          assert.equal(map.get(key), model.get(key));
          assert.equal(map.has(key), model.has(key));
        });
        const expected = documentedOrder(model, items?.count ?? 0);
        assert.equal(map.size, model.size);
        assert.deepEqual([...map], expected);
        assert.deepEqual([...map.keys()], expected.map(([key]) => key));
        assert.deepEqual([...map.values()], expected.map(([, value]) => value));
        const seen: [string, ItemState][] = [];
        map.forEach((value, key, self) => {
          assert.equal(self, map);
          seen.push([key, value]);
        });
        assert.deepEqual(seen, expected);
        const live = expected.filter(([, s]) => s.wire !== undefined).map(([key]) => key);
        assert.deepEqual([...map.liveKeys()], live);
      },
    ),
    { seed: 0x17e3, numRuns: 800 },
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

test("a key spelled as generated, numbered far past the repository's own, is filed by hash", () => {
  let used = 0;
  const keys = new GeneratedKeys(SESSION, () => used);
  const map = new ItemMap(undefined, keys);
  const made = keys.make(1);
  const far = keys.make(10_000);
  for (const key of [made, "a", far]) map.set(key, state(key, true));
  // Filed by hash, `far` comes in insertion order before the keys filed by number: the array
  // those are walked in holds 2 slots, not 10,001.
  assert.deepEqual([...map.keys()], ["a", far, made]);
  // A peer may send any key: the largest number a key may spell, with this session's prefix.
  const farthest = keys.make(2 ** 31 - 1);
  map.set(farthest, state(farthest, true));
  assert.deepEqual([...map.keys()], ["a", far, farthest, made]);
  assert.deepEqual([...map.liveKeys()], ["a", far, farthest, made]);
  assert.equal(map.get(farthest)?.wire?.tag, farthest);
  assert.equal(map.has(farthest), true);
  // Once the repository's own numbers pass it, `far` is found where it was filed, and only there.
  used = 20_000;
  map.set(far, state("again", true));
  assert.equal(map.get(far)?.wire?.tag, "again");
  assert.equal(map.size, 4);
  const near = keys.make(19_000);
  map.set(near, state(near, true));
  assert.deepEqual([...map.keys()], ["a", far, farthest, made, near]);
  assert.equal(map.get(made)?.wire?.tag, made);
});
