/**
 * Indexes made with `createIndex` on a stored repository come back when it is opened again: the
 * declaration is kept in the repository's settings file, written atomically, and a damaged,
 * half-written or unwritable file never costs data.
 */
import { test } from "node:test";
import { withTempDirectory } from "../harness/temp_directory.ts";
import assert from "node:assert/strict";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Cairn, defineSchema, isCairnError, type RepositoryHandle } from "cairndb";

const Task = defineSchema({
  ns: "itask",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    rank: { type: "number" },
    tags: { type: "set" },
  },
});

const SETTINGS = "data~tasks.settings.json";

const withDirectory = (run: (path: string) => Promise<void>) => withTempDirectory("indexes", run);

function fill(repo: RepositoryHandle): void {
  for (let i = 0; i < 200; i++) {
    repo.create(Task, { title: `task ${i}`, rank: i, tags: new Set([`t${i % 4}`]) }, {
      key: `k${String(i).padStart(3, "0")}`,
    });
  }
}

/** Opens the database at `path` with Task registered, collecting warnings. */
async function open(path: string) {
  const warnings: string[] = [];
  const db = await Cairn.open({
    path,
    schemas: [Task],
    onWarning: (w) => warnings.push(w.message),
  });
  return { db, repo: await db.open("/data/tasks"), warnings };
}

const ranked = (repo: RepositoryHandle) =>
  repo.query({ schema: Task, where: { rank: { gte: 190 } }, id: "ranked" });

test("createIndex survives close and reopen; the index is rebuilt when a query needs it", async () => {
  await withDirectory(async (path) => {
    const first = await open(path);
    fill(first.repo);
    first.repo.createIndex("rank");
    first.repo.createIndex("tags");
    first.repo.createIndex("rank"); // idempotent
    await first.repo.flush(); // the declaration is stored by then
    const stored = JSON.parse(await readFile(join(path, SETTINGS), "utf8"));
    assert.deepEqual(stored, { cairn: "repository", version: 1, indexes: ["rank", "tags"] });
    await first.db.close();

    const second = await open(path);
    const q = ranked(second.repo);
    assert.equal(q.explain().index, "rank");
    assert.deepEqual(q.results.map((t) => t.get("rank")), [
      190,
      191,
      192,
      193,
      194,
      195,
      196,
      197,
      198,
      199,
    ]);
    const tagged = second.repo.query({
      schema: Task,
      where: { or: [{ tags: { has: "t1" } }, { rank: { lt: 2 } }] },
    });
    assert.equal(tagged.explain().index, "tags | rank");
    assert.equal(tagged.results.length, 51);
    assert.deepEqual(second.warnings, []);
    await second.db.close();
  });
});

test("createIndex on a field no registered schema has, or a bad name: typed errors, nothing stored", async () => {
  await withDirectory(async (path) => {
    const { db, repo } = await open(path);
    const fails = (code: "E_UNKNOWN_FIELD" | "E_BAD_ARGUMENT" | "E_CLOSED", field: unknown) =>
      assert.throws(() => repo.createIndex(field as string), (err) => isCairnError(err, code));
    fails("E_UNKNOWN_FIELD", "nope");
    fails("E_UNKNOWN_FIELD", "toString");
    fails("E_BAD_ARGUMENT", "");
    fails("E_BAD_ARGUMENT", 42);
    fails("E_BAD_ARGUMENT", undefined);
    await repo.flush();
    await assert.rejects(readFile(join(path, SETTINGS)), "no settings file was written");
    await db.close("/data/tasks");
    fails("E_CLOSED", "rank");
    await db.close();
  });
});

test("a damaged settings file is reported and ignored; createIndex writes a good one", async () => {
  await withDirectory(async (path) => {
    const first = await open(path);
    fill(first.repo);
    await first.db.close();
    const damaged = [
      "{ not json",
      '{"cairn":"repository","version":1,"indexes":[7]}',
      "[]",
      // A version that is not a later one's is damage too, not a file of a newer Cairn.
      '{"cairn":"repository","indexes":[]}',
      '{"cairn":"repository","version":0,"indexes":[]}',
      '{"cairn":"repository","version":"x","indexes":[]}',
    ];
    for (const damage of damaged) {
      await writeFile(join(path, SETTINGS), damage);
      const { db, repo, warnings } = await open(path);
      assert.equal(repo.count(), 200, "every item is there");
      assert.equal(warnings.length, 1, `${damage}: ${warnings.join("; ")}`);
      assert.match(warnings[0], /settings file/);
      assert.equal(ranked(repo).explain().mode, "scan");
      await db.close();
    }
    const { db, repo } = await open(path);
    repo.createIndex("rank");
    await db.close();
    const again = await open(path);
    assert.equal(ranked(again.repo).explain().index, "rank");
    assert.deepEqual(again.warnings, []);
    await again.db.close();
  });
});

test("a settings file of a newer version is refused, named with its directory, and left untouched", async () => {
  await withDirectory(async (path) => {
    const newer = JSON.stringify({ cairn: "repository", version: 2, indexes: ["rank"] });
    const first = await open(path);
    await first.db.close();
    await writeFile(join(path, SETTINGS), newer);
    const db = await Cairn.open({ path });
    await assert.rejects(db.open("/data/tasks"), (err) => {
      assert.ok(isCairnError(err, "E_UNSUPPORTED_VERSION"), String(err));
      assert.ok(err.message.includes(`${path}/${SETTINGS}`), err.message);
      return true;
    });
    assert.equal(await readFile(join(path, SETTINGS), "utf8"), newer);
    await db.close();
  });
});

test("a write cut short leaves the previous settings; a failed write is reported, the index kept", async () => {
  await withDirectory(async (path) => {
    const first = await open(path);
    fill(first.repo);
    first.repo.createIndex("rank");
    await first.db.close();
    // A crash during the atomic write leaves only the temporary file behind.
    await writeFile(join(path, `${SETTINGS}.tmp`), '{"cairn":"repository","ver');
    const second = await open(path);
    assert.equal(ranked(second.repo).explain().index, "rank");
    assert.deepEqual(second.warnings, []);
    // The temporary file cannot be written (a directory took its name): the write fails.
    await rm(join(path, `${SETTINGS}.tmp`));
    await mkdir(join(path, `${SETTINGS}.tmp`));
    second.repo.createIndex("tags");
    await second.repo.flush();
    assert.equal(second.warnings.length, 1, second.warnings.join("; "));
    assert.match(second.warnings[0], /could not store the index declarations/);
    const tagged = second.repo.query({ schema: Task, where: { tags: { has: "t2" } } });
    assert.equal(tagged.explain().index, "tags", "the index works in this session");
    assert.equal(tagged.results.length, 50);
    await second.db.close();
    const stored = JSON.parse(await readFile(join(path, SETTINGS), "utf8"));
    assert.deepEqual(stored.indexes, ["rank"], "the previous settings are intact");
  });
});
