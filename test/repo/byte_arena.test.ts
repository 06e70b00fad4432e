import { test } from "node:test";
import assert from "node:assert/strict";
import { ByteArena } from "../../src/repo/byte_arena.ts";
import { seededRandom } from "../harness/random.ts";

test("bytes stored in the arena read back as stored, however many and however large", () => {
  const random = seededRandom(11);
  const arena = new ByteArena();
  const stored: [Uint8Array, Uint8Array, { chunk: Uint8Array; at: number }][] = [];
  for (let i = 0; i < 3_000; i++) {
    // Mostly small blocks, sometimes one larger than a chunk's share; first one larger than the
    // first chunk.
    const size = i === 0
      ? 10_000
      : random() < 0.98
      ? Math.floor(random() * 400)
      : Math.floor(random() * 300_000);
    const body = Uint8Array.from({ length: size }, () => Math.floor(random() * 256));
    const signature = Uint8Array.from({ length: random() < 0.5 ? 64 : 0 }, (_, j) => j);
    stored.push([body, signature, arena.store(body, signature)]);
  }
  for (const [i, [body, signature, { chunk, at }]] of stored.entries()) {
    assert.deepEqual(chunk.subarray(at, at + body.length), body, `body ${i}`);
    const end = at + body.length;
    assert.deepEqual(chunk.subarray(end, end + signature.length), signature, `signature ${i}`);
  }
  const chunks = new Set(stored.map(([, , place]) => place.chunk));
  assert.ok(chunks.size < stored.length / 10, `${chunks.size} chunks for ${stored.length} blocks`);
});
