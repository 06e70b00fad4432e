import { test } from "node:test";
import assert from "node:assert/strict";
import { plannedCells, rotated } from "../../bench/entry/suite.ts";

test("rotated starts the list at the given element and wraps", () => {
  assert.deepEqual(rotated(["a", "b", "c"], 0), ["a", "b", "c"]);
  assert.deepEqual(rotated(["a", "b", "c"], 1), ["b", "c", "a"]);
  assert.deepEqual(rotated(["a", "b", "c"], 5), ["c", "a", "b"]);
  assert.deepEqual(rotated([], 3), []);
});

test("planned cells: every contender goes first in some rows, each row keeps every contender", () => {
  const cells = plannedCells("deno", { quick: true, filter: "^W" });
  const rows = new Map<string, string[]>();
  for (const { workload, variant, contender } of cells) {
    const key = `${workload.id} ${variant.label}`;
    rows.set(key, [...(rows.get(key) ?? []), contender.id]);
  }
  const everyone = [...new Set(cells.map((c) => c.contender.id))].sort();
  assert.ok(everyone.includes("cairn") && everyone.includes("sqlite-wal"));
  const firsts = new Set<string>();
  for (const [key, contenders] of rows) {
    firsts.add(contenders[0]);
    assert.equal(new Set(contenders).size, contenders.length, `${key}: a contender twice`);
  }
  assert.ok(firsts.has("cairn"), "Cairn goes first in some rows");
  assert.ok(
    [...firsts].some((id) => id.startsWith("sqlite")),
    `SQLite goes first in some rows; firsts: ${[...firsts].join(", ")}`,
  );
});
