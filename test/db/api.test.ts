/**
 * The user-facing API of databases, repositories and items: reads and writes, counts, change
 * events, typed errors for bad input, schema versions, and sessions.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, type CairnErrorCode, defineSchema, isCairnError, type ItemChange } from "cairndb";
import {
  assertClean,
  captureUncaught,
  copyBytes,
  exchange,
  openPeers,
  plain,
} from "../harness/peers.ts";
import { TASK } from "../harness/schemas.ts";

const Task = defineSchema(TASK);

async function fresh(options: { trusted?: boolean } = {}) {
  const db = await Cairn.open({ ...options, schemas: [Task] });
  return { db, repo: await db.open("/data/todos") };
}

/** Asserts that `fn` throws a CairnError with `code` (synchronously). */
function throwsCode(fn: () => unknown, code: CairnErrorCode, message?: string): void {
  assert.throws(fn, (err) => {
    assert.ok(isCairnError(err, code), `expected ${code}, got ${String(err)}`);
    return true;
  }, message);
}

async function rejectsCode(promise: Promise<unknown>, code: CairnErrorCode): Promise<void> {
  await assert.rejects(promise, (err) => {
    assert.ok(isCairnError(err, code), `expected ${code}, got ${String(err)}`);
    return true;
  });
}

// ── reading and writing ─────────────────────────────────────────────────────────────────────

test("create, get, set, update, delete, exists and toObject", async () => {
  const { db, repo } = await fresh();
  const due = new Date("2030-01-02T03:04:05.678Z");
  const item = repo.create(Task, {
    title: "write tests",
    tags: new Set(["work"]),
    meta: new Map<string, string | number | boolean | null>([["owner", "me"], ["n", 1]]),
    due,
  }, { key: "t1" });
  assert.equal(item.key, "t1");
  assert.equal(item.exists, true);
  assert.equal(item.get("title"), "write tests");
  assert.equal(item.get("done"), false, "default applied");
  assert.equal(item.get("rank"), undefined, "absent optional field");
  assert.deepEqual(item.get("due"), due);
  due.setTime(0);
  assert.equal(item.get("due")!.getTime(), Date.parse("2030-01-02T03:04:05.678Z"), "input copied");

  assert.equal(item.set("done", true), item, "set returns the item");
  assert.equal(item.get("done"), true);
  item.update({ rank: 2.5, notes: "first", likes: 3, tags: new Set(["work", "home"]) });
  item.set("meta", undefined); // unsets an optional field
  assert.deepEqual(
    plain(item.toObject()),
    plain({
      title: "write tests",
      done: true,
      tags: new Set(["home", "work"]),
      notes: "first",
      rank: 2.5,
      likes: 3,
      due: new Date("2030-01-02T03:04:05.678Z"),
    }),
  );
  assert.ok(Object.isFrozen(item.toObject()), "toObject is frozen");

  // A second handle sees the same item; handles hold no value of their own.
  const again = repo.get("t1", Task)!;
  assert.equal(again.get("rank"), 2.5);
  again.set("rank", 7);
  assert.equal(item.get("rank"), 7);

  assert.equal(repo.get("missing", Task), undefined, "get of a missing key");
  assert.equal(repo.has("missing"), false);
  assert.equal(repo.has("t1"), true);

  item.delete();
  assert.equal(item.exists, false);
  assert.equal(again.exists, false);
  assert.equal(repo.get("t1", Task), undefined);
  assert.equal(repo.has("t1"), false);
  // A deleted key can be created again.
  const reborn = repo.create(Task, { title: "again" }, { key: "t1" });
  assert.equal(reborn.get("title"), "again");
  assert.equal(reborn.get("rank"), undefined, "nothing of the deleted value comes back");
  await db.close();
});

test("a set, date or map from get() is the caller's: changing it changes no later read", async () => {
  const { db, repo } = await fresh();
  const item = repo.create(Task, {
    title: "t",
    tags: new Set(["a"]),
    meta: new Map<string, string | number | boolean | null>([["k", 1]]),
    due: new Date(1_000),
  }, { key: "mine" });
  const kept = item.toObject();
  const tags = item.get("tags") as Set<string>;
  tags.add("b");
  (item.get("meta") as Map<string, unknown>).set("k", 2);
  item.get("due")!.setTime(5);
  assert.deepEqual(item.get("tags"), new Set(["a"]));
  assert.deepEqual(item.get("meta"), new Map([["k", 1]]));
  assert.equal(item.get("due")!.getTime(), 1_000);
  assert.notEqual(item.get("tags"), item.get("tags"), "a set of its own per read");
  // toObject() keeps one frozen object per stored value, as useItem needs.
  assert.equal(item.toObject(), kept);
  assert.deepEqual(kept.tags, new Set(["a"]));
  await db.close();
});

test("create without a key generates unique keys; get without a schema uses the item's", async () => {
  const { db, repo } = await fresh();
  const keys = new Set<string>();
  for (let i = 0; i < 50; i++) keys.add(repo.create(Task, { title: `t${i}` }).key);
  assert.equal(keys.size, 50);
  const [first] = keys;
  const item = repo.get(first);
  assert.ok(item);
  assert.equal(item.schema.id, "task@1");
  assert.equal(item.get("title"), "t0");
  await db.close();
});

test("a generated key already held (an item moved in from another repository with its key) is passed over", async () => {
  const { db, repo: todos } = await fresh();
  // Every repository numbers its commits from 1, so the keys it makes are another's too.
  const [, b, c] = ["a", "b", "c"].map((title) => todos.create(Task, { title }));
  const archive = await db.open("/data/archive");
  archive.create(Task, b.toObject(), { key: b.key }); // commit 1: the next key is made from 2
  const made = archive.create(Task, { title: "new" }).key;
  assert.notEqual(made, b.key);
  assert.deepEqual(
    [archive.get(b.key, Task)!.get("title"), archive.get(made, Task)!.get("title")],
    [
      "b",
      "new",
    ],
  );
  // A deleted key is not given out again either (its history would continue).
  const bin = await db.open("/data/bin");
  bin.create(Task, c.toObject(), { key: c.key }); // commit 1
  bin.get(c.key)!.delete(); // commit 2: the next key is made from 3, as c's was
  const next = bin.create(Task, { title: "new" });
  assert.notEqual(next.key, c.key);
  assert.equal(bin.get(c.key), undefined);
  await db.close();
});

test("keys() and count() list live items only, and agree after many writes", async () => {
  const { db, repo } = await fresh();
  assert.equal(repo.count(), 0);
  assert.deepEqual([...repo.keys()], []);
  const live = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const key = `k${i % 40}`;
    if (repo.has(key)) {
      if (i % 3 === 0) {
        repo.get(key, Task)!.delete();
        live.delete(key);
      } else repo.get(key, Task)!.set("rank", i);
    } else {
      repo.create(Task, { title: key }, { key });
      live.add(key);
    }
    assert.equal(repo.count(), live.size);
  }
  assert.deepEqual([...repo.keys()].sort(), [...live].sort());
  await db.flush();
  assert.equal(repo.count(), live.size, "unchanged by sealing");
  await db.close();
});

// ── change events ───────────────────────────────────────────────────────────────────────────

test("change events fire synchronously, once per write or per imported chain, with the right source", async () => {
  const [a, b] = await openPeers(2, { schemas: [Task] });
  const seenA: ItemChange[] = [];
  const seenB: ItemChange[] = [];
  a.repo.on("change", (change) => seenA.push(change));
  b.repo.on("change", (change) => seenB.push(change));

  const item = a.repo.create(Task, { title: "x" }, { key: "k" });
  assert.deepEqual(seenA, [{ key: "k", source: "local", deleted: false }], "during create");
  item.set("done", true);
  item.update({ rank: 1, notes: "n" });
  assert.equal(seenA.length, 3, "one event per write, update included");
  a.repo.create(Task, { title: "y" }, { key: "other" });
  item.delete();
  assert.deepEqual(seenA.slice(3), [
    { key: "other", source: "local", deleted: false },
    { key: "k", source: "local", deleted: true },
  ]);

  // Failed writes fire nothing.
  throwsCode(() => item.set("done", false), "E_NOT_FOUND");
  throwsCode(() => a.repo.create(Task, { title: 3 as never }), "E_WRONG_TYPE");
  assert.equal(seenA.length, 5);

  const report = await exchange(a, b);
  assertClean(report, "a → b");
  assert.equal(report.commits, 5);
  // The block's first three commits, a chain on k, are one change (with the text changes of
  // each); then "other", then k's delete.
  const notes = [{ field: "notes", changes: [{ index: 0, deleted: 0, inserted: "n" }] }];
  assert.deepEqual(seenB, [
    { key: "k", source: "remote", deleted: false, text: notes },
    { key: "other", source: "remote", deleted: false },
    { key: "k", source: "remote", deleted: true },
  ]);
  assert.equal(seenA.length, 5, "an import elsewhere fires nothing here");

  // Importing the same blocks again changes nothing and fires nothing.
  await b.repo.importBlocks(await a.repo.exportBlocks());
  assert.equal(seenB.length, 3);
});

test("item events fire only for their key; unsubscribing stops them", async () => {
  const [a, b] = await openPeers(2, { schemas: [Task] });
  const one = a.repo.create(Task, { title: "one" }, { key: "one" });
  const two = a.repo.create(Task, { title: "two" }, { key: "two" });
  const forOne: ItemChange[] = [];
  const forTwo: ItemChange[] = [];
  const offOne = one.on("change", (change) => forOne.push(change));
  two.on("change", (change) => forTwo.push(change));
  let all = 0;
  const offAll = a.repo.on("change", () => all++);

  one.set("rank", 1);
  one.set("rank", 2);
  two.set("rank", 1);
  assert.equal(forOne.length, 2);
  assert.equal(forTwo.length, 1);
  assert.ok(forOne.every((change) => change.key === "one"));
  assert.equal(all, 3);

  // Remote changes reach item listeners too.
  await exchange(a, b);
  b.repo.get("one", Task)!.set("rank", 3);
  assertClean(await exchange(b, a), "b → a");
  assert.deepEqual(forOne.at(-1), { key: "one", source: "remote", deleted: false });
  assert.equal(forTwo.length, 1);

  offOne();
  offOne(); // a second call is harmless
  offAll();
  one.set("rank", 9);
  one.delete();
  assert.equal(forOne.length, 3, "no events after unsubscribe");
  assert.equal(all, 4);
  // A listener on another handle of the same key still gets them.
  const later: ItemChange[] = [];
  a.repo.get("two", Task)!.on("change", (change) => later.push(change));
  two.set("rank", 5);
  assert.equal(later.length, 1);
  assert.equal(forTwo.length, 2);
});

test("each on() is its own subscription; one made or ended during a change counts from the next", async () => {
  const { db, repo } = await fresh();
  const calls: string[] = [];
  const twice = () => calls.push("twice");
  const offFirst = repo.on("change", twice);
  repo.on("change", twice);
  let offLate: (() => void) | undefined;
  const offAdder = repo.on("change", () => {
    calls.push("adder");
    offLate ??= repo.on("change", () => calls.push("late"));
  });
  repo.create(Task, { title: "a" }, { key: "a" });
  assert.deepEqual(calls, ["twice", "twice", "adder"], "added during the change: not called yet");
  calls.length = 0;
  offFirst();
  offFirst(); // a second call ends nothing more
  repo.get("a", Task)!.set("rank", 1);
  assert.deepEqual(calls, ["twice", "adder", "late"], "one of the two subscriptions left");
  calls.length = 0;
  offAdder();
  const offSelf: () => void = repo.on("change", () => {
    calls.push("self");
    offSelf();
  });
  offLate!();
  repo.get("a", Task)!.set("rank", 2);
  repo.get("a", Task)!.set("rank", 3);
  assert.deepEqual(calls, ["twice", "self", "twice"], "a listener ending itself hears its change");
  const item = repo.get("a", Task)!;
  let heard = 0;
  const hear = () => heard++;
  const offItem = item.on("change", hear);
  item.on("change", hear);
  item.set("rank", 4);
  offItem();
  item.set("rank", 5);
  assert.equal(heard, 3, "an item's listeners: the same, per subscription");
  await db.close();
});

test("a throwing listener neither stops the others nor undoes the write", async () => {
  const { db, repo } = await fresh();
  const boom = new Error("listener failure");
  const calls: string[] = [];
  repo.on("change", () => calls.push("first"));
  repo.on("change", () => {
    calls.push("thrower");
    throw boom;
  });
  repo.on("change", () => calls.push("last"));
  const uncaught = await captureUncaught(() => {
    const item = repo.create(Task, { title: "kept" }, { key: "k" });
    item.on("change", () => {
      calls.push("item thrower");
      throw boom;
    });
    item.on("change", () => calls.push("item last"));
    item.set("rank", 1);
  });
  assert.deepEqual(calls, [
    "first",
    "thrower",
    "last",
    "first",
    "thrower",
    "last",
    "item thrower",
    "item last",
  ]);
  assert.equal(repo.get("k", Task)?.get("title"), "kept");
  assert.equal(repo.get("k", Task)?.get("rank"), 1);
  // The listener's error is not swallowed: it surfaces asynchronously.
  assert.ok(uncaught.length >= 1 && uncaught.every((err) => err === boom));
  // And the writes were sealed and can be exported.
  assert.equal((await repo.exportBlocks()).length, 1);
  await db.close();
});

test("on() with an unknown event name is a typed error", async () => {
  const { db, repo } = await fresh();
  const item = repo.create(Task, { title: "x" });
  throwsCode(() => repo.on("nope" as "change", () => {}), "E_BAD_ARGUMENT");
  throwsCode(() => item.on("nope" as "change", () => {}), "E_BAD_ARGUMENT");
  await db.close();
});

// ── bad input ───────────────────────────────────────────────────────────────────────────────

test("bad writes are typed errors and change nothing", async () => {
  const { db, repo } = await fresh();
  const item = repo.create(Task, { title: "t", rank: 1 }, { key: "k" });
  const before = plain(item.toObject());
  let events = 0;
  repo.on("change", () => events++);

  // Unknown field.
  throwsCode(() => repo.create(Task, { title: "t", nope: 1 } as never), "E_UNKNOWN_FIELD");
  throwsCode(() => item.set("nope" as "title", "x"), "E_UNKNOWN_FIELD");
  throwsCode(() => item.update({ rank: 5, nope: 1 } as never), "E_UNKNOWN_FIELD");
  throwsCode(() => item.get("nope" as "title"), "E_UNKNOWN_FIELD");
  // Wrong type, for every field type.
  const wrong: Record<string, unknown> = {
    title: 1,
    done: "yes",
    tags: ["a"],
    notes: 3,
    rank: Number.NaN,
    meta: { a: 1 },
    likes: "1",
    due: new Date(Number.NaN),
  };
  for (const [field, value] of Object.entries(wrong)) {
    throwsCode(() => item.set(field as "title", value as string), "E_WRONG_TYPE", field);
    throwsCode(
      () => repo.create(Task, { title: "t", [field]: value } as never),
      "E_WRONG_TYPE",
      field,
    );
  }
  throwsCode(() => item.set("tags", new Set([1]) as never), "E_WRONG_TYPE");
  throwsCode(() => item.set("meta", new Map([["k", {}]]) as never), "E_WRONG_TYPE");
  // Missing required field.
  throwsCode(() => repo.create(Task, {} as never), "E_REQUIRED_FIELD");
  throwsCode(() => item.set("title", undefined as never), "E_REQUIRED_FIELD");
  // Create over a live key.
  throwsCode(() => repo.create(Task, { title: "dup" }, { key: "k" }), "E_KEY_EXISTS");
  // Bad keys.
  throwsCode(() => repo.create(Task, { title: "t" }, { key: "" }), "E_BAD_ARGUMENT");
  throwsCode(() => repo.create(Task, { title: "t" }, { key: 5 as never }), "E_BAD_ARGUMENT");

  assert.deepEqual(plain(item.toObject()), before, "the item is unchanged");
  assert.equal(repo.count(), 1);
  assert.equal(events, 0, "no event for a refused write");
  assert.equal(repo.leaves("k").length, 1);
  await db.close();
});

test("a deleted item: reads and writes are E_NOT_FOUND, get() is undefined", async () => {
  const { db, repo } = await fresh();
  const item = repo.create(Task, { title: "t" }, { key: "k" });
  item.delete();
  assert.equal(repo.get("k"), undefined);
  throwsCode(() => item.set("done", true), "E_NOT_FOUND");
  throwsCode(() => item.update({ done: true }), "E_NOT_FOUND");
  throwsCode(() => item.delete(), "E_NOT_FOUND");
  throwsCode(() => item.get("title"), "E_NOT_FOUND");
  throwsCode(() => item.toObject(), "E_NOT_FOUND");
  assert.equal(repo.count(), 0);
  await db.close();
});

test("a bad repository path is E_BAD_PATH, reported through the returned promise", async () => {
  const db = await Cairn.open();
  for (const path of ["", "data", "/", "/data/", "//x", "/a b", "/.hidden", 42]) {
    let result: Promise<unknown> | undefined;
    try {
      result = db.open(path as string);
    } catch (err) {
      assert.fail(`open(${JSON.stringify(path)}) threw synchronously instead of rejecting: ${err}`);
    }
    await rejectsCode(result!, "E_BAD_PATH");
  }
  // Good paths open, and opening twice gives the same repository.
  const r1 = await db.open("/data/todos");
  const r2 = await db.open("/data/todos");
  r1.create(Task, { title: "x" }, { key: "k" });
  assert.equal(r2.has("k"), true);
  await db.close();
});

test("use after close is E_CLOSED, reads included (every method: closed.test.ts)", async () => {
  const { db, repo } = await fresh();
  const item = repo.create(Task, { title: "t" }, { key: "k" });
  const frames = await repo.exportBlocks();
  await db.close();
  throwsCode(() => repo.create(Task, { title: "u" }), "E_CLOSED");
  throwsCode(() => item.set("done", true), "E_CLOSED");
  throwsCode(() => item.delete(), "E_CLOSED");
  await rejectsCode(repo.importBlocks(frames), "E_CLOSED");
  await rejectsCode(Promise.resolve().then(() => db.open("/data/todos")), "E_CLOSED");
  throwsCode(() => repo.get("k", Task), "E_CLOSED");
  throwsCode(() => repo.count(), "E_CLOSED");
  throwsCode(() => item.get("title"), "E_CLOSED");

  // Closing one repository leaves the database and its other repositories open.
  const other = await Cairn.open();
  const one = await other.open("/one");
  const two = await other.open("/two");
  await other.close("/one");
  throwsCode(() => one.create(Task, { title: "x" }), "E_CLOSED");
  two.create(Task, { title: "x" }, { key: "x" });
  assert.equal(two.count(), 1);
  const reopened = await other.open("/one");
  reopened.create(Task, { title: "y" });
  await other.close();
});

test("malformed frames are rejected entries with E_CORRUPT_ENCODING, never a throw", async () => {
  const [a, b] = await openPeers(2, { schemas: [Task] });
  a.repo.create(Task, { title: "a genuine block" }, { key: "k" });
  const [genuine] = await a.repo.exportBlocks();
  const malformed: Uint8Array[] = [
    new Uint8Array(0),
    new Uint8Array([0xc1]), // never used in MessagePack
    new Uint8Array([0x92, 0x01, 0x02]), // [1, 2]
    new Uint8Array([0x90]), // []
    new Uint8Array([0xa3, 0x61, 0x62, 0x63]), // "abc"
    copyBytes(genuine).subarray(0, genuine.length - 1),
    copyBytes(genuine).subarray(0, 10),
    copyBytes(genuine).subarray(1),
    Uint8Array.from({ length: 300 }, (_, i) => (i * 7919) & 0xff),
  ];
  // Every truncation of a genuine frame, too.
  for (let n = 0; n < genuine.length; n += 7) malformed.push(copyBytes(genuine).subarray(0, n));
  const report = await b.repo.importBlocks(malformed);
  assert.equal(report.applied, 0);
  assert.equal(report.rejected.length, malformed.length);
  report.rejected.forEach((rejection, i) => {
    assert.equal(rejection.index, i);
    assert.ok(
      isCairnError(rejection.error, "E_CORRUPT_ENCODING"),
      `frame ${i}: ${rejection.error?.code} ${rejection.error?.message}`,
    );
  });
  // Not even bytes: still a rejected entry, not a throw.
  const odd = await b.repo.importBlocks([null, "frame", 42, {}] as unknown as Uint8Array[]);
  assert.equal(odd.rejected.length, 4);
  assert.ok(odd.rejected.every((r) => isCairnError(r.error, "E_CORRUPT_ENCODING")));
  assert.equal(b.repo.count(), 0);
  // The genuine frame still applies afterwards.
  assertClean(await b.repo.importBlocks([genuine]), "genuine");
  assert.equal(b.repo.count(), 1);
});

test("frames returned by exportBlocks are the caller's: changing one changes no later export", async () => {
  const [a, b] = await openPeers(2, { schemas: [Task] });
  a.repo.create(Task, { title: "original" }, { key: "k" });
  const [first] = await a.repo.exportBlocks();
  const pristine = copyBytes(first);
  first.fill(0); // e.g. a transport that encrypts or zeroes its buffers in place
  const [second] = await a.repo.exportBlocks();
  assert.ok(
    second.length === pristine.length && second.every((byte, i) => byte === pristine[i]),
    "a later export is not affected by changes to an earlier one's bytes",
  );
  assertClean(await b.repo.importBlocks([second]), "a → b");
  assert.equal(b.repo.get("k", Task)?.get("title"), "original");
});

// ── schema versions ─────────────────────────────────────────────────────────────────────────

test("an item written under v1 reads through a v2 handle, upgraded lazily", async () => {
  const NoteV1 = defineSchema({
    ns: "note",
    version: 1,
    fields: { text: { type: "string", required: true }, done: { type: "boolean" } },
  });
  let upgrades = 0;
  const NoteV2 = defineSchema({
    ns: "note",
    version: 2,
    fields: {
      text: { type: "string", required: true },
      status: { type: "string", required: true },
      words: { type: "number" },
    },
    upgrade: (old) => {
      upgrades++;
      const { done, ...rest } = old;
      return { ...rest, status: done ? "done" : "open", words: String(old.text).split(" ").length };
    },
  });
  const writer = await Cairn.open({ schemas: [NoteV1] });
  const reader = await Cairn.open({ schemas: [NoteV1, NoteV2], trust: [writer.session.publicKey] });
  const w = await writer.open("/notes");
  const r = await reader.open("/notes");
  w.create(NoteV1, { text: "buy some milk", done: true }, { key: "n1" });
  w.create(NoteV1, { text: "call", done: false }, { key: "n2" });
  assertClean(await r.importBlocks(await w.exportBlocks()), "writer → reader");
  assert.equal(upgrades, 0, "nothing upgraded on import");

  const v2 = r.get("n1", NoteV2)!;
  assert.deepEqual(
    plain(v2.toObject()),
    plain({ text: "buy some milk", status: "done", words: 3 }),
  );
  assert.equal(upgrades, 1, "upgraded on first read");
  v2.toObject();
  v2.get("status");
  assert.equal(upgrades, 1, "and only once while the value is unchanged");
  // Without a schema, get() uses the newest registered version of the namespace.
  assert.equal(r.get("n2")!.schema.id, "note@2");
  assert.equal(r.get("n2")!.get("status" as never), "open");
  // The v1 view still reads the stored value as it is.
  assert.equal(r.get("n1", NoteV1)!.get("done"), true);
  // Each version's toObject() is the same object until the item changes, whatever other
  // versions read it meanwhile (useItem's snapshot relies on it).
  const asV1 = r.get("n1", NoteV1)!.toObject();
  const asV2 = v2.toObject();
  const upgradesSoFar = upgrades;
  assert.equal(r.get("n1", NoteV1)!.toObject(), asV1);
  assert.equal(v2.toObject(), asV2);
  assert.equal(upgrades, upgradesSoFar, "not upgraded again after a v1 read");

  // Writing through v2 stores a v2 value; a v1 view can no longer read it.
  v2.set("words", 10);
  assert.deepEqual(
    plain(r.get("n1", NoteV2)!.toObject()),
    plain({
      text: "buy some milk",
      status: "done",
      words: 10,
    }),
  );
  throwsCode(() => r.get("n1", NoteV1)!.toObject(), "E_UPGRADE_FAILED");
  await writer.close();
  await reader.close();
});

// ── sessions ────────────────────────────────────────────────────────────────────────────────

test("re-opening with secretKey acts as the same session", async () => {
  const first = await Cairn.open();
  const secret = first.exportSecretKey();
  assert.equal(secret.length, 32);
  secret.fill(0);
  assert.notDeepEqual(first.exportSecretKey(), secret, "exportSecretKey returns a copy");

  const again = await Cairn.open({ secretKey: first.exportSecretKey() });
  assert.equal(again.session.id, first.session.id);
  assert.equal(again.session.publicKey, first.session.publicKey);
  const other = await Cairn.open();
  assert.notEqual(other.session.id, first.session.id);

  // A peer that trusts the first database accepts blocks the re-opened one signs.
  const peer = await Cairn.open({ trust: [first.session.publicKey] });
  const source = await again.open("/data/todos");
  source.create(Task, { title: "signed by the same key" }, { key: "k" });
  const target = await peer.open("/data/todos");
  assertClean(await target.importBlocks(await source.exportBlocks()), "again → peer");
  assert.equal(target.get("k", Task)?.get("title"), "signed by the same key");

  await rejectsCode(Cairn.open({ secretKey: new Uint8Array(5) }), "E_BAD_KEY");
  await assert.rejects(() => first.trust("not a key"), (err) => isCairnError(err, "E_BAD_KEY"));
});

test("a session re-opened on a new device pulls its own history and keeps writing", async () => {
  const laptop = await Cairn.open({ schemas: [Task] });
  const server = await Cairn.open({ schemas: [Task], trust: [laptop.session.publicKey] });
  const l = await laptop.open("/data/todos");
  const s = await server.open("/data/todos");
  l.create(Task, { title: "from the laptop" }, { key: "a" });
  assertClean(await s.importBlocks(await l.exportBlocks()), "laptop → server");

  // The same session on a new device: it first pulls what it wrote before.
  const phone = await Cairn.open({ schemas: [Task], secretKey: laptop.exportSecretKey() });
  const p = await phone.open("/data/todos");
  assertClean(await p.importBlocks(await s.exportBlocks()), "server → phone");
  assert.equal(p.get("a", Task)?.get("title"), "from the laptop");

  // Its next write must not reuse a commit id of its earlier history...
  p.create(Task, { title: "from the phone" }, { key: "b" });
  assert.equal(p.get("a", Task)?.get("title"), "from the laptop");
  assert.notDeepEqual(p.leaves("b"), p.leaves("a"), "distinct commit ids");
  // ...so the server takes the phone's block as the next one of the session's chain.
  assertClean(await s.importBlocks(await p.exportBlocks(s.versionVector())), "phone → server");
  assert.equal(s.get("b", Task)?.get("title"), "from the phone");
  assert.equal(s.count(), 2);
});

test("trusted mode writes and reads like signed mode", async () => {
  const { db, repo } = await fresh({ trusted: true });
  assert.equal(db.trusted, true);
  const item = repo.create(Task, { title: "t", likes: 1 }, { key: "k" });
  item.set("likes", 2);
  const other = await Cairn.open({ trusted: true, schemas: [Task] });
  const target = await other.open("/data/todos");
  assertClean(await target.importBlocks(await repo.exportBlocks()), "trusted → trusted");
  assert.equal(target.get("k", Task)?.get("likes"), 2);
  await db.close();
  await other.close();
});
