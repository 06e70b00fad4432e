/**
 * Writing a repaired log anew is optional work: when it fails (a full disk), nothing is lost —
 * the old log still holds every block — so it is reported through onWarning, not thrown, and the
 * next close tries again. The storage is the file-system backend wrapped by
 * test/harness/faulty_backend.ts, given to Cairn through its internal seam (openCairnOn), so
 * everything here comes from the sources.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { openCairnOn } from "../../src/db/database.ts";
import { Cairn, defineSchema } from "../../src/mod.ts";
import { openFsBackend } from "../../src/storage/backends/fs.ts";
import { FailingCalls, faultyBackend } from "../harness/faulty_backend.ts";
import { recordSpans } from "../harness/log_records.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { REQUIRED_TITLE } from "../harness/schemas.ts";

const Doc = defineSchema(REQUIRED_TITLE);

test("a repaired log that cannot be written anew is reported, loses nothing, and close writes it", async () => {
  await withTempDirectory("repair-full", async (path) => {
    const db = await Cairn.open({ path, schemas: [Doc] });
    const repo = await db.open("/docs");
    for (let i = 0; i < 5; i++) {
      repo.create(Doc, { title: `doc ${i}` }, { key: `d${i}` });
      await repo.flush();
    }
    const peer = await Cairn.open({ trust: [db.session.publicKey], schemas: [Doc] });
    const peerRepo = await peer.open("/docs");
    await peerRepo.importBlocks(await repo.exportBlocks());
    await db.close();
    const file = join(path, "docs.log");
    const bytes = new Uint8Array(await readFile(file));
    const [start, end] = recordSpans("binary", bytes)[2];
    bytes[(start + end) >> 1] ^= 0x08;
    await writeFile(file, bytes);

    const plan = new FailingCalls();
    const warnings: string[] = [];
    const again = await openCairnOn(
      { path, schemas: [Doc], onWarning: (w) => warnings.push(w.message) },
      async (directory) => faultyBackend(await openFsBackend(directory), plan),
    );
    const reopened = await again.open("/docs");
    assert.equal(reopened.has("d2"), false);
    plan.failing.add("writeFileAtomic"); // the new log (and checkpoint) cannot be written
    await reopened.importBlocks(await peerRepo.exportBlocks(reopened.versionVector()));
    await again.flush(); // resolves: the blocks are in the log; only the rewrite failed
    assert.ok(
      warnings.some((w) => w.includes("could not write the repaired log anew")),
      String(warnings),
    );
    assert.equal(reopened.get("d2", Doc)?.get("title"), "doc 2");

    plan.clear();
    await again.close(); // tries again, and succeeds
    const quiet: string[] = [];
    const third = await Cairn.open({
      path,
      schemas: [Doc],
      onWarning: (w) => quiet.push(w.message),
    });
    const repaired = await third.open("/docs");
    assert.deepEqual(quiet, []);
    assert.deepEqual([...repaired.keys()].sort(), ["d0", "d1", "d2", "d3", "d4"]);
    await third.close();
    await peer.close();
  });
});
