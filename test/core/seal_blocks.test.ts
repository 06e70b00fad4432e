/**
 * sealBlocks: one tick's commits as a chain of blocks of capped bodies. Each part must be the
 * block sealBlock would make of its commits (canonical, so a peer's decode accepts it), chained
 * to the one before, with commit offsets that point at its own body.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  blockBody,
  type BlockFields,
  decodeBlock,
  encodeBlock,
  sealBlock,
  sealBlocks,
  verifyBlock,
} from "../../src/core/block.ts";
import { bytesEqual } from "../../src/core/bytes.ts";
import type { Commit } from "../../src/core/commit.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { newAuthor } from "../harness/blocks.ts";

const suite = await cryptoSuite();
const author = await newAuthor(suite);
const signer = { key: author.key, ed25519: suite.ed25519 };

/** `count` commits, each with a value of about `size` bytes, the later ones updating item-0. */
function tick(count: number, size = 40, firstSeq = 1): BlockFields {
  const commits = Array.from({ length: count }, (_, i): Commit => ({
    session: author.session,
    seq: firstSeq + i,
    key: i % 3 === 0 ? `item-${i}` : "item-0",
    hlc: 1_790_000_000_000 * 1024 + i,
    parents: i % 3 === 0 || i === 1 ? [] : [`${author.session}.${firstSeq + i - 1}`],
    schema: "task@1",
    kind: "value",
    value: { title: "x".repeat(size), rank: i },
  }));
  return { session: author.session, publicKey: author.key.publicKey, seq: 1, prev: "", commits };
}

test("a tick within the cap is one block, the very block sealBlock makes", async () => {
  const fields = tick(10);
  const [only, ...rest] = await sealBlocks(fields, signer, suite, 4096);
  assert.equal(rest.length, 0);
  const single = await sealBlock(fields, signer, suite);
  assert.ok(bytesEqual(only.body, single.body));
  assert.equal(only.hash, single.hash);
  assert.deepEqual([...only.commitOffsets!], [...single.commitOffsets!]);
});

test("a larger tick becomes chained blocks under the cap, each canonical and verified", async () => {
  for (const [count, cap] of [[300, 2048], [40, 300], [20_000, 256 * 1024]]) {
    const fields = { ...tick(count), seq: 5, prev: "A".repeat(43) };
    const blocks = await sealBlocks(fields, signer, suite, cap);
    assert.ok(blocks.length > 1, `${count} commits under ${cap} bytes: ${blocks.length} block`);
    let prev = fields.prev;
    const carried: Commit[] = [];
    for (const [i, sealed] of blocks.entries()) {
      assert.ok(sealed.body.length <= cap, `block ${i}: ${sealed.body.length} > ${cap}`);
      assert.equal(sealed.block.seq, 5 + i);
      assert.equal(sealed.block.prev, prev);
      prev = sealed.hash;
      // The body is the one blockBody writes for the part (decodeBlock checks it is canonical).
      const offsets = new Uint32Array(sealed.block.commits.length + 1);
      assert.ok(bytesEqual(blockBody(sealed.block, offsets), sealed.body));
      assert.deepEqual([...sealed.commitOffsets!], [...offsets]);
      const decoded = await decodeBlock(encodeBlock(sealed), suite);
      await verifyBlock(decoded, suite);
      assert.equal(decoded.hash, sealed.hash);
      carried.push(...decoded.block.commits);
    }
    assert.deepEqual(carried, fields.commits);
  }
});

test("a commit larger than the cap gets a block of its own; its neighbours share theirs", async () => {
  const fields = tick(7, 10);
  const big = { ...fields.commits[3], value: { title: "y".repeat(5000), rank: 3 } } as Commit;
  const commits = fields.commits.map((commit, i) => i === 3 ? big : commit);
  const blocks = await sealBlocks({ ...fields, commits }, signer, suite, 1000);
  assert.deepEqual(blocks.map((sealed) => sealed.block.commits.map((c) => c.seq)), [
    [1, 2, 3],
    [4],
    [5, 6, 7],
  ]);
  assert.ok(blocks[1].body.length > 1000);
});

test("a part of more than 15 and of more than 65,535 commits has the right array header", async () => {
  const fields = tick(70_000, 1);
  const blocks = await sealBlocks(fields, signer, suite, blockBody(fields).length - 100);
  assert.ok(blocks.length >= 2 && blocks[0].block.commits.length > 0xffff);
  for (const sealed of blocks) {
    assert.ok(bytesEqual(blockBody(sealed.block), sealed.body));
  }
  const small = await sealBlocks(tick(60, 1), signer, suite, 1500);
  assert.ok(small.some((sealed) => sealed.block.commits.length > 15));
  for (const sealed of small) assert.ok(bytesEqual(blockBody(sealed.block), sealed.body));
});
