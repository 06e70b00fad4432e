import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema, isCairnError } from "cairndb";

const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    tags: { type: "set" },
    body: { type: "text" },
  },
});

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

test("a second database on the same OPFS directory gets E_LOCKED until the first closes", async () => {
  const path = uniquePath();
  try {
    const db = await Cairn.open({ path });
    await assert.rejects(Cairn.open({ path }), (err) => isCairnError(err, "E_LOCKED"));
    await db.close();
    const again = await Cairn.open({ path });
    await again.close();
  } finally {
    await removeDirectory(path);
  }
});
