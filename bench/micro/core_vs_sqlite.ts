/**
 * Issue #3's speed targets, measured in one process: Cairn in memory (signed, the default)
 * against SQLite `:memory:` through node:sqlite, with the prepared statements and primary-key
 * index a performance-conscious SQLite user would write. The two are sampled alternately (this
 * machine is shared and noisy); reports medians per operation and the median of the per-round
 * ratios.
 *
 *   ./node_modules/.bin/deno run -A bench/micro/core_vs_sqlite.ts [--trusted]
 *
 * What is timed:
 * - create: N creates then `await flush()` (sealing, encoding and signing included), per create;
 *   SQLite: N autocommit INSERTs (each its own transaction), per insert.
 * - read: `repo.get(key).get("title")`; SQLite: `SELECT title FROM items WHERE id = ?`.
 * - update: N `item.set("count", …)` then `await flush()`, per update; SQLite: autocommit UPDATE.
 * - write 100k: 100k creates + flush; SQLite: one transaction of 100k INSERTs.
 */
import { DatabaseSync } from "node:sqlite";
import { Cairn, type Item } from "../../src/mod.ts";
import { ItemSchema } from "../contenders/cairn.ts";
import { collectPaired, summarize } from "../lib/stats.ts";

/** The benchmark item, as the runner defines it. */
const Entry = ItemSchema;

const SAMPLES = 15;
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

/** Per operation: Cairn's samples (`a`) and SQLite's (`b`), taken alternately. */
const results: Record<string, { a: number[]; b: number[]; unit: string }> = {};

// ── create ──
results.create = {
  unit: "µs/op",
  ...await collectPaired(SAMPLES, 2, async () => {
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
    insertRows(db, 0, OPS);
    const us = ((performance.now() - start) * 1000) / OPS;
    db.close();
    return us;
  }),
};

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
  results.read = {
    unit: "µs/op",
    ...await collectPaired(SAMPLES, 3, () => {
      const start = performance.now();
      for (let r = 0; r < 10; r++) {
        for (let i = 0; i < OPS; i++) sink += repo.get(keys[i], Entry)!.get("title").length;
      }
      return ((performance.now() - start) * 1000) / (OPS * 10);
    }, () => {
      const start = performance.now();
      for (let i = 0; i < OPS; i++) sink += (select.get(`k${i}`) as { title: string }).title.length;
      return ((performance.now() - start) * 1000) / OPS;
    }),
  };
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
  results.update = {
    unit: "µs/op",
    ...await collectPaired(SAMPLES, 2, async () => {
      round++;
      const start = performance.now();
      for (let i = 0; i < OPS; i++) items[i].set("count", i + round);
      await repo.flush();
      return ((performance.now() - start) * 1000) / OPS;
    }, () => {
      round++;
      const start = performance.now();
      for (let i = 0; i < OPS; i++) update.run(i + round, `k${i}`);
      return ((performance.now() - start) * 1000) / OPS;
    }),
  };
  db.close();
  await cairnDb.close();
}

// ── write 100k ──
results["write 100k"] = {
  unit: "ms",
  ...await collectPaired(7, 1, async () => {
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
  }),
};

console.log(
  `Cairn (${
    trusted ? "trusted" : "signed"
  }, in memory) vs SQLite :memory: (node:sqlite), Deno ${Deno.version.deno}; medians of ≥7 ` +
    "samples taken alternately",
);
console.log(
  "operation     unit     Cairn     SQLite    ratio of medians  median ratio  Cairn CV  SQLite CV",
);
for (const [name, r] of Object.entries(results)) {
  const c = summarize(r.a);
  const s = summarize(r.b);
  const perRound = summarize(r.a.map((cairn, i) => cairn / r.b[i]));
  console.log(
    `${name.padEnd(13)} ${r.unit.padEnd(6)} ${c.median.toFixed(3).padStart(9)} ${
      s.median.toFixed(3).padStart(9)
    }    ${(c.median / s.median).toFixed(3).padStart(8)}×     ${
      perRound.median.toFixed(3).padStart(8)
    }×      ${(c.cv * 100).toFixed(0).padStart(3)}%     ${(s.cv * 100).toFixed(0).padStart(3)}%`,
  );
}
