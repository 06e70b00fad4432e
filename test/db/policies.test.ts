/**
 * The three input policies of docs/api.md ("What Cairn refuses, and what it keeps"): a peer's
 * block stamped too far ahead of this clock is refused and waits, an item under a schema version
 * not registered here is kept and left out of reads that cannot type it, and strings with lone
 * surrogates are refused. None of them may break reads of anything else.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, type CairnErrorCode, defineSchema, isCairnError } from "cairndb";
import { sealBlock, type SealedBlock } from "../../src/core/block.ts";
import { type Commit, makeCommit } from "../../src/core/commit.ts";
import { HLC_LOGICAL_PER_MILLI } from "../../src/core/hlc.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { encodeBlock } from "../../src/core/block.ts";
import { assertClean, exchange, openPeers } from "../harness/peers.ts";
import { OPTIONAL_TITLE } from "../harness/schemas.ts";

const Note = defineSchema(OPTIONAL_TITLE);

function throwsCode(fn: () => unknown, code: CairnErrorCode, what: string): void {
  assert.throws(fn, (err) => {
    assert.ok(isCairnError(err, code), `${what}: expected ${code}, got ${String(err)}`);
    return true;
  }, what);
}

// ── clocks ──────────────────────────────────────────────────────────────────────────────────

const MINUTE = 60_000;
const YEAR = 365.25 * 24 * 60 * MINUTE;

/**
 * Blocks of `db`'s session, one commit each, stamped at the given wall-clock times: what a peer
 * whose clock is wrong would send. Chained as that peer's blocks 1, 2, ….
 */
async function blocksStampedAt(db: Cairn, stamps: readonly number[]): Promise<Uint8Array[]> {
  const suite = await cryptoSuite();
  const key = await suite.ed25519.fromSecret(db.exportSecretKey());
  const session = db.session.id;
  const frames: Uint8Array[] = [];
  let prev = "";
  for (let i = 0; i < stamps.length; i++) {
    const hlc = Math.floor(stamps[i]) * HLC_LOGICAL_PER_MILLI;
    const commit: Commit = makeCommit(session, i + 1, `k${i + 1}`, hlc, [], Note.id, "value", {
      title: `stamped ${i + 1}`,
    });
    const sealed: SealedBlock = await sealBlock(
      { session, publicKey: key.publicKey, seq: i + 1, prev, commits: [commit] },
      { key, ed25519: suite.ed25519 },
      suite,
    );
    frames.push(encodeBlock(sealed));
    prev = sealed.hash;
  }
  return frames;
}

test("a peer's block stamped 100 years ahead is refused (E_CLOCK_AHEAD); its chain waits, nothing else does", async () => {
  const [fast, receiver, other] = await openPeers(3, { schemas: [Note] });
  receiver.repo.create(Note, { title: "mine" }, { key: "mine" });
  const frames = await blocksStampedAt(fast.db, [Date.now() + 100 * YEAR, Date.now()]);

  const report = await receiver.repo.importBlocks(frames);
  assert.equal(report.applied, 0);
  assert.deepEqual(report.rejected.map((r) => [r.index, r.error.code]), [
    [0, "E_CLOCK_AHEAD"],
    [1, "E_CHAIN_GAP"], // the next block of that chain waits for it
  ]);
  assert.match(report.rejected[0].error.message, /ahead of this clock/);
  // Nothing of it is held: the version vector asks for it again at the next exchange.
  assert.equal(receiver.repo.versionVector()[fast.db.session.id], undefined);
  assert.equal(receiver.repo.has("k1"), false);
  // Reads, writes and other peers' blocks go on.
  assert.equal(receiver.repo.get("mine", Note)?.get("title"), "mine");
  other.repo.create(Note, { title: "other" }, { key: "o" });
  assertClean(await exchange(other, receiver), "other → receiver");
  assert.equal(receiver.repo.get("o", Note)?.get("title"), "other");
  receiver.repo.get("o", Note)!.set("title", "edited");
  assertClean(await exchange(receiver, other), "receiver → other");
  assert.equal(other.repo.get("o", Note)?.get("title"), "edited");
  for (const peer of [fast, receiver, other]) await peer.db.close();
});

test("a block stamped a minute ahead is accepted, and a local edit after it is stamped after it", async () => {
  const [ahead, receiver] = await openPeers(2, { schemas: [Note] });
  const [frame] = await blocksStampedAt(ahead.db, [Date.now() + MINUTE]);
  assertClean(await receiver.repo.importBlocks([frame]), "a minute ahead");
  receiver.repo.get("k1", Note)!.set("title", "edited here");
  // The edit wins on the peer too: it is stamped after the commit it replaces.
  assertClean(await exchange(receiver, ahead), "receiver → ahead");
  assertClean(await ahead.repo.importBlocks([frame]), "the peer's own block");
  assert.equal(ahead.repo.get("k1", Note)?.get("title"), "edited here");
  assert.equal(receiver.repo.get("k1", Note)?.get("title"), "edited here");
  for (const peer of [ahead, receiver]) await peer.db.close();
});

// ── schema versions ─────────────────────────────────────────────────────────────────────────

const TaskV1 = defineSchema({
  ns: "task",
  version: 1,
  fields: { title: { type: "string", required: true } },
});
const TaskV2 = defineSchema({
  ns: "task",
  version: 2,
  fields: { title: { type: "string", required: true }, rank: { type: "number" } },
  upgrade: (old) => ({ ...old, rank: 0 }),
});

test("an item under a schema version not registered here is kept and relayed; reads that cannot type it say so, others are unaffected", async () => {
  const [newer, relayed] = await openPeers(2, { schemas: [TaskV1, TaskV2] });
  const old = await Cairn.open({ schemas: [TaskV1], trust: [newer.db.session.publicKey] });
  const repo = await old.open("/data/items");
  newer.repo.create(TaskV1, { title: "stays v1" }, { key: "k0" });
  newer.repo.create(TaskV1, { title: "becomes v2" }, { key: "k1" });
  assertClean(await repo.importBlocks(await newer.repo.exportBlocks()), "v1 items");
  const untyped = repo.query();
  const withPredicate = repo.query({ where: () => true });
  const typed = repo.query({ schema: TaskV1 });
  assert.equal(untyped.results.length, 2);

  newer.repo.get("k1", TaskV2)!.set("rank", 5);
  newer.repo.create(TaskV2, { title: "new", rank: 1 }, { key: "k2" });
  // Accepted: refusing would stall the author's whole chain for an older peer.
  assertClean(
    await repo.importBlocks(await newer.repo.exportBlocks(repo.versionVector())),
    "v2 items",
  );
  assert.equal(repo.count(), 3);
  assert.deepEqual([...repo.keys()].sort(), ["k0", "k1", "k2"]);
  // Reading such an item says why; every other item reads as before.
  throwsCode(() => repo.get("k2"), "E_UNKNOWN_SCHEMA", "get without a schema");
  throwsCode(() => repo.get("k1", TaskV1)!.get("title"), "E_UNKNOWN_SCHEMA", "a v1 read of v2");
  assert.equal(repo.get("k0")?.get("title"), "stays v1");
  // Queries leave them out, without an error.
  for (
    const query of [untyped, withPredicate, typed, repo.query(), repo.query({ schema: TaskV1 })]
  ) {
    assert.deepEqual(query.results.map((item) => item.key), ["k0"]);
    assert.equal(query.error, undefined);
  }
  // Relayed as they came: a peer that knows v2 reads them.
  assertClean(await relayed.repo.importBlocks(await repo.exportBlocks()), "relayed");
  assert.equal(relayed.repo.get("k2", TaskV2)?.get("rank"), 1);

  // Registering the version brings them in, live queries included.
  old.register(TaskV2);
  assert.equal(repo.get("k1")?.get("title"), "becomes v2");
  assert.deepEqual(untyped.results.map((item) => item.key).sort(), ["k0", "k1", "k2"]);
  assert.deepEqual(withPredicate.results.map((item) => item.key).sort(), ["k0", "k1", "k2"]);
  for (const db of [old, newer.db, relayed.db]) await db.close();
});

// ── strings ─────────────────────────────────────────────────────────────────────────────────

const Doc = defineSchema({
  ns: "doc",
  version: 1,
  fields: {
    title: { type: "string" },
    body: { type: "text" },
    tags: { type: "set" },
    meta: { type: "map" },
  },
});

test("a string with a lone surrogate is refused wherever it would be written; nothing is written", async () => {
  const [writer, peer] = await openPeers(2, { schemas: [Doc] });
  const repo = writer.repo;
  const item = repo.create(Doc, { title: "ok 😀", body: "text 😀" }, { key: "d" });
  const lone = ["a\uD800", "\uDC00b", "\uDFFF\uD800"];
  for (const s of lone) {
    throwsCode(() => repo.create(Doc, { title: "x" }, { key: s }), "E_BAD_ARGUMENT", "key");
    throwsCode(() => repo.create(Doc, { title: s }), "E_WRONG_TYPE", "create string");
    throwsCode(() => item.set("title", s), "E_WRONG_TYPE", "set string");
    throwsCode(() => item.set("body", s), "E_WRONG_TYPE", "set text");
    throwsCode(() => item.update({ tags: new Set(["ok", s]) }), "E_WRONG_TYPE", "set element");
    throwsCode(() => item.set("meta", new Map([[s, 1]])), "E_WRONG_TYPE", "map key");
    throwsCode(() => item.set("meta", new Map([["k", s]])), "E_WRONG_TYPE", "map value");
    throwsCode(() => item.insertText("body", 0, s), "E_WRONG_TYPE", "insertText");
    throwsCode(() => item.replaceText("body", 0, 1, s), "E_WRONG_TYPE", "replaceText");
    throwsCode(() => defineSchema({ ns: s, version: 1, fields: {} }), "E_BAD_SCHEMA", "ns");
    throwsCode(
      () => defineSchema({ ns: "n", version: 1, fields: { [s]: { type: "string" } } }),
      "E_BAD_SCHEMA",
      "field name",
    );
  }
  assert.deepEqual(item.toObject(), { title: "ok 😀", body: "text 😀" });
  assert.equal(repo.count(), 1);
  // What was written reaches a peer whole: no block of it is refused.
  assertClean(await exchange(writer, peer), "writer → peer");
  assert.equal(peer.repo.get("d", Doc)?.get("body"), "text 😀");
  for (const p of [writer, peer]) await p.db.close();
});
