/**
 * Merges of commits an honest client would not write but a trusted writer can sign (made by hand,
 * test/harness/crafting_author.ts): every replica reads the same value, and a local write after
 * such a merge seals a block every peer accepts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "cairndb";
import { CraftingAuthor } from "../harness/crafting_author.ts";
import { ALL_TYPES } from "../harness/schemas.ts";

const All = defineSchema(ALL_TYPES);

test("two concurrent counter increments past the largest number merge to it, and a local write after them is accepted by a peer", async () => {
  const author = await CraftingAuthor.make();
  const root = author.value("k", All.id, [], { title: "t", likes: 0 });
  const frame = await author.block([
    root,
    author.delta("k", All.id, [author.id(1)], { likes: 1.7e308 }),
    author.delta("k", All.id, [author.id(1)], { likes: 1.7e308 }),
  ]);
  const db = await Cairn.open({ schemas: [All], trust: [author.trust] });
  const repo = await db.open("/r");
  assert.equal((await repo.importBlocks([frame])).applied, 1);
  assert.equal(repo.get("k", All)!.get("likes"), Number.MAX_VALUE);

  repo.get("k", All)!.set("title", "local write");
  await repo.flush();
  const peer = await Cairn.open({ schemas: [All], trust: [author.trust, db.session.publicKey] });
  const peerRepo = await peer.open("/r");
  const report = await peerRepo.importBlocks(await repo.exportBlocks(peerRepo.versionVector()));
  assert.deepEqual(report.rejected, []);
  assert.deepEqual(peerRepo.get("k", All)!.toObject(), repo.get("k", All)!.toObject());
  await db.close();
  await peer.close();
});
