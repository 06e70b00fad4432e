/**
 * Issue #5's query targets, measured in one process: Cairn in memory against SQLite `:memory:`
 * (node:sqlite) with prepared statements and, for the indexed cases, the index a SQLite user
 * would create (`CREATE INDEX items_count ON items(count)`). Medians of several samples.
 *
 *   ./node_modules/.bin/deno run -A bench/micro/query_vs_sqlite.ts
 *
 * What is timed (100k items, `count = i`; the filter `count > 98999` selects 1k). Wherever a
 * result array is had, each result's key, title and count are read (Cairn: `item.key`,
 * `item.get(…)`; SQLite: each row's id, title and count, rows as arrays through
 * `setReturnArrays(true)`), as the runner's W12 does: so both sides hand over the same values.
 * - cold, no index: a new live query (unpooled id) and reading its 1k results; SQLite: `SELECT
 *   id, title, count FROM items WHERE count > ?` without an index, reading its rows.
 * - cold, indexed: the same with an index on `count`; SQLite: the same SELECT, indexed.
 * - warm: `q.results` of an open query (nothing changed), and `repo.query(sameOptions).results`,
 *   then reading them; SQLite has no result cache: the indexed SELECT again.
 * - live update N (100/1k/10k): N `item.set("count", …)` on items the query holds, the end of the
 *   tick (`await repo.flush()`: index batches applied, the block sealed and signed), then reading
 *   `q.results`; SQLite: N UPDATEs in one transaction, then the indexed SELECT again.
 * Every pair of rows is sampled alternately (`collectPaired`), as this machine is shared and
 * noisy. (Until 2026-11-29 Cairn's side took `q.results.length` only, while SQLite's built a row
 * object per result, and the cold rows sampled one side, then the other.)
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Cairn, type Item } from "../../src/mod.ts";
import { ItemSchema } from "../contenders/cairn.ts";
import { collectPaired, summarize } from "../lib/stats.ts";

/** The benchmark item, as the runner defines it. */
const Entry = ItemSchema;

const N = 100_000;
const THRESHOLD = 98_999;
const SAMPLES = 15;

function sqlite(indexed: boolean): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  db.exec(
    "CREATE TABLE items (id TEXT PRIMARY KEY, title TEXT NOT NULL, count INTEGER, tags TEXT)",
  );
  const insert = db.prepare("INSERT INTO items (id, title, count, tags) VALUES (?, ?, ?, ?)");
  db.exec("BEGIN");
  for (let i = 0; i < N; i++) {
    insert.run(`k${i}`, `Item ${i}`, i, JSON.stringify([`tag${i}`, `category${i % 5}`]));
  }
  db.exec("COMMIT");
  if (indexed) db.exec("CREATE INDEX items_count ON items(count)");
  return db;
}

async function cairn(indexed: boolean) {
  const db = await Cairn.open();
  const repo = await db.open(`/bench/q${indexed ? "i" : "s"}`);
  const items: Item<typeof Entry>[] = [];
  for (let i = 0; i < N; i++) {
    items.push(repo.create(Entry, {
      title: `Item ${i}`,
      count: i,
      tags: new Set([`tag${i}`, `category${i % 5}`]),
    }, { key: `k${i}` }));
  }
  await repo.flush();
  if (indexed) repo.createIndex("count");
  return { repo, items };
}

type Row = { label: string; unit: string; cairn: number[]; sqlite: number[] };
const rows: Row[] = [];
let sink = 0;
let unique = 0;

/** Reads each result's key, title and count; returns how many there were. */
function readResults(results: readonly Item<typeof Entry>[]): number {
  for (const item of results) {
    sink += item.key.length + item.get("title").length + item.get("count");
  }
  return results.length;
}

/** Runs the SELECT and reads each row's id, title and count; returns how many rows. */
function readRows(select: StatementSync, threshold: number): number {
  const rows = select.all(threshold) as unknown as [string, string, number][];
  for (const [id, title, count] of rows) sink += id.length + title.length + count;
  return rows.length;
}

/** The filter, prepared to return rows as arrays. */
function prepareSelect(db: DatabaseSync): StatementSync {
  const select = db.prepare("SELECT id, title, count FROM items WHERE count > ?");
  select.setReturnArrays(true);
  return select;
}

for (const indexed of [false, true]) {
  const { repo } = await cairn(indexed);
  const db = sqlite(indexed);
  const select = prepareSelect(db);
  const { a: cairnMs, b: sqliteMs } = await collectPaired(SAMPLES, 3, () => {
    const start = performance.now();
    const q = repo.query({
      schema: Entry,
      where: { count: { gt: THRESHOLD } },
      id: `c${unique++}`,
    });
    sink += readResults(q.results);
    const ms = performance.now() - start;
    q.close();
    return ms;
  }, () => {
    const start = performance.now();
    sink += readRows(select, THRESHOLD);
    return performance.now() - start;
  });
  rows.push({
    label: `cold 100k→1k ${indexed ? "indexed" : "no index"}`,
    unit: "ms",
    cairn: cairnMs,
    sqlite: sqliteMs,
  });
  db.close();
}

{
  const { repo, items } = await cairn(true);
  const db = sqlite(true);
  const select = prepareSelect(db);
  const options = { schema: Entry, where: { count: { gt: THRESHOLD } } };
  const q = repo.query(options);
  const REPS = 1_000;
  const sqlWarm = () => {
    const start = performance.now();
    sink += readRows(select, THRESHOLD);
    return (performance.now() - start) * 1000;
  };
  const warm = await collectPaired(SAMPLES, 2, () => {
    const start = performance.now();
    for (let i = 0; i < REPS; i++) sink += readResults(q.results);
    return ((performance.now() - start) * 1000) / REPS;
  }, sqlWarm);
  rows.push({ label: "warm q.results", unit: "µs", cairn: warm.a, sqlite: warm.b });
  const again = await collectPaired(SAMPLES, 2, () => {
    const start = performance.now();
    for (let i = 0; i < REPS; i++) sink += readResults(repo.query(options).results);
    return ((performance.now() - start) * 1000) / REPS;
  }, sqlWarm);
  rows.push({ label: "warm repo.query(same)", unit: "µs", cairn: again.a, sqlite: again.b });
  const update = db.prepare("UPDATE items SET count = ? WHERE id = ?");
  let round = 0;
  for (const size of [100, 1_000, 10_000]) {
    // Items the query holds (count > THRESHOLD) and items it does not, alternately: each update
    // moves an item within, into or out of the results.
    const targets = items.slice(N - size / 2).concat(items.slice(N - size - size / 2, N - size));
    const { a: cairn, b: sqlite } = await collectPaired(
      SAMPLES,
      2,
      async () => {
        round++;
        const start = performance.now();
        for (let i = 0; i < targets.length; i++) {
          targets[i].set("count", N - 1 - ((i * 7 + round) % (2 * size)));
        }
        await repo.flush();
        sink += readResults(q.results);
        return performance.now() - start;
      },
      () => {
        round++;
        const start = performance.now();
        db.exec("BEGIN");
        for (let i = 0; i < targets.length; i++) {
          update.run(N - 1 - ((i * 7 + round) % (2 * size)), targets[i].key);
        }
        db.exec("COMMIT");
        sink += readRows(select, THRESHOLD);
        return performance.now() - start;
      },
    );
    rows.push({ label: `live update ${size}`, unit: "ms", cairn, sqlite });
  }
  db.close();
}

if (sink === 0) throw new Error("queries returned nothing");
console.log(
  `Cairn live queries vs SQLite :memory: (node:sqlite), Deno ${Deno.version.deno}; medians`,
);
console.log("operation                    unit       Cairn      SQLite   ratio (Cairn/SQLite)");
for (const r of rows) {
  const c = summarize(r.cairn).median;
  const s = summarize(r.sqlite).median;
  console.log(
    `${r.label.padEnd(28)} ${r.unit.padEnd(4)} ${c.toFixed(4).padStart(11)} ${
      s.toFixed(4).padStart(11)
    }   ${(c / s).toFixed(3).padStart(9)}×`,
  );
}
