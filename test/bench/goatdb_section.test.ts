import { test } from "node:test";
import assert from "node:assert/strict";
import { GOATDB_ROWS, GOATDB_SOURCE, goatdbContext } from "../../bench/lib/goatdb_published.ts";
import { goatdbSection, goatLines } from "../../bench/report/goatdb_section.ts";
import { WORKLOADS } from "../../bench/workloads/index.ts";
import { around, envelope, row } from "./rows.ts";

const RUN = envelope([
  // Read item: GoatDB trusted on Deno 1.2 / 14.0 µs = 1/11.7; Cairn 0.85 / 14 = 1/16.5.
  row("W05.v1", "100k items", "cairn-trusted", around(0.85)),
  row("W05.v1", "100k items", "sqlite-full", around(14)),
  // Bulk read: GoatDB 208.8 / 430.8 = 1/2.1; Cairn 300 / 400 = 1/1.33: GoatDB's is lower.
  row("W08.v1", "100k items", "cairn-trusted", around(300)),
  row("W08.v1", "100k items", "sqlite-full", around(400)),
  // Create instance: GoatDB 1.2 ms / 88.6 µs = 13.5×; Cairn 1,374 / 88.2 = 15.6×: even.
  row("W01.v3", "new", "cairn-trusted", around(1_374)),
  row("W01.v3", "new", "sqlite-full", around(88.2)),
  // Update item on Deno: GoatDB's SQLite figure is its whole function; not compared.
  row("W06.v1", "100k items", "cairn-trusted", around(27.5)),
  row("W06.v1", "100k items", "sqlite-full", around(935)),
  // The profile GoatDB's SQLite is not set up like is not the one divided by.
  row("W05.v1", "100k items", "sqlite-wal", around(1)),
]);

function lineOf(name: string) {
  return goatLines(RUN).find((l) => l.runtime === "deno" && l.row.name === name)!;
}

test("goatdb: the lower ratio to each side's own SQLite wins, within 1.25× is even", () => {
  const read = lineOf("Read item by ID");
  assert.equal(read.goat, 1.2);
  assert.equal(read.goatColumn, "trusted");
  assert.ok(Math.abs(read.cairnRatio! - 0.85 / 14) < 1e-9);
  assert.equal(read.verdict, "Cairn");
  assert.equal(lineOf("Bulk read 100 items").verdict, "GoatDB");
  assert.equal(lineOf("Create instance").verdict, "even");
});

test("goatdb: a row whose work differs keeps its figures, with no verdict and the reason", () => {
  const update = lineOf("Update item");
  assert.equal(update.verdict, "not compared");
  assert.match(update.why!, /whole benchmark function/);
  assert.ok(update.cairnRatio! < update.goatRatio);
  const section = goatdbSection(RUN).join("\n");
  assert.match(section, /\| Update item \| 82\.2 µs \(trusted\) \| 1\/12 \| W06\.v1 100k items \|/);
  assert.match(section, /Update item, .*not compared:\*\* GoatDB's SQLite figure/);
});

test("goatdb: a loss is shown as a loss, and the section states its conditions", () => {
  const section = goatdbSection(RUN).join("\n");
  assert.match(section, /\| Bulk read 100 items \|.*\| \*\*GoatDB\*\* \|/);
  assert.match(section, /GoatDB's in 1 row,/);
  assert.match(section, /absolute times are not comparable/);
  assert.match(section, /Averages against medians/);
  assert.match(section, new RegExp(GOATDB_SOURCE.commit.slice(0, 12)));
  assert.match(section, /Apple M4 Pro/);
});

test("goatdb: a row measured only under an older version is taken from it, and named", () => {
  const older = envelope([
    { ...row("W11.v3", "100k items", "cairn-trusted", around(21.6)), workload: "W11.v2" },
    { ...row("W11.v3", "100k items", "sqlite-full", around(43.4)), workload: "W11.v2" },
  ]);
  const read = goatLines(older).find((l) => l.row.workload === "W11")!;
  assert.equal(read.workload, "W11.v2");
  assert.equal(read.verdict, "Cairn");
  assert.match(goatdbSection(older).join("\n"), /Figures of W11\.v2 are of versions older/);
  const none = goatLines(older).find((l) => l.row.workload === "W05")!;
  assert.equal(none.verdict, "no figure");
});

test("goatdb: each matched workload carries the published row as context, its id unchanged", () => {
  for (const goat of GOATDB_ROWS) {
    const workload = WORKLOADS.find((w) => w.id.startsWith(`${goat.workload}.`));
    assert.ok(workload, goat.workload);
    assert.equal(workload.context, goatdbContext(goat.workload));
    assert.ok(workload.context!.includes(`"${goat.name}"`));
    assert.ok(workload.variants(false).some((v) => v.label === goat.variant), goat.variant);
  }
});
