/**
 * Issue #3's speed targets, measured in one process: Cairn in memory (signed, the default)
 * against SQLite `:memory:` through node:sqlite, with the prepared statements and primary-key
 * index a performance-conscious SQLite user would write. Each round samples both (which one goes
 * first alternates; this machine is shared and noisy). Reports medians per operation, the median
 * of the per-round ratios with its 95 % confidence interval, and apart from those, the warm-up
 * rounds: a process that has just started runs Cairn's create at 0.43–0.50× for its first
 * ~20 rounds (JIT tiers, the young generation growing to its working size), then settles.
 *
 *   ./node_modules/.bin/deno run -A bench/micro/core_vs_sqlite.ts [--trusted]
 *
 * What is timed:
 * - create: N creates then `await flush()` (sealing, encoding and signing included), per create;
 *   SQLite: `BEGIN`, N INSERTs, `COMMIT`, per insert. Both commit the N writes as one unit: the
 *   flush groups Cairn's creates into one block (until 2026-11-29 SQLite's side made each INSERT
 *   its own transaction, N commits against Cairn's one).
 * - read: `repo.get(key).get("title")`; SQLite: `SELECT title FROM items WHERE id = ?`.
 * - update: N `item.set("count", …)` then `await flush()`, per update; SQLite: `BEGIN`, N
 *   UPDATEs, `COMMIT` (until 2026-11-29: N autocommit UPDATEs).
 * - write 100k: 100k creates + flush; SQLite: one transaction of 100k INSERTs.
 */
import { DatabaseSync } from "node:sqlite";
import { Cairn, type Item } from "../../src/mod.ts";
import { ItemSchema } from "../contenders/cairn.ts";
import { collectPaired, medianInterval, summarize } from "../lib/stats.ts";

/** The benchmark item, as the runner defines it. */
const Entry = ItemSchema;

/**
 * Warm-up and measured rounds per operation. A round of create, read or update takes well under
 * a second, so they get many: the per-round ratio is noisy on a shared machine, and its median
 * needs them to settle.
 */
const PLAN = {
  create: { warmup: 20, rounds: 61 },
  read: { warmup: 5, rounds: 31 },
  update: { warmup: 10, rounds: 31 },
  bulk: { warmup: 2, rounds: 9 },
};
const OPS = 10_000;
const BULK = 100_000;
const trusted = Deno.args.includes("--trusted");

function entry(i: number) {
  return { title: `Item ${i}`, count: i, tags: new Set([`tag${i}`, `category${i % 5}`]) };
}

/** A repository in a database of its own; close the database when done, as SQLite's are. */
async function cairnRepo() {
  const db = await Cairn.open({ trusted });
  return { db, repo: await db.open(`/bench/r${Math.random().toString(36).slice(2)}`) };
}

function sqlite(): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  db.exec(
    "CREATE TABLE items (id TEXT PRIMARY KEY, title TEXT NOT NULL, count INTEGER, tags TEXT)",
  );
  return db;
}

function insertRows(db: DatabaseSync, from: number, to: number): void {
  const insert = db.prepare("INSERT INTO items (id, title, count, tags) VALUES (?, ?, ?, ?)");
  for (let i = from; i < to; i++) {
    insert.run(`k${i}`, `Item ${i}`, i, JSON.stringify([`tag${i}`, `category${i % 5}`]));
  }
}

interface Measured {
  unit: string;
  /** Cairn's samples (`a`) and SQLite's (`b`), round by round. */
  a: number[];
  b: number[];
  warmup: { a: number[]; b: number[] };
}

/** Per operation, in the order measured. */
const results: Record<string, Measured> = {};

/** Runs the warm-up rounds (kept apart) and then the measured rounds of one operation. */
async function measure(
  name: string,
  unit: string,
  plan: { warmup: number; rounds: number },
  cairn: () => number | Promise<number>,
  sqlite: () => number | Promise<number>,
): Promise<void> {
  const warmup = await collectPaired(plan.warmup, 0, cairn, sqlite);
  results[name] = { unit, ...await collectPaired(plan.rounds, 0, cairn, sqlite), warmup };
}

// ── create ──
await measure("create", "µs/op", PLAN.create, async () => {
  const { db, repo } = await cairnRepo();
  const start = performance.now();
  for (let i = 0; i < OPS; i++) repo.create(Entry, entry(i));
  await repo.flush();
  const us = ((performance.now() - start) * 1000) / OPS;
  await db.close();
  return us;
}, () => {
  const db = sqlite();
  const start = performance.now();
  db.exec("BEGIN");
  insertRows(db, 0, OPS);
  db.exec("COMMIT");
  const us = ((performance.now() - start) * 1000) / OPS;
  db.close();
  return us;
});

// ── read a field ──
{
  const { db: cairnDb, repo } = await cairnRepo();
  const keys: string[] = [];
  for (let i = 0; i < OPS; i++) keys.push(repo.create(Entry, entry(i)).key);
  await repo.flush();
  const db = sqlite();
  insertRows(db, 0, OPS);
  const select = db.prepare("SELECT title FROM items WHERE id = ?");
  let sink = 0;
  await measure("read", "µs/op", PLAN.read, () => {
    const start = performance.now();
    for (let r = 0; r < 10; r++) {
      for (let i = 0; i < OPS; i++) sink += repo.get(keys[i], Entry)!.get("title").length;
    }
    return ((performance.now() - start) * 1000) / (OPS * 10);
  }, () => {
    const start = performance.now();
    for (let i = 0; i < OPS; i++) sink += (select.get(`k${i}`) as { title: string }).title.length;
    return ((performance.now() - start) * 1000) / OPS;
  });
  if (sink === 0) throw new Error("reads returned nothing");
  db.close();
  await cairnDb.close();
}

// ── update a field ──
{
  const { db: cairnDb, repo } = await cairnRepo();
  const items: Item<typeof Entry>[] = [];
  for (let i = 0; i < OPS; i++) items.push(repo.create(Entry, entry(i)));
  await repo.flush();
  const db = sqlite();
  insertRows(db, 0, OPS);
  const update = db.prepare("UPDATE items SET count = ? WHERE id = ?");
  let round = 0;
  await measure("update", "µs/op", PLAN.update, async () => {
    round++;
    const start = performance.now();
    for (let i = 0; i < OPS; i++) items[i].set("count", i + round);
    await repo.flush();
    return ((performance.now() - start) * 1000) / OPS;
  }, () => {
    round++;
    const start = performance.now();
    db.exec("BEGIN");
    for (let i = 0; i < OPS; i++) update.run(i + round, `k${i}`);
    db.exec("COMMIT");
    return ((performance.now() - start) * 1000) / OPS;
  });
  db.close();
  await cairnDb.close();
}

// ── write 100k ──
await measure("write 100k", "ms", PLAN.bulk, async () => {
  const { db, repo } = await cairnRepo();
  const start = performance.now();
  for (let i = 0; i < BULK; i++) repo.create(Entry, entry(i));
  await repo.flush();
  const ms = performance.now() - start;
  await db.close();
  return ms;
}, () => {
  const db = sqlite();
  const start = performance.now();
  db.exec("BEGIN");
  insertRows(db, 0, BULK);
  db.exec("COMMIT");
  const ms = performance.now() - start;
  db.close();
  return ms;
});

console.log(
  `Cairn (${
    trusted ? "trusted" : "signed"
  }, in memory) vs SQLite :memory: (node:sqlite), Deno ${Deno.version.deno}; medians of the ` +
    "measured rounds, each sampling both (which goes first alternates)",
);
console.log(
  "operation     unit     Cairn     SQLite    ratio of medians  median ratio (95% CI)  " +
    "Cairn CV  SQLite CV  rounds",
);
for (const [name, r] of Object.entries(results)) {
  const c = summarize(r.a);
  const s = summarize(r.b);
  const ratios = perRoundRatios(r.a, r.b);
  const interval = medianInterval(ratios);
  const ci = `${interval.low.toFixed(3)}–${interval.high.toFixed(3)}`;
  console.log(
    `${name.padEnd(13)} ${r.unit.padEnd(6)} ${c.median.toFixed(3).padStart(9)} ${
      s.median.toFixed(3).padStart(9)
    }    ${(c.median / s.median).toFixed(3).padStart(8)}×     ${
      summarize(ratios).median.toFixed(3).padStart(8)
    }× (${ci})  ${percent(c.cv)}     ${percent(s.cv)}  ${String(r.a.length).padStart(6)}`,
  );
}
console.log("\nwarm-up rounds, not in the figures above (median ratio, per operation):");
for (const [name, r] of Object.entries(results)) {
  const ratios = perRoundRatios(r.warmup.a, r.warmup.b);
  console.log(
    `${name.padEnd(13)} ${summarize(ratios).median.toFixed(3)}× over ${ratios.length} rounds`,
  );
}

function perRoundRatios(cairn: readonly number[], sqlite: readonly number[]): number[] {
  return cairn.map((value, i) => value / sqlite[i]);
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(0).padStart(3)}%`;
}
