/**
 * The server's open repositories: one without subscribers or pushes is closed after
 * `idleCloseMs` and opened again, with the same blocks and cursor, on the next use.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { asArrays, blocksOf, pushBlocks, RawClient } from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";

const REPO = "/data/idle";

test("sync repositories: an idle repository is closed, and opened again on the next subscribe", async () => {
  await withSyncServer({ open: true, idleCloseMs: 20 }, async (server) => {
    const client = await RawClient.connect(server.url);
    const pushed = await blocksOf(client.session, REPO, 3);
    await pushBlocks(client, REPO, pushed);
    const first = await client.catchUp(REPO);
    assert.equal(server.stats().openRepositories, 1);
    client.send({ type: "unsubscribe", repo: REPO });
    while (server.stats().openRepositories > 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const again = await client.catchUp(REPO, { cursor: first.synced.cursor });
    assert.deepEqual(again.blocks, []);
    assert.deepEqual(again.synced.cursor, first.synced.cursor);
    const full = await (await RawClient.connect(server.url)).catchUp(REPO);
    assert.deepEqual(asArrays(full.blocks), asArrays(pushed));
    await client.close();
  });
});
