import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "cairndb";
import { recordSpans } from "../harness/log_records.ts";
import { TITLE_TAGS_BODY } from "../harness/schemas.ts";

const Note = defineSchema(TITLE_TAGS_BODY);

function uniquePath(): string {
  return `cairn-test/db-${crypto.randomUUID()}`;
}

async function removeDirectory(path: string): Promise<void> {
  const root = await navigator.storage.getDirectory();
  const [first] = path.split("/");
  await root.removeEntry(first, { recursive: true }).catch(() => {});
}

for (const format of ["binary", "jsonl"] as const) {
  test(`${format}: a database in OPFS survives close and reopen in the same page`, async () => {
    const path = uniquePath();
    try {
      const db = await Cairn.open({ path, format, durability: "durable" });
      const notes = await db.open("/notes");
      for (let i = 0; i < 200; i++) {
        const note = notes.create(Note, { title: `Note ${i}`, tags: new Set([`t${i % 3}`]) }, {
          key: `n${i}`,
        });
        if (i % 4 === 0) note.set("body", `body ${i}`);
        if (i % 10 === 0) note.delete();
      }
      await notes.flush();
      const expected = [...notes.keys()].sort().map((key) => notes.get(key, Note)!.toObject());
      const tagged = async (repo: typeof notes) => {
        const query = repo.query({ schema: Note, where: { tags: { has: "t1" } }, sortBy: "title" });
        await query.ready; // a browser page may scan in slices
        const keys = query.results.map((note) => note.key);
        query.close();
        return keys;
      };
      const expectedTagged = await tagged(notes);
      const session = db.session.id;
      await db.close();

      const again = await Cairn.open({ path });
      const reopened = await again.open("/notes");
      // Opened from its checkpoint: the query is the first to read (and decode) the values.
      assert.deepEqual(await tagged(reopened), expectedTagged);
      assert.equal(again.session.id, session);
      assert.deepEqual(
        [...reopened.keys()].sort().map((key) => reopened.get(key, Note)!.toObject()),
        expected,
      );
      assert.deepEqual(reopened.stats(), { damaged: [], tornTailBytes: 0, unloadable: [] });
      await again.close();
    } finally {
      await removeDirectory(path);
    }
  });
}

test("an index made with createIndex survives close and reopen of an OPFS database", async () => {
  const path = uniquePath();
  try {
    const db = await Cairn.open({ path, schemas: [Note] });
    const notes = await db.open("/notes");
    for (let i = 0; i < 100; i++) {
      notes.create(Note, { title: `Note ${i}`, tags: new Set([`t${i % 5}`]) }, { key: `n${i}` });
    }
    notes.createIndex("tags");
    await db.close();

    const again = await Cairn.open({ path, schemas: [Note] });
    const reopened = await again.open("/notes");
    const q = reopened.query({ schema: Note, where: { tags: { has: "t3" } } });
    assert.equal(q.explain().index, "tags");
    assert.equal(q.results.length, 20);
    await again.close();
  } finally {
    await removeDirectory(path);
  }
});

async function until(condition: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("two databases on one OPFS directory share it as two tabs: the second follows, then takes over", async () => {
  const path = uniquePath();
  try {
    const first = await Cairn.open({ path });
    const firstNotes = await first.open("/notes");
    firstNotes.create(Note, { title: "first" }, { key: "a" });
    await firstNotes.flush();

    const second = await Cairn.open({ path });
    assert.notEqual(second.session.id, first.session.id, "each tab signs with a key of its own");
    const secondNotes = await second.open("/notes");
    assert.equal(secondNotes.get("a", Note)?.get("title"), "first", "loaded from the leader");
    secondNotes.create(Note, { title: "second" }, { key: "b" });
    await secondNotes.flush(); // acknowledged: the first has persisted it
    await until(() => firstNotes.get("b") !== undefined, "the first to see the second's note");
    firstNotes.create(Note, { title: "first again" }, { key: "c" });
    await until(() => secondNotes.get("c") !== undefined, "the second to see the first's note");

    await first.close();
    // The second takes the lead: its next write is acknowledged once it persisted it itself.
    secondNotes.create(Note, { title: "after" }, { key: "d" });
    await secondNotes.flush();
    await second.close();

    const again = await Cairn.open({ path });
    const notes = await again.open("/notes");
    assert.deepEqual([...notes.keys()].sort(), ["a", "b", "c", "d"]);
    assert.equal(again.session.id, first.session.id, "a lone tab signs as the stored session");
    await again.close();
  } finally {
    await removeDirectory(path);
  }
});

test('one OPFS directory spelled two ways ("x/y", "/x/y/") is one database: the second tab follows the first', async () => {
  const path = uniquePath();
  try {
    const first = await Cairn.open({ path });
    (await first.open("/notes")).create(Note, { title: "first" }, { key: "a" });
    const second = await Cairn.open({ path: `/${path}/` });
    const notes = await second.open("/notes");
    assert.equal(notes.get("a", Note)?.get("title"), "first", "loaded from the leader");
    assert.notEqual(second.session.id, first.session.id, "a key of its own from the pool");
    await second.close();
    await first.close();
  } finally {
    await removeDirectory(path);
  }
});

test("OPFS: a damaged log record costs only what depends on it; a peer repairs it and the log is written anew", async () => {
  const path = uniquePath();
  const logFile = async () => {
    let directory = await navigator.storage.getDirectory();
    for (const part of path.split("/")) directory = await directory.getDirectoryHandle(part);
    return await directory.getFileHandle("notes.log");
  };
  try {
    const db = await Cairn.open({ path });
    const notes = await db.open("/notes");
    for (let round = 0; round < 6; round++) {
      notes.create(Note, { title: `Note ${round}` }, { key: `n${round}` });
      if (round > 0) notes.get(`n${round - 1}`, Note)!.set("title", `edited ${round}`);
      await notes.flush(); // one block per round
    }
    const peer = await Cairn.open({ trust: [db.session.publicKey] });
    const peerNotes = await peer.open("/notes");
    await peerNotes.importBlocks(await notes.exportBlocks());
    const final = [...notes.keys()].sort().map((key) => notes.get(key, Note)!.toObject());
    await db.close();

    // Round 3's record: creates n3, edits n2. Every other item keeps its last value.
    const handle = await logFile();
    const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
    const [start, end] = recordSpans("binary", bytes)[3];
    bytes[(start + end) >> 1] ^= 0x40;
    const writable = await handle.createWritable();
    await writable.write(bytes);
    await writable.close();

    const again = await Cairn.open({ path, onWarning: () => {} });
    const reopened = await again.open("/notes");
    assert.equal(reopened.stats().damaged.length, 1);
    assert.equal(reopened.has("n3"), false, "created in the lost block");
    assert.equal(reopened.get("n2", Note)?.get("title"), "Note 2", "as before the lost block");
    assert.equal(reopened.get("n0", Note)?.get("title"), "edited 1");
    assert.equal(reopened.get("n5", Note)?.get("title"), "Note 5");

    const report = await reopened.importBlocks(
      await peerNotes.exportBlocks(reopened.versionVector()),
    );
    assert.deepEqual(report.rejected, []);
    assert.deepEqual(
      [...reopened.keys()].sort().map((key) => reopened.get(key, Note)!.toObject()),
      final,
    );
    await again.close();
    const third = await Cairn.open({ path, onWarning: (w) => assert.fail(w.message) });
    const repaired = await third.open("/notes");
    assert.deepEqual(repaired.stats().damaged, [], "the log was written anew, whole");
    assert.deepEqual(
      [...repaired.keys()].sort().map((key) => repaired.get(key, Note)!.toObject()),
      final,
    );
    await third.close();
    await peer.close();
  } finally {
    await removeDirectory(path);
  }
});
