/** Subscriptions: once per batch of changes (a synchronous run, one imported block), never for unrelated writes. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "cairndb";
import { captureUncaught } from "../harness/peers.ts";
import { TITLE_AND_COUNT } from "../harness/schemas.ts";

const Entry = defineSchema(TITLE_AND_COUNT);

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

async function setup() {
  const db = await Cairn.open({ trusted: true, schemas: [Entry] });
  const repo = await db.open("/data/sub");
  return { db, repo };
}

test("1,000 synchronous writes notify a subscriber once, with the final results", async () => {
  const { db, repo } = await setup();
  const q = repo.query({ schema: Entry, where: { count: { gte: 500 } }, sortBy: "count" });
  const seen: number[] = [];
  q.subscribe((results) => seen.push(results.length));
  for (let i = 0; i < 1000; i++) repo.create(Entry, { title: `t${i}`, count: i });
  assert.equal(q.results.length, 500, "results are up to date synchronously");
  await tick();
  assert.deepEqual(seen, [500]);
  await db.close();
});

test("writes that change no query's results notify nobody", async () => {
  const { db, repo } = await setup();
  for (let i = 0; i < 20; i++) repo.create(Entry, { title: `t${i}`, count: i }, { key: `k${i}` });
  const high = repo.query({ schema: Entry, where: { count: { gte: 10 } } });
  const top = repo.query({ schema: Entry, sortBy: "count", limit: 3 });
  // In a browser the cold scan runs in slices and publishes once when complete: wait for that.
  await Promise.all([high.ready, top.ready]);
  let calls = 0;
  high.subscribe(() => calls++);
  top.subscribe(() => calls++);
  await tick();
  repo.get("k5", Entry)!.set("count", 6); // below `high`; ranks 6th, outside `top`'s 3
  repo.create(Entry, { title: "new", count: 7 }); // the same
  repo.get("k7", Entry)!.delete(); // the same
  await tick();
  assert.equal(calls, 0);
  repo.get("k1", Entry)!.set("title", "renamed"); // a visible member of `top` changed
  await tick();
  assert.equal(calls, 1);
  await db.close();
});

test("unsubscribe stops notifications; a member's change notifies even in place", async () => {
  const { db, repo } = await setup();
  const item = repo.create(Entry, { title: "a", count: 1 });
  const q = repo.query({ schema: Entry });
  let calls = 0;
  const off = q.subscribe(() => calls++);
  item.set("title", "b");
  await tick();
  assert.equal(calls, 1);
  off();
  item.set("title", "c");
  await tick();
  assert.equal(calls, 1);
  await db.close();
});

test("one imported block notifies once; each query of the repository is updated on import", async () => {
  const local = await Cairn.open({ trusted: true, schemas: [Entry] });
  const remote = await Cairn.open({ trusted: true, schemas: [Entry] });
  const a = await local.open("/data/sub");
  const b = await remote.open("/data/sub");
  const q = a.query({ schema: Entry, where: { count: { lt: 50 } }, sortBy: "count", desc: true });
  await q.ready; // the cold scan's own publication (sliced in a browser) is not what is counted here
  const notified: number[] = [];
  q.subscribe((results) => notified.push(results.length));
  for (let i = 0; i < 100; i++) b.create(Entry, { title: `r${i}`, count: i });
  const first = await b.exportBlocks(a.versionVector());
  assert.equal(first.length, 1);
  await a.importBlocks(first);
  await tick();
  assert.deepEqual(notified, [50]);
  assert.equal(q.results[0].get("count"), 49);
  // Two more blocks: one notification each.
  b.create(Entry, { title: "x", count: 1 });
  await b.flush();
  b.create(Entry, { title: "y", count: 2 });
  const more = await b.exportBlocks(a.versionVector());
  assert.equal(more.length, 2);
  await a.importBlocks(more);
  await tick();
  assert.deepEqual(notified, [50, 51, 52]);
  await local.close();
  await remote.close();
});

test("a throwing subscriber does not stop the others or the write", async () => {
  const { db, repo } = await setup();
  const q = repo.query({ schema: Entry });
  let other = 0;
  q.subscribe(() => {
    throw new Error("boom");
  });
  q.subscribe(() => other++);
  const errors = await captureUncaught(() => {
    repo.create(Entry, { title: "a" });
  });
  assert.equal(other, 1);
  assert.equal(repo.count(), 1);
  assert.equal(errors.length, 1);
  await db.close();
});
