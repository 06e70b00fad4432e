/**
 * A database on a disk whose file names ignore case (macOS's and Windows' by default), simulated
 * over the real file backend: two repository paths that differ only in case would name the same
 * files there, so the second is refused — open, opening or stored — while on a disk that tells
 * them apart (this machine's) both open.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { openCairnOn } from "../../src/db/database.ts";
import { Cairn, defineSchema, isCairnError } from "../../src/mod.ts";
import type { StorageBackend } from "../../src/storage/backend.ts";
import { openFsBackend } from "../../src/storage/backends/fs.ts";
import { REQUIRED_TITLE } from "../harness/schemas.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const Doc = defineSchema(REQUIRED_TITLE);

/** The real backend, with names that ignore case but keep the case they were made with. */
async function caseInsensitive(directory: string): Promise<StorageBackend> {
  const backend = await openFsBackend(directory);
  const actual = new Map<string, string>();
  for (const name of await backend.listFiles()) actual.set(name.toLowerCase(), name);
  const on = (name: string) => actual.get(name.toLowerCase()) ?? name;
  const made = (name: string) => {
    if (!actual.has(name.toLowerCase())) actual.set(name.toLowerCase(), name);
    return on(name);
  };
  return {
    kind: backend.kind,
    readFile: (name) => backend.readFile(on(name)),
    readRange: (name, offset, length) => backend.readRange(on(name), offset, length),
    openAppend: (name) => backend.openAppend(made(name)),
    writeFileAtomic: (name, bytes) => backend.writeFileAtomic(made(name), bytes),
    async removeFile(name) {
      await backend.removeFile(on(name));
      actual.delete(name.toLowerCase());
    },
    listFiles: () => backend.listFiles(),
    acquireLock: () => backend.acquireLock(),
    releaseLock: () => backend.releaseLock(),
    close: () => backend.close(),
  };
}

const refused = (err: unknown) =>
  isCairnError(err, "E_BAD_ARGUMENT") && /only in case/.test(err.message);

test("a disk that ignores case: a repository differing only in case from another is refused", async () => {
  await withTempDirectory("case", async (path) => {
    const db = await openCairnOn({ path, schemas: [Doc] }, caseInsensitive);
    const notes = await db.open("/data/Notes");
    notes.create(Doc, { title: "in /data/Notes" });
    await assert.rejects(db.open("/data/notes"), refused, "open beside it");
    await assert.rejects(db.open("/DATA/Notes"), refused);
    await db.open("/data/other"); // others open as usual
    await db.close();
    // Stored, not open: still refused; the stored one opens with what it holds.
    const again = await openCairnOn({ path, schemas: [Doc] }, caseInsensitive);
    await assert.rejects(again.open("/data/notes"), refused, "stored beside it");
    const reopened = await again.open("/data/Notes");
    assert.deepEqual(
      [...reopened.keys()].map((key) => reopened.get(key, Doc)!.get("title")),
      ["in /data/Notes"],
    );
    await again.close();
  });
});

test("a disk that tells case apart: paths differing only in case are two repositories", async () => {
  await withTempDirectory("case", async (path) => {
    const db = await Cairn.open({ path, schemas: [Doc] });
    const upper = await db.open("/Notes");
    const lower = await db.open("/notes");
    upper.create(Doc, { title: "upper" });
    lower.create(Doc, { title: "lower" });
    await db.close();
    const again = await Cairn.open({ path, schemas: [Doc] });
    const titles = async (p: string) => {
      const repo = await again.open(p);
      return [...repo.keys()].map((key) => repo.get(key, Doc)!.get("title"));
    };
    assert.deepEqual([await titles("/Notes"), await titles("/notes")], [["upper"], ["lower"]]);
    await again.close();
  });
});
