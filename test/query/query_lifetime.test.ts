/**
 * How long live queries stay open: a plain `repo.query()` keeps its query until closed; one made
 * `{ whileHeld: true }` (what `useQuery` asks for) closes within a second once nothing holds it,
 * unless a plain call returned it too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema, isCairnError } from "cairndb";
import { QueryRegistry } from "../../src/query/registry.ts";
import { FakeSource } from "./fake_source.ts";

const Task = defineSchema({
  ns: "lifetime-task",
  version: 1,
  fields: { title: { type: "string", required: true } },
});

/** Longer than the release grace (src/query/holds.ts), whose timer was set first. */
const afterGrace = () => new Promise((resolve) => setTimeout(resolve, 1_100));

async function opened() {
  const db = await Cairn.open({ trusted: true, schemas: [Task] });
  const repo = await db.open("/data/tasks");
  repo.create(Task, { title: "a" });
  return { db, repo };
}

test("a query made while held closes once its last holder lets go, not before", async () => {
  const { db, repo } = await opened();
  try {
    const query = repo.query({ schema: Task }, { whileHeld: true });
    const first = query.hold();
    const second = query.hold();
    first();
    first(); // a release counts once
    await afterGrace();
    assert.equal(query.closed, false, "one holder still holds it");
    assert.equal(repo.query({ schema: Task }, { whileHeld: true }), query, "still pooled");
    second();
    repo.create(Task, { title: "b" });
    assert.equal(query.results.length, 2, "updated during the grace");
    await afterGrace();
    assert.equal(query.closed, true);
    assert.notEqual(repo.query({ schema: Task }, { whileHeld: true }), query, "left the pool");
  } finally {
    await db.close();
  }
});

test("a query made while held that nothing ever holds closes (a render thrown away)", async () => {
  const { db, repo } = await opened();
  try {
    const made = ["a", "ab", "abc"].map((prefix) =>
      repo.query({ schema: Task, where: { title: { prefix } } }, { whileHeld: true })
    );
    await afterGrace();
    assert.deepEqual(made.map((query) => query.closed), [true, true, true]);
  } finally {
    await db.close();
  }
});

test("a plain call keeps a query made while held, before or after, whatever the holders do", async () => {
  const { db, repo } = await opened();
  try {
    const held = repo.query({ schema: Task }, { whileHeld: true });
    assert.equal(repo.query({ schema: Task }), held);
    held.hold()();
    const kept = repo.query({ schema: Task, sortBy: "title" });
    const release = repo.query({ schema: Task, sortBy: "title" }, { whileHeld: true }).hold();
    release();
    await afterGrace();
    assert.equal(held.closed, false);
    assert.equal(kept.closed, false);
    assert.equal(repo.query({}).closed, false, "plain queries are kept as ever");
  } finally {
    await db.close();
  }
});

test("holding a closed query does nothing; closing the repository closes an unheld query at once", async () => {
  const { db, repo } = await opened();
  const query = repo.query({ schema: Task }, { whileHeld: true });
  query.close();
  const release = query.hold();
  release();
  assert.equal(query.closed, true);
  const waiting = repo.query({ schema: Task }, { whileHeld: true });
  await db.close();
  assert.equal(waiting.closed, true);
});

test("a query lifetime other than { whileHeld?: boolean } is E_BAD_ARGUMENT", async () => {
  const { db, repo } = await opened();
  try {
    for (const lifetime of [null, 1, { whileHeld: "yes" }, { held: true }]) {
      assert.throws(
        () => repo.query({ schema: Task }, lifetime as never),
        (error) => isCairnError(error) && error.code === "E_BAD_ARGUMENT",
        String(JSON.stringify(lifetime)),
      );
    }
  } finally {
    await db.close();
  }
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("each query unheld gets its own grace: one made while another's runs out is not closed with it", async () => {
  const { db, repo } = await opened();
  try {
    const first = repo.query({ schema: Task }, { whileHeld: true });
    await wait(700);
    const second = repo.query({ schema: Task, sortBy: "title" }, { whileHeld: true });
    await wait(500); // past the first's grace, within the second's
    assert.equal(first.closed, true);
    assert.equal(second.closed, false);
    const release = second.hold();
    await afterGrace();
    assert.equal(second.closed, false, "held once its render committed");
    release();
  } finally {
    await db.close();
  }
});

test("a query still scanning in slices is not closed unheld (a component suspended on ready holds nothing); once done, it is", async () => {
  const source = new FakeSource();
  for (let i = 0; i < 600; i++) source.write(`k${i}`, { n: i });
  const registry = new QueryRegistry<string>(source, {
    view: (key) => key,
    convert: () => undefined,
  }, { sliceMs: 0 });
  const slow = (key: string) => {
    const until = Date.now() + 3; // some 1.8 s of work in all, in slices, past the grace
    while (Date.now() < until) { /* a costly predicate */ }
    return key.endsWith("7");
  };
  const query = registry.query({ where: slow, id: "slow" }, true);
  assert.equal(query.pending, true);
  const results = await query.ready;
  assert.equal(query.closed, false, "not closed during its scan");
  assert.equal(results.length, 60, "the whole scan's results");
  await afterGrace();
  assert.equal(query.closed, true, "unheld after its scan: closed");
  registry.dispose();
});
