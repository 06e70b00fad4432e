import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { SealedBlock } from "../../src/core/block.ts";
import { HeldBlocks } from "../../src/repo/held_blocks.ts";

/** A stand-in for a sealed block: what HeldBlocks reads of it (one commit, seq as the block's). */
function block(session: string, seq: number): SealedBlock {
  return {
    block: { session, seq, commits: [{ seq }], signature: new Uint8Array(0) },
    body: new Uint8Array([seq & 255]),
  } as unknown as SealedBlock;
}

/** Sessions' chains interleaved in some order, each session's blocks in the order of their seqs. */
const interleaved = fc.array(fc.constantFrom("A", "B", "C", "D"), { maxLength: 120 }).map(
  (picks) => {
    const next: Record<string, number> = {};
    return picks.map((session) => block(session, next[session] = (next[session] ?? 0) + 1));
  },
);

const vector = fc.record({
  A: fc.nat({ max: 40 }),
  B: fc.nat({ max: 40 }),
  C: fc.nat({ max: 40 }),
}, { requiredKeys: [] });

test("held blocks: what a peer at a version vector lacks, in the order they were applied", () => {
  fc.assert(
    fc.property(interleaved, fc.nat({ max: 10 }), vector, (blocks, fromHistory, since) => {
      const held = new HeldBlocks(() => undefined);
      // Some of the first blocks come in as a snapshot's history, put in front afterwards.
      const history = blocks.slice(0, Math.min(fromHistory, blocks.length));
      for (const sealed of blocks.slice(history.length)) held.add(sealed, false);
      held.addHistory(history);
      const expected = blocks
        .filter(({ block }) => block.seq > ((since as Record<string, number>)[block.session] ?? 0))
        .map(({ block }) => `${block.session}${block.seq}`);
      const lacking = held.since(since).map((h) => `${h.session}${h.seq}`);
      assert.deepEqual(lacking, expected);
    }),
    { numRuns: 500, seed: 23 },
  );
});
