import { test } from "node:test";
import assert from "node:assert/strict";
import { split } from "../../bench/workloads/sync_fanout.ts";

test("split shares a total over parts as evenly as can be, the larger shares first", () => {
  assert.deepEqual(split(10, 4), [3, 3, 2, 2]);
  assert.deepEqual(split(500, 4), [125, 125, 125, 125]);
  assert.deepEqual(split(3, 4), [1, 1, 1, 0]);
  for (const [total, parts] of [[10, 3], [101, 4], [0, 2]]) {
    assert.equal(split(total, parts).reduce((a, b) => a + b, 0), total);
  }
});
