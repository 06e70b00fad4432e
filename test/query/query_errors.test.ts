/**
 * A query's own code that throws (its `where` predicate, its `sortBy` comparator) never fails a
 * write, and is handled the same way cold and live: an item whose predicate throws does not match,
 * `q.error` says so while it lasts, and each batch's error goes to `onError` listeners (or is
 * reported as uncaught when there are none).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Cairn,
  type CairnError,
  defineSchema,
  isCairnError,
  type Item,
  type LiveQuery,
} from "cairndb";
import { QueryRegistry } from "../../src/query/registry.ts";
import { captureUncaught } from "../harness/peers.ts";
import { FakeSource } from "./fake_source.ts";
import { TITLE_AND_COUNT } from "../harness/schemas.ts";

const Entry = defineSchema(TITLE_AND_COUNT);
type EntryItem = Item<typeof Entry>;

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Throws for items without a count; matches even counts. */
function evenCount(item: EntryItem): boolean {
  const count = item.get("count");
  if (count === undefined) throw new TypeError(`${item.key} has no count`);
  return count % 2 === 0;
}

async function setup() {
  const db = await Cairn.open({ trusted: true, schemas: [Entry] });
  const repo = await db.open("/data/errors");
  for (let i = 0; i < 10; i++) {
    repo.create(Entry, { title: `e${i}`, count: i === 3 ? undefined : i }, { key: `k${i}` });
  }
  return { db, repo };
}

const keysOf = (results: readonly EntryItem[]) => results.map((item) => item.key);

test("cold: an item whose predicate throws does not match; q.error and onError say why", async () => {
  const { db, repo } = await setup();
  const q = repo.query({ schema: Entry, where: evenCount });
  assert.deepEqual(keysOf(q.results), ["k0", "k2", "k4", "k6", "k8"]);
  assert.ok(isCairnError(q.error, "E_QUERY_FAILED"));
  assert.match(q.error!.message, /where predicate throws for item k3/);
  assert.ok(q.error!.cause instanceof TypeError);
  const heard: CairnError[] = [];
  q.onError((error) => heard.push(error));
  await tick();
  assert.equal(heard.length, 1, "the evaluation's error is reported once, a microtask later");
  assert.match(heard[0].message, /where predicate threw for item k3: k3 has no count/);
  assert.equal((await q.ready).length, 5);
  await db.close();
});

test("live: the write goes on; the item leaves the results; fixing or deleting it clears the error", async () => {
  const { db, repo } = await setup();
  const q = repo.query({ schema: Entry, where: evenCount, sortBy: "count" });
  const heard: CairnError[] = [];
  q.onError((error) => heard.push(error));
  await q.ready; // a browser scan publishes once when complete: not what is counted here
  await tick();
  heard.length = 0; // the cold evaluation's report (k3)
  const batches: string[][] = [];
  q.subscribe((results) => batches.push(keysOf(results)));

  repo.get("k4", Entry)!.set("count", undefined); // a member now throws: it leaves
  repo.get("k6", Entry)!.set("count", undefined);
  repo.get("k5", Entry)!.set("count", undefined); // not a member: throws, stays out
  assert.equal(repo.get("k4", Entry)!.get("count"), undefined, "the write happened");
  assert.deepEqual(keysOf(q.results), ["k0", "k2", "k8"]);
  assert.match(q.error!.message, /throws for item k5 \(and 3 other items\)/);
  await tick();
  assert.equal(heard.length, 1, "one report per batch");
  assert.match(heard[0].message, /item k5/);
  assert.deepEqual(batches, [["k0", "k2", "k8"]]);

  repo.get("k4", Entry)!.set("count", 40); // evaluates again: matches
  repo.get("k6", Entry)!.delete();
  repo.get("k3", Entry)!.set("count", 30);
  assert.deepEqual(keysOf(q.results), ["k0", "k2", "k8", "k3", "k4"]);
  assert.match(q.error!.message, /throws for item k5:/, "only k5 still fails");
  repo.get("k5", Entry)!.update({ count: 1 });
  assert.equal(q.error, undefined);
  await tick();
  assert.equal(heard.length, 1, "a batch where nothing threw reports nothing");

  // The live query is what a fresh evaluation gives, error included.
  repo.get("k9", Entry)!.set("count", undefined);
  const fresh = repo.query({ schema: Entry, where: evenCount, sortBy: "count" });
  fresh.onError(() => {});
  assert.deepEqual(keysOf(fresh.results), keysOf(q.results));
  assert.equal(fresh.error!.message, q.error!.message);
  await db.close();
});

test("a throwing comparator ties the items it could not order; every match stays, the error is reported", async () => {
  const { db, repo } = await setup();
  const q = repo.query({
    schema: Entry,
    sortBy: (a, b) => {
      if (a.get("count") === undefined || b.get("count") === undefined) throw new Error("no count");
      return a.get("count")! - b.get("count")!;
    },
  });
  const heard: CairnError[] = [];
  q.onError((error) => heard.push(error));
  assert.equal(q.results.length, 10);
  assert.equal(q.error, undefined, "error is about items left out, and none is");
  await tick();
  assert.equal(heard.length, 1);
  assert.match(heard[0].message, /sortBy comparator threw comparing items/);
  repo.get("k3", Entry)!.set("count", 3.5);
  repo.get("k7", Entry)!.set("count", undefined);
  repo.get("k7", Entry)!.set("count", 7);
  repo.create(Entry, { title: "new" }, { key: "k10" });
  assert.deepEqual([...keysOf(q.results)].sort(), [...repo.keys()].sort());
  repo.get("k10", Entry)!.set("count", 10);
  assert.deepEqual(keysOf(q.results), [
    "k0",
    "k1",
    "k2",
    "k3",
    "k4",
    "k5",
    "k6",
    "k7",
    "k8",
    "k9",
    "k10",
  ]);
  await db.close();
});

test("with no onError listener the error is reported as uncaught; a throwing listener too", async () => {
  const { db, repo } = await setup();
  let q = undefined as unknown as LiveQuery<EntryItem>;
  const cold = await captureUncaught(() => {
    q = repo.query({ schema: Entry, where: evenCount });
  });
  assert.equal(cold.length, 1, "the evaluation from scratch reports too");
  assert.match((cold[0] as Error).message, /item k3/);
  const unheard = await captureUncaught(() => {
    repo.get("k1", Entry)!.set("count", undefined);
  });
  assert.equal(unheard.length, 1);
  assert.ok(isCairnError(unheard[0], "E_QUERY_FAILED"));
  assert.match((unheard[0] as Error).message, /item k1/);
  let other = 0;
  q.onError(() => {
    throw new Error("listener");
  });
  q.onError(() => other++);
  const thrown = await captureUncaught(() => {
    repo.get("k2", Entry)!.set("count", undefined);
  });
  assert.equal(other, 1);
  assert.deepEqual(thrown.map((err) => (err as Error).message), ["listener"]);
  assert.throws(() => q.onError(1 as never), (err) => isCairnError(err, "E_BAD_ARGUMENT"));
  await db.close();
});

test("a predicate's error read through q.error before its batch ends was seen: not reported as uncaught (a comparator's still is)", async () => {
  const { db, repo } = await setup();
  let q = undefined as unknown as LiveQuery<EntryItem>;
  const read = await captureUncaught(() => {
    q = repo.query({ schema: Entry, where: evenCount });
    assert.ok(isCairnError(q.error, "E_QUERY_FAILED")); // what useQuery's render does
  });
  assert.deepEqual(read, []);
  const unread = await captureUncaught(() => {
    repo.get("k1", Entry)!.set("count", undefined);
  });
  assert.equal(unread.length, 1, "a later failure nobody read is reported");
  const sorted = await captureUncaught(() => {
    const bySort = repo.query({
      schema: Entry,
      where: evenCount,
      sortBy: () => {
        throw new Error("cannot order");
      },
      id: "unsortable",
    });
    void bySort.error;
  });
  assert.deepEqual(sorted.map((err) => (err as Error).message.includes("comparator")), [true]);
  await db.close();
});

test("a cold scan in slices treats a throwing predicate the same: ready resolves, the error is kept", async () => {
  const source = new FakeSource();
  for (let i = 0; i < 3000; i++) source.write(`k${String(i).padStart(4, "0")}`, { n: i });
  const registry = new QueryRegistry<string>(source, {
    view: (key) => key,
    convert: () => undefined,
  }, { sliceMs: 0 });
  const q = registry.query({
    where: (key) => {
      const n = source.map.get(key)!.wire!.n as number;
      if (n % 1000 === 999) throw new Error(`bad ${key}`);
      return n % 500 === 0;
    },
  });
  const heard: CairnError[] = [];
  q.onError((error) => heard.push(error));
  assert.equal(q.pending, true);
  assert.deepEqual([...await q.ready], ["k0000", "k0500", "k1000", "k1500", "k2000", "k2500"]);
  assert.equal(q.explain().mode, "sliced scan");
  assert.match(q.error!.message, /throws for item k2999 \(and 2 other items\)/);
  await tick();
  assert.ok(heard.length >= 1);
  source.write("k2999", undefined);
  source.write("k1999", undefined);
  source.write("k0999", { n: 1 });
  assert.equal(q.error, undefined);
  registry.dispose();
});
