/**
 * The bench's two ways of filling a repository: W03's "a block per item" variant must open a log
 * of one block per item (as an app that saves each item as it is made leaves it), the others one
 * written in a tick. Blocks are counted by the session's sequence number, one per block.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn } from "../../src/mod.ts";
import {
  fillRepo,
  fillRepoBlockPerItem,
  ItemSchema,
  REPO_PATH,
} from "../../bench/contenders/cairn.ts";
import { itemKey } from "../../bench/lib/items.ts";

for (
  const [name, fill, blocks] of [
    ["fillRepoBlockPerItem", fillRepoBlockPerItem, 2_500],
    ["fillRepo", fillRepo, 1],
  ] as const
) {
  test(`bench: ${name} writes 2,500 items in ${blocks === 1 ? "one block" : "a block each"}`, async () => {
    const db = await Cairn.open({ schemas: [ItemSchema] });
    try {
      const repo = await db.open(REPO_PATH);
      await fill(repo, 0, 2_500);
      assert.equal(repo.count(), 2_500);
      assert.equal(repo.get(itemKey(2_499), ItemSchema)?.get("count"), 2_499);
      assert.deepEqual(Object.values(repo.versionVector()), [blocks]);
    } finally {
      await db.close();
    }
  });
}
