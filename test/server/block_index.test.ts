/**
 * The servers' in-memory index of a repository's blocks keeps bytes of their own: a pushed block
 * and its session's public key are views into the WebSocket frame they came in, and kept as views
 * they kept the whole frame (up to 1 MiB, padded by whatever the client sent beside the block)
 * in memory for as long as the repository was open.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BlockIndex } from "../../src/sync/server/block_index.ts";

test("block index: a block and a public key given as views into a larger frame are kept as copies", () => {
  const frame = new Uint8Array(1 << 20).fill(7);
  frame.set([1, 2, 3], 100);
  const block = frame.subarray(100, 103);
  const publicKey = frame.subarray(200, 232);
  const index = new BlockIndex();
  const writer = index.add(block, "session", 1, publicKey);
  const [kept] = index.readAt([1]);
  assert.deepEqual([...kept.bytes], [1, 2, 3]);
  assert.equal(kept.bytes.buffer.byteLength, 3, "not the frame's buffer");
  assert.equal(writer?.publicKey.buffer.byteLength, 32);
  assert.deepEqual(writer?.publicKey, frame.slice(200, 232));
  // Bytes that are their own buffer are kept as they are, not copied again.
  const whole = new Uint8Array([4, 5]);
  index.add(whole, "session", 2);
  assert.equal(index.readAt([2])[0].bytes, whole);
});
