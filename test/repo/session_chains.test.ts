import { test } from "node:test";
import assert from "node:assert/strict";
import type { SealedBlock } from "../../src/core/block.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { causalOrder } from "../../src/repo/block_order.ts";
import { SessionChains } from "../../src/repo/session_chains.ts";

/** A stand-in for a sealed block: what chain bookkeeping reads of it. Hash "h<seq>". */
function block(seq: number, session = "S", hash = `h${seq}`): SealedBlock {
  return {
    block: {
      session,
      seq,
      prev: seq === 1 ? "" : `h${seq - 1}`,
      commits: [{ seq }],
    },
    hash,
  } as unknown as SealedBlock;
}

/** A chain of 1..n stored with the blocks `lost` missing, as a damaged log reads. */
function storedWithout(n: number, lost: number[]): SessionChains {
  const chains = new SessionChains();
  for (let seq = 1; seq <= n; seq++) {
    if (lost.includes(seq)) continue;
    assert.equal(chains.place(block(seq), true), "next");
    chains.record(block(seq));
  }
  return chains;
}

test("blocks missing from a stored chain are recorded; the version vector stops before them", () => {
  const chains = storedWithout(10, [4, 5, 8]);
  assert.deepEqual(chains.missing(), [
    { session: "S", first: 4, last: 5 },
    { session: "S", first: 8, last: 8 },
  ]);
  assert.deepEqual(chains.versionVector(), { S: 3 });
  assert.equal(chains.whole, false);
  assert.equal(chains.tip("S")?.seq, 10);
  assert.deepEqual(storedWithout(3, [1]).versionVector(), { S: 0 }, "a gap from the first block");
});

test("a gap is filled from either end, each block pinned by its neighbours", () => {
  const chains = storedWithout(10, [4, 5, 6]);
  // 6 is pinned by hash (block 7 names it); 5 is not pinned yet by either side.
  assert.throws(() => chains.place(block(5)), (err) => isCairnError(err, "E_CHAIN_GAP"));
  assert.equal(chains.place(block(6)), "gap");
  chains.record(block(6));
  assert.equal(chains.place(block(4)), "gap"); // pinned by block 3's hash
  chains.record(block(4));
  assert.equal(chains.place(block(5)), "gap");
  chains.record(block(5));
  assert.equal(chains.whole, true);
  assert.deepEqual(chains.versionVector(), { S: 10 });
  assert.equal(chains.place(block(5)), "duplicate");
  assert.equal(chains.place(block(11)), "next");
});

test("a block that contradicts a gap's neighbours is a fork, and a stored gap is only for stored blocks", () => {
  const chains = storedWithout(6, [3]);
  // Block 4 names h3: a block 3 with another hash is not the lost one.
  assert.throws(
    () => chains.place(block(3, "S", "forged")),
    (e) => isCairnError(e, "E_CHAIN_FORK"),
  );
  const wrongPrev = block(3);
  (wrongPrev.block as { prev: string }).prev = "elsewhere";
  assert.throws(() => chains.place(wrongPrev), (err) => isCairnError(err, "E_CHAIN_FORK"));
  assert.throws(() => chains.place(block(4, "S", "other")), (e) => isCairnError(e, "E_CHAIN_FORK"));
  // An import may not open a gap; only a stored block may (damage before it).
  assert.throws(() => chains.place(block(9)), (err) => isCairnError(err, "E_CHAIN_GAP"));
  assert.equal(chains.place(block(9), true), "next");
  assert.equal(chains.missing().length, 1);
});

test("causal order puts a block that came back before the blocks that depend on it", () => {
  // Held in apply order; S2 came back last. T1 holds a commit whose parent is S2's commit 2.
  const held = [
    { session: "S", seq: 1, firstCommitSeq: 1, lastCommitSeq: 1, parents: [] },
    { session: "S", seq: 3, firstCommitSeq: 3, lastCommitSeq: 3, parents: ["S.2"] },
    { session: "T", seq: 1, firstCommitSeq: 1, lastCommitSeq: 2, parents: ["S.2", "T.1"] },
    { session: "U", seq: 1, firstCommitSeq: 1, lastCommitSeq: 1, parents: [] },
    { session: "S", seq: 2, firstCommitSeq: 2, lastCommitSeq: 2, parents: ["S.1"] },
  ];
  const ordered = causalOrder(held, (b) => b.parents).map((b) => `${b.session}${b.seq}`);
  assert.deepEqual(ordered, ["S1", "S2", "S3", "T1", "U1"]);
  // Nothing to move: the order is kept.
  const inOrder = [held[0], held[4], held[1], held[3]];
  assert.deepEqual(causalOrder(inOrder, (b) => b.parents), inOrder);
});
