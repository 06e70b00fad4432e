import { test } from "node:test";
import assert from "node:assert/strict";
import { plannedCells } from "../../bench/entry/suite.ts";
import { runtimeLinesOf } from "../../bench/report/charts.ts";
import { growthSection } from "../../bench/report/growth_section.ts";
import { charted, tableLines } from "../../bench/report/view.ts";
import { around, envelope, INFO, row } from "./rows.ts";

const FILL = ["10k items", "100k items", "1M items"];

/** G04 (write) times and G02 (memory) figures per size, in full-run sizes. */
function run(writeMs: number[], heapPerItem: number[]) {
  const made = envelope([
    ...FILL.map((size, i) => row("G04.v1", size, "cairn", around(writeMs[i]))),
    ...FILL.map((size, i) => row("G04.v1", size, "sqlite-wal", around(writeMs[0] * 10 ** i))),
    ...FILL.map((size, i) =>
      row("G02.v2", `${size} · every value read · heap`, "cairn", around(heapPerItem[i]))
    ),
  ]);
  made.runtimes.deno!.info = { ...INFO, heapLimit: 4 * 2 ** 30 };
  return growthSection(made, [runtimeLinesOf(made, "deno")!]).join("\n");
}

test("growth: linear growth is not flagged; ten times the items in 20 times the time is", () => {
  const linear = run([40, 400, 4_000], [500, 500, 500]);
  assert.match(linear, /## How cost grows/);
  assert.match(linear, /\| 10k \| 100k \| 1M \| 10k → 100k \| 100k → 1M \|/);
  assert.match(linear, /Nothing measured here grows faster than linearly/);
  assert.doesNotMatch(linear, /⚠ \*\*/);

  const quadratic = run([40, 400, 8_000], [500, 500, 500]);
  assert.match(quadratic, /⚠ \*\*20\.0×\*\*/);
  assert.match(quadratic, /G04 Write all items \+ close \(ms\), Cairn, 100k → 1M: 20\.0×/);
  // SQLite's 10× steps stay unflagged beside it.
  assert.equal(quadratic.match(/⚠ \*\*/g)?.length, 1);
});

test("growth: a figure per item that rises with the size is flagged, one that falls is not", () => {
  const rising = run([40, 400, 4_000], [400, 420, 900]);
  assert.match(rising, /G02 Memory per item · every value read · heap \(B\/item\), .*100k → 1M/);
  assert.doesNotMatch(rising, /10k → 100k: /);
  const falling = run([40, 400, 4_000], [3_000, 900, 600]);
  assert.doesNotMatch(falling, /⚠ \*\*/);
});

test("growth: one process's capacity comes from the heap per item at the largest size", () => {
  const text = run([40, 400, 4_000], [800, 700, 512]);
  // 4 GiB / 512 B = 8,388,608 items.
  assert.match(text, /4\.00 GiB; at 512 B of heap per item \(1M items, every value read\)/);
  assert.match(text, /holds about 8\.4M items/);
});

test("growth rows stay out of charts and run in Deno and Node on two contenders only", () => {
  const made = envelope([
    row("G05.v2", "10k items", "cairn", around(20)),
    row("G05.v2", "10k items", "sqlite-wal", around(10)),
  ]);
  const [line] = tableLines(made.runtimes.deno!);
  assert.equal(line.family, "growth");
  assert.ok(line.ratios.size > 0, "the table still shows its ratio");
  assert.equal(charted(line), false);

  const settings = { quick: false, filter: "^G0" };
  assert.equal(plannedCells("browser", settings).length, 0);
  const cells = plannedCells("node", settings);
  assert.deepEqual([...new Set(cells.map((c) => c.contender.id))].sort(), ["cairn", "sqlite-wal"]);
  assert.deepEqual(
    [...new Set(cells.filter((c) => c.workload.id === "G05.v2").map((c) => c.variant.items))],
    [10_000, 100_000, 1_000_000],
  );
});
