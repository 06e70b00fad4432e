import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema, isCairnError, type RepositoryHandle } from "cairndb";
import { TITLE_TAGS_BODY } from "../harness/schemas.ts";

const Note = defineSchema(TITLE_TAGS_BODY);

/** Peers that all trust each other. */
async function peers(count: number): Promise<{ dbs: Cairn[]; repos: RepositoryHandle[] }> {
  const dbs: Cairn[] = [];
  for (let i = 0; i < count; i++) dbs.push(await Cairn.open());
  for (const db of dbs) {
    for (const other of dbs) if (other !== db) await db.trust(other.session.publicKey);
  }
  return { dbs, repos: await Promise.all(dbs.map((db) => db.open("/notes"))) };
}

async function exchange(from: RepositoryHandle, to: RepositoryHandle): Promise<void> {
  const report = await to.importBlocks(await from.exportBlocks(to.versionVector()));
  assert.equal(report.rejected.length, 0, report.rejected.map((r) => r.error.message).join("; "));
}

test("a peer that imports concurrent versions before knowing their schema converges once it registers it", async () => {
  const { dbs, repos: [alice, bob, carol] } = await peers(3);
  const note = alice.create(Note, { title: "t", body: "hello world", tags: new Set(["a"]) });
  await exchange(alice, bob);
  bob.get(note.key, Note)!.update({ body: "hello brave world", tags: new Set(["a", "b"]) });
  note.update({ body: "hello world!", tags: new Set(["a", "c"]) });

  // Carol holds both branches but no schema: she cannot merge, and says so rather than guess.
  await exchange(alice, carol);
  await exchange(bob, carol);
  assert.equal(carol.leaves(note.key).length, 2);
  assert.throws(
    () => carol.get(note.key)!.toObject(),
    (err) => isCairnError(err, "E_UNKNOWN_SCHEMA"),
  );

  const changes: string[] = [];
  carol.on("change", (change) => changes.push(change.key));
  dbs[2].register(Note);
  assert.deepEqual(changes, [note.key], "registering the schema re-merges the waiting item");

  await exchange(bob, alice);
  await exchange(alice, bob);
  const expected = { title: "t", body: "hello brave world!", tags: new Set(["a", "b", "c"]) };
  for (const repo of [alice, bob, carol]) {
    assert.deepEqual(repo.get(note.key, Note)!.toObject(), expected);
  }
});

test("an item that still waits after a registration reads as it would with the schema known from the start", async () => {
  const Other = defineSchema({ ns: "other", version: 1, fields: { size: { type: "number" } } });
  const { dbs, repos: [alice, bob, late, early] } = await peers(4);
  dbs[1].register(Other);
  dbs[3].register(Note);
  // Two first versions of one key: bob's under a schema nobody else knows, then alice's newer
  // one, whose text field was created empty (its edits are an empty list).
  bob.create(Other, { size: 3 }, { key: "k" });
  await new Promise((resolve) => setTimeout(resolve, 2));
  alice.create(Note, { title: "t", body: "" }, { key: "k" });
  for (const repo of [late, early]) {
    await exchange(alice, repo);
    await exchange(bob, repo);
  }
  assert.equal(late.leaves("k").length, 2);

  // Other is still unknown, so the item cannot merge and waits; its newest leaf's value stands,
  // read under Note now that it is known, with its text showing as text.
  dbs[2].register(Note);
  const expected = { title: "t", body: "", tags: undefined };
  assert.deepEqual({ tags: undefined, ...early.get("k", Note)!.toObject() }, expected);
  assert.deepEqual({ tags: undefined, ...late.get("k", Note)!.toObject() }, expected);
});

test("a text created empty merges as text when its schema is registered after the import", async () => {
  const { dbs, repos: [alice, bob, carol] } = await peers(3);
  dbs[0].register(Note);
  dbs[1].register(Note);
  alice.create(Note, { title: "t", body: "" }, { key: "k" });
  await exchange(alice, bob);
  alice.get("k", Note)!.set("title", "by alice");
  bob.get("k", Note)!.set("tags", new Set(["by bob"]));
  await exchange(alice, bob);
  await exchange(bob, alice);
  await exchange(alice, carol);
  await exchange(bob, carol);

  dbs[2].register(Note);
  const expected = { title: "by alice", body: "", tags: new Set(["by bob"]) };
  for (const repo of [alice, bob, carol]) {
    assert.deepEqual(repo.get("k", Note)!.toObject(), expected);
  }
});

test("reading with an explicit schema registers it, so the merge uses it", async () => {
  const { repos: [alice, bob] } = await peers(2);
  const note = alice.create(Note, { title: "t", tags: new Set(["x"]) });
  await exchange(alice, bob);
  const bobNote = bob.get(note.key, Note)!;
  bobNote.set("tags", new Set(["x", "y"]));
  note.set("tags", new Set(["z"]));
  await exchange(alice, bob);
  assert.deepEqual(bobNote.get("tags"), new Set(["y", "z"]), "x removed by alice, y and z added");
});

test("a query without a schema shows its items through a newer version once it is registered", async () => {
  const V1 = defineSchema({ ns: "dated", version: 1, fields: { title: { type: "string" } } });
  const V2 = defineSchema({
    ns: "dated",
    version: 2,
    from: V1,
    fields: { title: { type: "string" }, due: { type: "date" } },
  });
  const db = await Cairn.open({ trusted: true, schemas: [V1] });
  const repo = await db.open("/data/dated");
  repo.create(V1, { title: "a" }, { key: "k1" });
  const live = repo.query({ sortBy: "title" });
  // A predicate over the newest version: reads a field only v2 has.
  const undated = repo.query({ where: (item) => item.get("due" as never) === undefined, id: "u" });
  const failures: unknown[] = [];
  undated.onError((error) => failures.push(error));
  assert.deepEqual(live.results.map((item) => item.schema.id), ["dated@1"]);
  assert.equal(undated.results.length, 0, "v1 has no field due: the predicate throws, no match");
  assert.equal(undated.error?.code, "E_QUERY_FAILED");
  let heard = 0;
  live.subscribe(() => heard++);

  db.register(V2);
  repo.create(V2, { title: "b" }, { key: "k2" });
  await Promise.resolve();
  assert.deepEqual(live.results.map((item) => item.schema.id), ["dated@2", "dated@2"]);
  assert.equal(live.results[0].get("due" as never), undefined); // threw E_UNKNOWN_FIELD
  assert.deepEqual(undated.results.map((item) => item.key).sort(), ["k1", "k2"]);
  assert.equal(undated.error, undefined);
  assert.ok(heard > 0);
  await db.close();
});

test("registering a schema announces the items whose value it changes, and only those", async () => {
  const { dbs: [alice, bob], repos: [from, to] } = await peers(2);
  from.create(Note, { title: "tagged", tags: new Set(["a", "b"]) }, { key: "tagged" });
  from.create(Note, { title: "no tags yet", tags: new Set() }, { key: "empty" });
  from.create(Note, { title: "plain" }, { key: "plain" });
  from.create(Note, { title: "with text", body: "hello" }, { key: "text" });
  from.create(Note, { title: "text created empty", body: "" }, { key: "blank" });
  await exchange(from, to);
  const changes: string[] = [];
  to.on("change", (change) => changes.push(change.key));
  bob.register(Note);
  // Without the schema, a text field holds its edits: once it is known, it holds the text.
  assert.deepEqual(changes.sort(), ["blank", "text"]);
  for (const key of ["tagged", "empty", "plain", "text", "blank"]) {
    assert.deepEqual(to.get(key, Note)!.toObject(), from.get(key, Note)!.toObject(), key);
  }
  await alice.close();
  await bob.close();
});

test('repo.on("schemas") hears the ids each registration adds, nothing for one that adds none; not after unsubscribing or closing', async () => {
  const db = await Cairn.open();
  const notes = await db.open("/notes");
  const heard: string[][] = [];
  const stop = notes.on("schemas", (ids) => heard.push([...ids]));
  const NoteV2 = defineSchema({ ...TITLE_TAGS_BODY, version: 2, upgrade: (old) => old });
  db.register(Note);
  db.register(Note); // already registered: adds nothing
  db.register(NoteV2);
  assert.deepEqual(heard, [[Note.id], [NoteV2.id]]);
  stop();
  const NoteV3 = defineSchema({ ...TITLE_TAGS_BODY, version: 3, upgrade: (old) => old });
  db.register(NoteV3);
  assert.equal(heard.length, 2);
  notes.on("schemas", () => heard.push(["after close"]));
  await db.close("/notes");
  db.register(defineSchema({ ...TITLE_TAGS_BODY, version: 4, upgrade: (old) => old }));
  assert.equal(heard.length, 2, "a closed repository hears nothing");
  assert.throws(() => notes.on("schemas", () => {}), (err) => isCairnError(err, "E_CLOSED"));
  await db.close();
});
