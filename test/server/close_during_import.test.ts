/**
 * An import still running when its repository is closed (docs/api.md, "Closing"): a block it had
 * not applied when close() was called is refused with E_CLOSED in its report, never applied
 * after the close has stored what it stores — which would report it applied and lose it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "../../src/mod.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const Doc = defineSchema({ ns: "doc", version: 1, fields: { n: { type: "number" } } });

test("an import in flight at close: blocks applied before are stored, those after refused (E_CLOSED)", async () => {
  await withTempDirectory("close-import", async (path) => {
    const peer = await Cairn.open({ schemas: [Doc] });
    const source = await peer.open("/docs");
    for (let i = 0; i < 10; i++) {
      source.create(Doc, { n: i }, { key: `k${i}` });
      await source.flush(); // one block each
    }
    const frames = await source.exportBlocks();
    assert.equal(frames.length, 10);

    const db = await Cairn.open({ path, schemas: [Doc], trust: [peer.session.publicKey] });
    const repo = await db.open("/docs");
    // The import takes frames one at a time; close() is called as it takes the fifth.
    let closing: Promise<void> | undefined;
    function* closingAtFifth() {
      for (let i = 0; i < frames.length; i++) {
        if (i === 4) closing = db.close("/docs");
        yield frames[i];
      }
    }
    const report = await repo.importBlocks(closingAtFifth());
    await closing;
    assert.equal(report.applied, 4);
    assert.deepEqual(
      report.rejected.map(({ index, error }) => [index, error.code]),
      [4, 5, 6, 7, 8, 9].map((index) => [index, "E_CLOSED"]),
    );
    await db.close();

    const again = await Cairn.open({ path, schemas: [Doc] });
    const reopened = await again.open("/docs");
    assert.deepEqual(
      [...reopened.keys()].sort(),
      ["k0", "k1", "k2", "k3"],
      "what was applied is stored",
    );
    await again.close();
    await peer.close();
  });
});
