/**
 * Ticks sealed as several chained blocks (a lowered cap) are stored and read back by both log
 * formats, with and without a checkpoint, and the session's chain goes on after a reopen.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Cairn } from "../../src/db/database.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { sealing } from "../../src/repo/repository.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { OPTIONAL_TITLE } from "../harness/schemas.ts";

const Note = defineSchema(OPTIONAL_TITLE);

for (const format of ["binary", "jsonl"] as const) {
  test(`${format} log: a tick cut into blocks is stored and read back whole`, async () => {
    await withTempDirectory(`capped-${format}`, async (dir) => {
      const saved = sealing.maxBlockBody;
      sealing.maxBlockBody = 1024;
      try {
        const path = join(dir, "db");
        const db = await Cairn.open({ path, format, schemas: [Note] });
        const notes = await db.open("/notes");
        for (let i = 0; i < 100; i++) notes.create(Note, { title: `note ${i}` });
        await notes.flush();
        const vector = notes.versionVector();
        assert.ok(vector[db.session.id] > 3);
        await db.close(); // writes a checkpoint

        const reopened = await Cairn.open({ path, schemas: [Note] });
        const again = await reopened.open("/notes");
        assert.equal(again.count(), 100);
        assert.deepEqual(again.versionVector(), vector);
        for (let i = 0; i < 100; i++) again.create(Note, { title: `more ${i}` });
        await again.flush();
        const frames = await again.exportBlocks();
        await reopened.close();

        const fresh = await Cairn.open({ trust: [reopened.session.publicKey], schemas: [Note] });
        const copy = await fresh.open("/notes");
        const report = await copy.importBlocks(frames);
        assert.equal(report.rejected.length, 0);
        assert.equal(copy.count(), 200);
      } finally {
        sealing.maxBlockBody = saved;
      }
    });
  });
}
