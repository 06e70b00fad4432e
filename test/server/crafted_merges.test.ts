/**
 * Merges of commits an honest client would not write but a trusted writer can sign (made by hand,
 * test/harness/crafting_author.ts): every replica reads the same value, and a local write after
 * such a merge seals a block every peer accepts. Deno and Node: one case reopens a database from
 * its files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "cairndb";
import { CraftingAuthor } from "../harness/crafting_author.ts";
import { ALL_TYPES } from "../harness/schemas.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

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

const F = { title: { type: "string" }, c: { type: "counter" }, tags: { type: "set" } } as const;
const F1 = defineSchema({ ns: "f", version: 1, fields: F });
const F2 = defineSchema({ ns: "f", version: 2, fields: F });

test("leaves under f@2 whose common ancestor is under f@1 wait for f@1, then merge as where it was registered from the start (registered later, or at the next open)", async () => {
  const author = await CraftingAuthor.make();
  const frame = await author.block([
    author.value("k", F1.id, [], { title: "t", c: 10, tags: ["a", "b"] }),
    author.value("k", F2.id, [author.id(1)], { title: "t", c: 11, tags: ["a", "b"] }),
    author.value("k", F2.id, [author.id(1)], { title: "t", c: 12, tags: ["b"] }),
  ]);
  const merged = { title: "t", c: 13, tags: new Set(["b"]) };
  const full = await Cairn.open({ schemas: [F1, F2], trust: [author.trust] });
  const fullRepo = await full.open("/r");
  await fullRepo.importBlocks([frame]);
  assert.deepEqual(fullRepo.get("k", F2)!.toObject(), merged);
  await full.close();

  for (const later of ["register", "reopen"]) {
    await withTempDirectory("base-schema", async (path) => {
      let db = await Cairn.open({ schemas: [F2], trust: [author.trust], path });
      let repo = await db.open("/r");
      assert.equal((await repo.importBlocks([frame])).applied, 1);
      // Not merged yet: the newest leaf's value stands in, as while a leaf's schema is unknown.
      assert.deepEqual(repo.get("k", F2)!.toObject(), { title: "t", c: 12, tags: new Set(["b"]) });
      if (later === "register") db.register(F1);
      else {
        await db.close();
        db = await Cairn.open({ schemas: [F1, F2], trust: [author.trust], path });
        repo = await db.open("/r");
      }
      assert.deepEqual(repo.get("k", F2)!.toObject(), merged, later);
      await db.close();
    });
  }
});
