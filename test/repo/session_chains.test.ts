import { test } from "node:test";
import assert from "node:assert/strict";
import type { SealedBlock } from "../../src/core/block.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { causalOrder } from "../../src/repo/block_order.ts";
import { SessionChains } from "../../src/repo/session_chains.ts";

/** A stand-in digest named by a label: its bytes, then ones to 32 bytes. */
function digestOf(label: string): Uint8Array {
  const digest = new Uint8Array(32).fill(1);
  digest.set(new TextEncoder().encode(label));
  return digest;
}

/** A stand-in for a sealed block: what chain bookkeeping reads of it. Digest labelled "h<seq>". */
function block(seq: number, session = "S", label = `h${seq}`): SealedBlock {
  const digest = digestOf(label);
  return {
    block: {
      session,
      seq,
      prev: seq === 1 ? "" : toBase64Url(digestOf(`h${seq - 1}`)),
      commits: [{ seq }],
    },
    digest,
    hash: toBase64Url(digest),
  } as unknown as SealedBlock;
}

/** A chain of 1..n stored with the blocks `lost` missing, as a damaged log reads. */
function storedWithout(n: number, lost: number[]): SessionChains {
  const chains = new SessionChains("/data/chains");
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

test("the hash of each block held, past any number of blocks and sessions; none for the others", () => {
  const chains = storedWithout(300, [7, 150]);
  chains.record(block(1, "T"));
  for (const seq of [1, 6, 8, 149, 151, 300]) {
    assert.equal(chains.hashAt("S", seq), toBase64Url(digestOf(`h${seq}`)), `S ${seq}`);
  }
  for (const seq of [0, 7, 150, 301, 100_000]) assert.equal(chains.hashAt("S", seq), undefined);
  assert.equal(chains.hashAt("T", 1), toBase64Url(digestOf("h1")));
  assert.equal(chains.hashAt("T", 2), undefined);
  assert.equal(chains.hashAt("U", 1), undefined);
  chains.recordHistory("U", 3, digestOf("old"));
  assert.equal(chains.hashAt("U", 3), toBase64Url(digestOf("old")));
  assert.equal(chains.hashAt("U", 2), undefined);
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
