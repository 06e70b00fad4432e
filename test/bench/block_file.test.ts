import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeBlockFile, encodeBlockFile } from "../../bench/sync/block_file.ts";

test("a block file gives back the frames it was made of", () => {
  const frames = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new Uint8Array(300).fill(7)];
  const file = encodeBlockFile(frames);
  assert.equal(file.byteLength, 3 * 4 + 303);
  assert.deepEqual(decodeBlockFile(file), frames);
  assert.deepEqual(decodeBlockFile(new Uint8Array(0)), []);
});

test("a cut block file is refused", () => {
  const file = encodeBlockFile([new Uint8Array([1, 2, 3])]);
  assert.throws(() => decodeBlockFile(file.subarray(0, 5)), /cut short/);
  assert.throws(() => decodeBlockFile(file.subarray(0, 2)), /cut short/);
});
