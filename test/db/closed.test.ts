/**
 * What closing means (docs/api.md, "Closing"): once a repository is closed, its handle, the item
 * handles and live queries taken from it refuse every use with E_CLOSED — reads included — even
 * after the path is opened again; once the database is closed, so does the database. Unsubscribe
 * functions and `close()` itself keep working.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, type CairnErrorCode, defineSchema, isCairnError } from "cairndb";
import { ALL_TYPES } from "../harness/schemas.ts";

const All = defineSchema(ALL_TYPES);

function throwsCode(fn: () => unknown, code: CairnErrorCode, what: string): void {
  assert.throws(fn, (err) => {
    assert.ok(isCairnError(err, code), `${what}: expected ${code}, got ${String(err)}`);
    return true;
  }, what);
}

/** An async method must reject, never throw synchronously. */
async function rejectsCode(fn: () => unknown, code: CairnErrorCode, what: string): Promise<void> {
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    assert.fail(`${what} threw synchronously instead of rejecting: ${String(err)}`);
  }
  assert.ok(result instanceof Promise, `${what} returns a promise`);
  await assert.rejects(result, (err) => {
    assert.ok(isCairnError(err, code), `${what}: expected ${code}, got ${String(err)}`);
    return true;
  }, what);
}

async function populated() {
  const db = await Cairn.open({ schemas: [All] });
  const repo = await db.open("/data/things");
  const item = repo.create(All, { title: "one", notes: "hello" }, { key: "k1" });
  repo.create(All, { title: "two" }, { key: "k2" });
  const query = repo.query({ schema: All, sortBy: "title" });
  const untyped = repo.query();
  assert.equal(query.results.length, 2);
  return { db, repo, item, query, untyped };
}

test("after db.close() every method of the database, its repositories, items and queries is E_CLOSED", async () => {
  const { db, repo, item, query, untyped } = await populated();
  const stopRepo = repo.on("change", () => {});
  const stopItem = item.on("change", () => {});
  const stopQuery = query.subscribe(() => {});
  const keys = repo.keys();
  assert.equal(keys.next().value, "k1");
  const frames = await repo.exportBlocks();
  await db.close();

  // The repository handle.
  throwsCode(() => repo.create(All, { title: "x" }), "E_CLOSED", "repo.create");
  throwsCode(() => repo.get("k1"), "E_CLOSED", "repo.get");
  throwsCode(() => repo.get("k1", All), "E_CLOSED", "repo.get with a schema");
  throwsCode(() => repo.has("k1"), "E_CLOSED", "repo.has");
  throwsCode(() => repo.keys(), "E_CLOSED", "repo.keys");
  throwsCode(() => repo.count(), "E_CLOSED", "repo.count");
  throwsCode(() => repo.query(), "E_CLOSED", "repo.query");
  throwsCode(() => repo.createIndex("rank"), "E_CLOSED", "repo.createIndex");
  throwsCode(() => repo.on("change", () => {}), "E_CLOSED", "repo.on");
  throwsCode(() => repo.stats(), "E_CLOSED", "repo.stats");
  throwsCode(() => repo.versionVector(), "E_CLOSED", "repo.versionVector");
  throwsCode(() => repo.missingHistory(), "E_CLOSED", "repo.missingHistory");
  throwsCode(() => repo.leaves("k1"), "E_CLOSED", "repo.leaves");
  await rejectsCode(() => repo.flush(), "E_CLOSED", "repo.flush");
  await rejectsCode(() => repo.exportBlocks(), "E_CLOSED", "repo.exportBlocks");
  await rejectsCode(() => repo.importBlocks(frames), "E_CLOSED", "repo.importBlocks");
  assert.equal(repo.path, "/data/things", "its path stays readable");

  // An item handle taken before.
  throwsCode(() => item.exists, "E_CLOSED", "item.exists");
  throwsCode(() => item.get("title"), "E_CLOSED", "item.get");
  throwsCode(() => item.toObject(), "E_CLOSED", "item.toObject");
  throwsCode(() => item.set("rank", 1), "E_CLOSED", "item.set");
  throwsCode(() => item.update({ rank: 1 }), "E_CLOSED", "item.update");
  throwsCode(() => item.insertText("notes", 0, "x"), "E_CLOSED", "item.insertText");
  throwsCode(() => item.deleteText("notes", 0, 1), "E_CLOSED", "item.deleteText");
  throwsCode(() => item.replaceText("notes", 0, 1, "y"), "E_CLOSED", "item.replaceText");
  throwsCode(() => item.delete(), "E_CLOSED", "item.delete");
  throwsCode(() => item.on("change", () => {}), "E_CLOSED", "item.on");
  await rejectsCode(() => item.commit(), "E_CLOSED", "item.commit");
  assert.equal(item.key, "k1", "its key stays readable");

  // Live queries, open ones and their results.
  for (const [name, q] of [["query", query], ["untyped query", untyped]] as const) {
    assert.equal(q.closed, true, `${name} is closed with its repository`);
    throwsCode(() => q.results, "E_CLOSED", `${name}.results`);
    throwsCode(() => q.total, "E_CLOSED", `${name}.total`);
    throwsCode(() => q.subscribe(() => {}), "E_CLOSED", `${name}.subscribe`);
    throwsCode(() => q.onError(() => {}), "E_CLOSED", `${name}.onError`);
    q.close(); // closing again is a no-op
  }

  // An iteration begun before ends with E_CLOSED.
  throwsCode(() => keys.next(), "E_CLOSED", "keys().next() after close");

  // Unsubscribing still works: cleanup code often runs after close.
  stopRepo();
  stopItem();
  stopQuery();

  // The database.
  throwsCode(() => db.register(All), "E_CLOSED", "db.register");
  throwsCode(() => db.exportSecretKey(), "E_CLOSED", "db.exportSecretKey");
  await rejectsCode(() => db.open("/data/things"), "E_CLOSED", "db.open");
  await rejectsCode(() => db.flush(), "E_CLOSED", "db.flush");
  await rejectsCode(() => db.trust(db.session.publicKey), "E_CLOSED", "db.trust");
  assert.equal(typeof db.session.id, "string", "its session stays readable");
  await db.close(); // closing again resolves
  await db.close("/data/things");
});

test("db.close(path) closes that repository's handles for good; the database and others stay open", async () => {
  const db = await Cairn.open({ schemas: [All] });
  const one = await db.open("/one");
  const two = await db.open("/two");
  const item = one.create(All, { title: "a" }, { key: "a" });
  const query = one.query();
  two.create(All, { title: "b" }, { key: "b" });
  await db.close("/one");

  throwsCode(() => one.count(), "E_CLOSED", "closed repository");
  throwsCode(() => item.get("title"), "E_CLOSED", "its item");
  throwsCode(() => query.results, "E_CLOSED", "its query");
  assert.equal(two.get("b", All)?.get("title"), "b", "another repository works");
  await db.flush();

  // Opened again: a new handle. The old one, and what came from it, stay closed.
  const reopened = await db.open("/one");
  assert.notEqual(reopened, one);
  reopened.create(All, { title: "c" }, { key: "c" });
  assert.equal(reopened.has("c"), true);
  throwsCode(() => one.has("c"), "E_CLOSED", "the old handle after the path was opened again");
  throwsCode(() => item.exists, "E_CLOSED", "an old item after the path was opened again");
  await db.close();
});

test("an in-memory repository closed and opened again keeps its items, and its chain: peers take later writes", async () => {
  const db = await Cairn.open({ schemas: [All] });
  const peer = await Cairn.open({ schemas: [All], trust: [db.session.publicKey] });
  const mine = await db.open("/data/kept");
  const theirs = await peer.open("/data/kept");
  mine.create(All, { title: "before" }, { key: "a" });
  assert.deepEqual((await theirs.importBlocks(await mine.exportBlocks())).rejected, []);
  await db.close("/data/kept");

  const reopened = await db.open("/data/kept");
  assert.equal(reopened.get("a", All)?.get("title"), "before");
  reopened.create(All, { title: "after" }, { key: "b" });
  // A fresh repository sealed its blocks from seq 1 again: E_CHAIN_FORK at the peer.
  const report = await theirs.importBlocks(await reopened.exportBlocks());
  assert.deepEqual(report.rejected.map(({ error }) => error.code), []);
  assert.equal(theirs.get("b", All)?.get("title"), "after");
  await Promise.all([db.close(), peer.close()]);
});

test("open() while the path's close runs waits for it and gives a new, working handle", async () => {
  const db = await Cairn.open({ schemas: [All] });
  const repo = await db.open("/data/r");
  repo.create(All, { title: "one" }, { key: "a" });
  const closing = db.close("/data/r");
  const reopened = await db.open("/data/r");
  await closing;
  assert.notEqual(reopened, repo);
  reopened.create(All, { title: "two" }, { key: "b" }); // was E_CLOSED: the closing handle
  assert.deepEqual([...reopened.keys()].sort(), ["a", "b"]);
  await db.close();
});

test("close() refuses writes at once, and reads once it has succeeded", async () => {
  const { db, repo, item } = await populated();
  const closing = db.close("/data/things");
  // Writes are refused from the call on: what the close flushes is all there is. Reads work
  // until it has succeeded (a close that fails leaves them working: storage.md).
  assert.equal(item.get("title"), "one");
  throwsCode(() => item.set("rank", 2), "E_CLOSED", "a write while closing");
  throwsCode(() => repo.create(All, { title: "late" }), "E_CLOSED", "a create while closing");
  await closing;
  throwsCode(() => item.get("title"), "E_CLOSED", "a read once closed");
  await db.close();
});

test("the database's close refuses repositories opened while it runs", async () => {
  const db = await Cairn.open({ schemas: [All] });
  await db.open("/a");
  const closing = db.close();
  await rejectsCode(() => db.open("/b"), "E_CLOSED", "db.open during close()");
  await closing;
  await rejectsCode(() => db.open("/b"), "E_CLOSED", "db.open after close()");
});

test("db.closed: false while open and while its close runs, true once it has closed", async () => {
  const { db } = await populated();
  assert.equal(db.closed, false);
  const closing = db.close();
  assert.equal(db.closed, false, "not while the close runs");
  await closing;
  assert.equal(db.closed, true);
});
