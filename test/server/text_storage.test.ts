/**
 * Text documents survive close and reopen: from the checkpoint (no edit replayed) and from the
 * log alone, and a reopened database keeps editing and syncing with peers that never closed,
 * character by character, with nothing duplicated.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Cairn, defineSchema, type RepositoryHandle } from "cairndb";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { TITLE_AND_BODY } from "../harness/schemas.ts";

const Doc = defineSchema(TITLE_AND_BODY);

async function exchange(from: RepositoryHandle, to: RepositoryHandle): Promise<void> {
  const report = await to.importBlocks(await from.exportBlocks(to.versionVector()));
  assert.deepEqual(report.rejected.map((r) => r.error.message), []);
}

for (const from of ["checkpoint", "log"] as const) {
  test(`a text document reopened from its ${from} goes on merging with a peer, nothing duplicated`, async () => {
    await withTempDirectory("text-store", async (path) => {
      const db = await Cairn.open({ path, schemas: [Doc] });
      const peer = await Cairn.open({ schemas: [Doc], trust: [db.session.publicKey] });
      await db.trust(peer.session.publicKey);
      const mine = await db.open("/docs");
      const theirs = await peer.open("/docs");
      const doc = mine.create(Doc, { title: "t", body: "the quick fox" }, { key: "d" });
      await exchange(mine, theirs);
      doc.insertText("body", 10, "brown ");
      theirs.get("d", Doc)!.insertText("body", 4, "very ");
      await exchange(theirs, mine);
      await exchange(mine, theirs);
      assert.equal(doc.get("body"), "the very quick brown fox");
      await db.close();
      if (from === "log") await rm(join(path, "docs.ckpt"));
      else assert.ok((await stat(join(path, "docs.ckpt"))).size > 0);

      const again = await Cairn.open({ path, schemas: [Doc] });
      await again.trust(peer.session.publicKey);
      const reopened = await again.open("/docs");
      assert.equal(reopened.get("d", Doc)!.get("body"), "the very quick brown fox");
      // Concurrent edits after the reopen, on both sides.
      reopened.get("d", Doc)!.deleteText("body", 0, 4);
      theirs.get("d", Doc)!.insertText("body", 24, "!");
      await exchange(reopened, theirs);
      await exchange(theirs, reopened);
      const body = reopened.get("d", Doc)!.get("body");
      assert.equal(body, "very quick brown fox!");
      assert.equal(theirs.get("d", Doc)!.get("body"), body);
      await again.close();
      await peer.close();
    });
  });
}
