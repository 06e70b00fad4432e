/**
 * The oracle: random sequences of local writes and imported remote blocks; after every step,
 * every open live query (filtered or not, sorted or not, limited or not, index-served or not)
 * must equal a full scan computed from scratch — same members, same order. Each step also opens
 * a fresh query (cold: served by an index, or by the union of an `or`'s index lookups, when one
 * applies) and checks it the same way. Filters nest `or` and `and` groups two levels deep. A
 * predicate that throws for some items must leave them out, with `error` set while they exist.
 *
 * 500 seeded sequences by default; CAIRN_QUERY_FUZZ=N runs N, CAIRN_QUERY_SEED=S replays seed S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, type RepositoryHandle } from "cairndb";
import { seededRandom } from "../harness/random.ts";
import {
  check,
  createInput,
  FIELDS,
  localWrite,
  Note,
  type Open,
  predicateQuery,
  randomQuery,
  throwingQuery,
} from "./oracle_queries.ts";
import { chance, envInteger, int, pick } from "./reference.ts";

/** How the cold queries were served, over the whole run: both index paths must be exercised. */
const served = { index: 0, union: 0, scan: 0, "sliced scan": 0 };

async function runSequence(seed: number, local: Cairn, remote: Cairn): Promise<void> {
  const rng = seededRandom(seed);
  const path = `/q/s${seed}`;
  const a = await local.open(path);
  const b = await remote.open(path);
  const sync = async (from: RepositoryHandle, to: RepositoryHandle) => {
    const report = await to.importBlocks(await from.exportBlocks(to.versionVector()));
    assert.equal(report.rejected.length, 0, "in-order import rejected a block");
  };
  if (chance(rng, 0.5)) a.createIndex(pick(rng, ["title", "due", "tags", "done"]));
  const open: Open[] = [predicateQuery(a), throwingQuery(a)];
  for (let n = int(rng, 3, 5); n > 0; n--) open.push(randomQuery(rng, a));
  for (let step = 0; step < 24; step++) {
    const roll = rng();
    if (roll < 0.4) localWrite(rng, a);
    else if (roll < 0.55) {
      for (let n = int(rng, 2, 8); n > 0; n--) localWrite(rng, a);
    } else if (roll < 0.85) {
      if (chance(rng, 0.7)) await sync(a, b);
      for (let n = int(rng, 1, 4); n > 0; n--) localWrite(rng, b);
      await sync(b, a);
    } else if (roll < 0.9) {
      a.createIndex(pick(rng, FIELDS));
    } else {
      open.push(randomQuery(rng, a));
    }
    for (const q of open) check(a, q, `step ${step}`);
    // A fresh, unpooled query: evaluated cold, through an index where one applies.
    const fresh = randomQuery(rng, a, `fresh-${seed}-${step}`);
    check(a, fresh, `step ${step} (cold)`);
    const plan = fresh.query.explain();
    served[plan.mode]++;
    if (plan.use === "union") served.union++;
    fresh.query.close();
  }
  for (const q of open) q.query.close();
  await local.close(path);
  await remote.close(path);
}

test("live queries equal a fresh scan after every local write and imported block", {
  timeout: 120_000,
}, async () => {
  const local = await Cairn.open({ trusted: true, schemas: [Note] });
  const remote = await Cairn.open({ trusted: true, schemas: [Note] });
  const only = envInteger("CAIRN_QUERY_SEED");
  const seeds = only !== undefined
    ? [only]
    : Array.from({ length: envInteger("CAIRN_QUERY_FUZZ") ?? 500 }, (_, i) => i + 1);
  try {
    for (const seed of seeds) {
      try {
        await runSequence(seed, local, remote);
      } catch (err) {
        throw new Error(
          `query oracle failed at seed ${seed} (replay: CAIRN_QUERY_SEED=${seed}): ${
            (err as Error).message
          }`,
          { cause: err },
        );
      }
    }
    if (seeds.length >= 100) {
      assert.ok(served.index > 1000, `only ${served.index} cold queries were index-served`);
      assert.ok(served.union > 100, `only ${served.union} cold queries were served by a union`);
    }
  } finally {
    await local.close();
    await remote.close();
  }
});

/**
 * Unlimited queries sorted by fields place a synchronous run's changes in a batch: one by one
 * when the batch is small against the results, else in one pass. Runs of 1–80 writes over a few
 * hundred items take both ways; the same item often changes twice in a run (it enters and
 * leaves, or moves twice), and reading results in the middle of a run places what came so far.
 */
test("unlimited live queries place runs of writes of any size as a fresh scan orders them", async () => {
  const db = await Cairn.open({ trusted: true, schemas: [Note] });
  const keys = Array.from({ length: 300 }, (_, i) => `m${i.toString(36).padStart(2, "0")}`);
  try {
    for (let seed = 1; seed <= 40; seed++) {
      const rng = seededRandom(seed);
      const repo = await db.open(`/batches/s${seed}`);
      for (const key of keys) repo.create(Note, createInput(rng) as never, { key });
      const open: Open[] = [undefined, ["count"], ["title"], ["done", "count"]].map((sortBy) => {
        const where = chance(rng, 0.7) ? { count: { gte: int(rng, -2, 3) } } : undefined;
        const desc = chance(rng, 0.3);
        const query = repo.query({ schema: Note, where, sortBy: sortBy as never, desc });
        return { query, reference: { schema: Note, where, sortBy, desc } };
      });
      // On a page the first scan may run in slices (a busy machine makes that likelier).
      await Promise.all(open.map(({ query }) => query.ready));
      for (let step = 0; step < 12; step++) {
        const writes = chance(rng, 0.5) ? int(rng, 1, 6) : int(rng, 7, 80);
        for (let n = 0; n < writes; n++) {
          localWrite(rng, repo, chance(rng, 0.3) ? keys.slice(0, 8) : keys);
          if (chance(rng, 0.03)) {
            check(repo, pick(rng, open), `seed ${seed} step ${step} write ${n}`);
          }
        }
        for (const q of open) check(repo, q, `seed ${seed} step ${step}`);
      }
      for (const q of open) q.query.close();
      await db.close(`/batches/s${seed}`);
    }
  } finally {
    await db.close();
  }
});

/**
 * Members that stop matching stay in a batching query's member map as tombstones, taken up again
 * when the item matches again, until they outnumber the members by 16k: then they are cleared.
 * Items here leave and come back in runs large enough to clear them, small ones, and single
 * writes; after every run the results equal a fresh scan.
 */
test("items leaving a query and coming back, in runs of any size, keep it exact", async () => {
  const db = await Cairn.open({ trusted: true, schemas: [Note] });
  const repo = await db.open("/tombstones");
  const total = 20_000;
  const key = (i: number) => `t${i}`;
  for (let i = 0; i < total; i++) repo.create(Note, { title: "a", count: i }, { key: key(i) });
  const open: Open[] = [undefined, ["count"]].map((sortBy) => {
    const where = { count: { lt: total } };
    const query = repo.query({ schema: Note, where, sortBy: sortBy as never });
    return { query, reference: { schema: Note, where, sortBy } };
  });
  const move = (from: number, to: number, out: boolean) => {
    for (let i = from; i < to; i++) repo.get(key(i), Note)?.set("count", out ? total + i : i);
  };
  const checkAll = (where: string) => {
    for (const q of open) check(repo, q, where);
  };
  move(0, 19_000, true); // more tombstones than the slack and the members left: cleared
  checkAll("most out");
  for (let i = 19_000; i < 19_010; i++) repo.get(key(i), Note)!.set("count", i - 19_000);
  checkAll("members left changed after the clearing");
  move(0, total, true);
  assert.equal(open[0].query.results.length, 0);
  move(0, total, false);
  checkAll("all back");
  move(0, 100, true);
  checkAll("a few out");
  move(50, 60, false);
  repo.get(key(5), Note)!.set("count", 3); // back in, another place
  repo.get(key(7), Note)!.delete();
  checkAll("a few back, one moved, one deleted");
  move(0, 18_000, true);
  move(0, 18_000, false);
  move(0, 17_000, true);
  checkAll("out, back and out again in one run");
  move(0, total, false);
  checkAll("all back again");
  await db.close();
});
