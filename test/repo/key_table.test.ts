import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { KeyTable } from "../../src/repo/key_table.ts";

test("a key table answers as a Map would, in insertion order, through growth and collisions", () => {
  fc.assert(
    fc.property(
      // Few distinct short keys collide often; many keys make the table grow several times.
      fc.array(fc.tuple(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 400 }),
      (steps) => {
        const table = new KeyTable<number>();
        const model = new Map<string, number>();
        for (const [key, value] of steps) {
          table.set(key, value);
          model.set(key, value);
          assert.equal(table.get(key), value);
        }
        assert.equal(table.size, model.size);
        const entries = Array.from(
          { length: table.size },
          (_, i) => [table.keyAt(i), table.valueAt(i)],
        );
        assert.deepEqual(entries, [...model]);
        for (const [key, value] of model) assert.equal(table.get(key), value);
        for (const absent of ["\u{1F600}", "absent key", "zz zz"]) {
          assert.equal(table.indexOf(absent) >= 0, model.has(absent));
        }
      },
    ),
    { seed: 0x5eed, numRuns: 300 },
  );
});

test("a key table keeps the first string it was set with and finds it from an equal one", () => {
  const table = new KeyTable<string>();
  const first = ["it", "em-1"].join("");
  table.set(first, "a");
  table.set(`item-${1}`, "b");
  assert.equal(table.size, 1);
  assert.equal(table.keyAt(0), first);
  assert.equal(table.get("item-1"), "b");
});
