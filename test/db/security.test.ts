/**
 * What a signed database lets in: every block is verified whole before any of it applies. Each
 * attack below must be refused with its typed error, apply nothing, and leave the database fully
 * usable — a local write and a genuine import still work afterwards.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, type CairnErrorCode, defineSchema, type ImportReport, isCairnError } from "cairndb";
import {
  assertClean,
  copyBytes,
  fromBase64Url,
  indexOfBytes,
  joinFrame,
  openPeers,
  type Peer,
  plain,
  signWith,
  snapshot,
  splitFrame,
  utf8,
} from "../harness/peers.ts";

const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    likes: { type: "counter" },
  },
});

const PATH = "/data/notes";

async function peer(name: string, options: { trusted?: boolean; secretKey?: Uint8Array } = {}) {
  const db = await Cairn.open({ ...options, schemas: [Note] });
  return { name, db, repo: await db.open(PATH) } satisfies Peer;
}

/** alice writes, bob trusts alice (and only alice), mallory is a stranger to bob. */
async function cast() {
  const [alice, bob] = await openPeers(2, { schemas: [Note], path: PATH });
  const mallory = await peer("mallory");
  return { alice, bob, mallory };
}

/** One sealed block of `author`: whatever `write` does in one tick. */
async function blockOf(author: Peer, write: () => void): Promise<Uint8Array> {
  const before = author.repo.versionVector();
  write();
  const frames = await author.repo.exportBlocks(before);
  assert.equal(frames.length, 1, "one tick, one block");
  return frames[0];
}

/** Everything `p` holds, as plain data (keys, leaves, values). */
function stateOf(p: Peer) {
  return snapshot(p.repo, []);
}

/** The single rejection of a one-frame import, checked for its code; nothing applied. */
function assertRefused(report: ImportReport, code: CairnErrorCode, index = 0): void {
  assert.equal(report.applied, 0, "nothing applied");
  assert.equal(report.commits, 0);
  assert.equal(report.rejected.length, 1, "one rejection");
  const [rejection] = report.rejected;
  assert.equal(rejection.index, index);
  assert.ok(
    isCairnError(rejection.error, code),
    `expected ${code}, got ${rejection.error?.code}: ${rejection.error?.message}`,
  );
}

/**
 * The victim still works: it can write, and it still applies a genuine block from `author`
 * (which it trusts) — so the refused block left its chains and state intact.
 */
async function assertStillUsable(victim: Peer, author: Peer): Promise<void> {
  const key = `usable-${Math.random().toString(36).slice(2)}`;
  victim.repo.create(Note, { title: "still writable" }, { key });
  assert.equal(victim.repo.get(key, Note)?.get("title"), "still writable");
  await victim.db.flush();

  const fresh = `genuine-${Math.random().toString(36).slice(2)}`;
  author.repo.create(Note, { title: "genuine" }, { key: fresh });
  const report = await victim.repo.importBlocks(
    await author.repo.exportBlocks(victim.repo.versionVector()),
  );
  assertClean(report, `${author.name} → ${victim.name}`);
  assert.ok(report.applied >= 1);
  assert.equal(victim.repo.get(fresh, Note)?.get("title"), "genuine");
}

test("a block with a byte changed inside its signed body is refused (E_BAD_SIGNATURE)", async () => {
  const { alice, bob } = await cast();
  const frame = await blockOf(alice, () => {
    alice.repo.create(Note, { title: "Pay Bob 10" }, { key: "cheque" });
  });
  const { body, signature } = splitFrame(frame);
  const at = indexOfBytes(body, utf8("Pay Bob 10"));
  assert.ok(at >= 0, "the title is in the body");
  const tampered = copyBytes(body);
  tampered.set(utf8("Pay Eve 99"), at); // same length: still a well-formed block

  const before = stateOf(bob);
  let changes = 0;
  bob.repo.on("change", () => changes++);
  assertRefused(
    await bob.repo.importBlocks([joinFrame({ body: tampered, signature })]),
    "E_BAD_SIGNATURE",
  );
  assert.deepEqual(stateOf(bob), before, "nothing of the block applied");
  assert.equal(changes, 0, "no change event");
  assert.equal(bob.repo.has("cheque"), false);

  // The genuine block still applies: the refusal left no trace in the chain.
  assertClean(await bob.repo.importBlocks([frame]), "genuine");
  assert.equal(bob.repo.get("cheque", Note)?.get("title"), "Pay Bob 10");
  await assertStillUsable(bob, alice);
});

test("every single-byte change of a block is refused, never applied, never thrown", async () => {
  const { alice, bob } = await cast();
  const frame = await blockOf(alice, () => {
    alice.repo.create(Note, { title: "original", likes: 3 }, { key: "k" });
    alice.repo.create(Note, { title: "second" }, { key: "k2" });
  });
  const before = stateOf(bob);
  const allowed = new Set<CairnErrorCode>([
    "E_BAD_SIGNATURE",
    "E_CORRUPT_ENCODING",
    "E_BAD_KEY",
    "E_UNTRUSTED_SESSION",
  ]);
  const seen = new Set<string>();
  for (let i = 0; i < frame.length; i++) {
    for (const flip of [0x01, 0x80]) {
      const changed = copyBytes(frame);
      changed[i] ^= flip;
      const report = await bob.repo.importBlocks([changed]);
      assert.equal(report.applied, 0, `byte ${i} ^ ${flip} applied`);
      assert.equal(report.rejected.length, 1, `byte ${i} ^ ${flip} not refused`);
      const code = report.rejected[0].error.code;
      assert.ok(allowed.has(code), `byte ${i} ^ ${flip}: unexpected ${code}`);
      seen.add(code);
    }
  }
  assert.ok(seen.has("E_BAD_SIGNATURE") && seen.has("E_CORRUPT_ENCODING"));
  assert.deepEqual(stateOf(bob), before, "nothing applied");
  assertClean(await bob.repo.importBlocks([frame]), "genuine");
  assert.equal(bob.repo.count(), 2);
  await assertStillUsable(bob, alice);
});

test("a forged signature is refused: signed by another key, claiming the victim's session", async () => {
  const { alice, bob, mallory } = await cast();
  const frame = await blockOf(alice, () => {
    alice.repo.create(Note, { title: "Pay Bob 10" }, { key: "cheque" });
  });
  const { body } = splitFrame(frame);
  const forgedBody = copyBytes(body);
  forgedBody.set(utf8("Pay Mal 99"), indexOfBytes(body, utf8("Pay Bob 10")));
  const malloryKey = mallory.db.exportSecretKey();
  const before = stateOf(bob);

  // 1. The body claims alice's session and public key; mallory signs it with her own key.
  const forged = joinFrame({ body: forgedBody, signature: await signWith(malloryKey, forgedBody) });
  assertRefused(await bob.repo.importBlocks([forged]), "E_BAD_SIGNATURE");

  // 2. The body keeps alice's session id but carries mallory's public key (so her signature
  //    would verify): the session id is not that key's.
  const alicePublic = fromBase64Url(alice.db.session.publicKey);
  const swapped = copyBytes(forgedBody);
  const keyAt = indexOfBytes(swapped, alicePublic);
  assert.ok(keyAt >= 0, "the public key is in the body");
  swapped.set(fromBase64Url(mallory.db.session.publicKey), keyAt);
  const keySwapped = joinFrame({ body: swapped, signature: await signWith(malloryKey, swapped) });
  assertRefused(await bob.repo.importBlocks([keySwapped]), "E_BAD_KEY");

  // 3. A block claiming bob's own session, signed by mallory. A database always lets its own
  //    session's blocks in, so only the signature stands in the way — there and at a peer.
  const bobFrame = await blockOf(bob, () => {
    bob.repo.create(Note, { title: "Pay Bob 10" }, { key: "own" });
  });
  const ownBody = copyBytes(splitFrame(bobFrame).body);
  ownBody.set(utf8("Pay Mal 99"), indexOfBytes(ownBody, utf8("Pay Bob 10")));
  const ownForged = joinFrame({ body: ownBody, signature: await signWith(malloryKey, ownBody) });
  assertRefused(await bob.repo.importBlocks([ownForged]), "E_BAD_SIGNATURE");
  const carol = await peer("carol");
  await carol.db.trust(bob.db.session.publicKey);
  assertRefused(await carol.repo.importBlocks([ownForged]), "E_BAD_SIGNATURE");
  assert.equal(carol.repo.count(), 0);

  assert.deepEqual(stateOf(bob).values, plain({ own: { title: "Pay Bob 10" } }), "bob unchanged");
  assertClean(await bob.repo.importBlocks([frame]), "genuine");
  assert.equal(bob.repo.get("cheque", Note)?.get("title"), "Pay Bob 10");
  assert.notDeepEqual(stateOf(bob), before);
  await assertStillUsable(bob, alice);
});

test("a block by a session that is not trusted is refused (E_UNTRUSTED_SESSION)", async () => {
  const { alice, bob, mallory } = await cast();
  const frame = await blockOf(mallory, () => {
    mallory.repo.create(Note, { title: "spam" }, { key: "spam" });
  });
  const before = stateOf(bob);
  assertRefused(await bob.repo.importBlocks([frame]), "E_UNTRUSTED_SESSION");
  assert.deepEqual(stateOf(bob), before);
  await assertStillUsable(bob, alice);

  // Trust is what was missing: once granted, the very same block applies.
  await bob.db.trust(mallory.db.session.publicKey);
  assertClean(await bob.repo.importBlocks([frame]), "after trust");
  assert.equal(bob.repo.get("spam", Note)?.get("title"), "spam");
});

test("a replayed block counts as a duplicate and applies nothing twice", async () => {
  const { alice, bob } = await cast();
  const create = await blockOf(alice, () => {
    alice.repo.create(Note, { title: "t", likes: 1 }, { key: "k" });
  });
  const bump = await blockOf(alice, () => alice.repo.get("k", Note)!.set("likes", 5));
  let changes = 0;
  bob.repo.on("change", () => changes++);

  const first = await bob.repo.importBlocks([create, bump]);
  assert.deepEqual({ applied: first.applied, commits: first.commits }, { applied: 2, commits: 2 });
  const state = stateOf(bob);
  assert.equal(changes, 2);

  const again = await bob.repo.importBlocks([bump, create, bump]);
  assert.deepEqual(
    { applied: again.applied, commits: again.commits, duplicates: again.duplicates },
    { applied: 0, commits: 0, duplicates: 3 },
  );
  assert.equal(again.rejected.length, 0);
  // Within one import, too.
  const fresh = await blockOf(alice, () => alice.repo.get("k", Note)!.set("likes", 6));
  const twice = await bob.repo.importBlocks([fresh, fresh]);
  assert.deepEqual({ applied: twice.applied, duplicates: twice.duplicates }, {
    applied: 1,
    duplicates: 1,
  });
  assert.equal(changes, 3, "one event per applied commit");
  assert.notDeepEqual(stateOf(bob), state);
  assert.equal(bob.repo.get("k", Note)?.get("likes"), 6, "the counter is not counted twice");
  assert.equal(bob.repo.leaves("k").length, 1);
  await assertStillUsable(bob, alice);
});

test("a fork — two different blocks at one session and seq — is refused (E_CHAIN_FORK)", async () => {
  const { alice, bob } = await cast();
  // A second database acting as alice's session: same secret key, its own history.
  const twin = await peer("alice-twin", { secretKey: alice.db.exportSecretKey() });
  assert.equal(twin.db.session.id, alice.db.session.id);

  const original = await blockOf(alice, () => {
    alice.repo.create(Note, { title: "original" }, { key: "a" });
  });
  const forked = await blockOf(twin, () => {
    twin.repo.create(Note, { title: "forked" }, { key: "b" });
  });
  const forkedNext = await blockOf(twin, () => {
    twin.repo.create(Note, { title: "forked again" }, { key: "c" });
  });

  assertClean(await bob.repo.importBlocks([original]), "original");
  const before = stateOf(bob);
  assertRefused(await bob.repo.importBlocks([forked]), "E_CHAIN_FORK");
  // The fork's next block names the forked block, not the one bob holds.
  assertRefused(await bob.repo.importBlocks([forkedNext]), "E_CHAIN_FORK");
  assert.deepEqual(stateOf(bob), before, "nothing of the fork applied");
  assert.equal(bob.repo.has("b"), false);
  assert.equal(bob.repo.has("c"), false);
  await assertStillUsable(bob, alice);
});

test("an unsigned block from a trusted-mode database is refused by a signed one", async () => {
  const { alice, bob } = await cast();
  const loose = await peer("loose", { trusted: true });
  const frame = await blockOf(loose, () => {
    loose.repo.create(Note, { title: "unsigned" }, { key: "u" });
  });
  assert.equal(splitFrame(frame).signature.length, 0, "trusted mode writes no signature");
  const before = stateOf(bob);

  assertRefused(await bob.repo.importBlocks([frame]), "E_UNTRUSTED_SESSION");
  // Even when its session is trusted, a block without a signature is not accepted.
  await bob.db.trust(loose.db.session.publicKey);
  assertRefused(await bob.repo.importBlocks([frame]), "E_BAD_SIGNATURE");
  assert.deepEqual(stateOf(bob), before);
  await assertStillUsable(bob, alice);
});

test("a block whose commit names a parent the receiver lacks is refused until it arrives", async () => {
  const { alice, bob } = await cast();
  const carol = await peer("carol");
  await alice.db.trust(carol.db.session.publicKey);
  await bob.db.trust(carol.db.session.publicKey);

  const created = await blockOf(carol, () => {
    carol.repo.create(Note, { title: "by carol", likes: 1 }, { key: "k" });
  });
  assertClean(await alice.repo.importBlocks([created]), "carol → alice");
  const edited = await blockOf(alice, () => alice.repo.get("k", Note)!.set("likes", 2));

  // bob gets alice's edit, whose parent is carol's commit, without carol's block.
  const before = stateOf(bob);
  const report = await bob.repo.importBlocks([edited]);
  assert.equal(report.applied, 0);
  assert.equal(report.rejected.length, 1);
  const { error } = report.rejected[0];
  assert.ok(
    isCairnError(error, "E_BAD_COMMIT") || isCairnError(error, "E_CHAIN_GAP"),
    `got ${error.code}`,
  );
  assert.deepEqual(stateOf(bob), before);

  // Once the parent is there, the same block applies.
  assertClean(await bob.repo.importBlocks([created, edited]), "in order");
  assert.equal(bob.repo.get("k", Note)?.get("likes"), 2);
  assert.equal(bob.repo.leaves("k").length, 1);
  await assertStillUsable(bob, alice);
});

test("a block without its predecessor is a chain gap (E_CHAIN_GAP), applied once it arrives", async () => {
  const { alice, bob } = await cast();
  const one = await blockOf(alice, () => alice.repo.create(Note, { title: "1" }, { key: "one" }));
  const two = await blockOf(alice, () => alice.repo.create(Note, { title: "2" }, { key: "two" }));
  const before = stateOf(bob);
  assertRefused(await bob.repo.importBlocks([two]), "E_CHAIN_GAP");
  assert.deepEqual(stateOf(bob), before);

  assertClean(await bob.repo.importBlocks([one]), "block 1");
  assertClean(await bob.repo.importBlocks([two]), "block 2 again");
  assert.deepEqual([...bob.repo.keys()].sort(), ["one", "two"]);
  assert.equal(bob.repo.versionVector()[alice.db.session.id], 2);
  await assertStillUsable(bob, alice);
});

test("in an import of several frames, a bad one is refused and the others still apply", async () => {
  const { alice, bob } = await cast();
  const carol = await peer("carol");
  await bob.db.trust(carol.db.session.publicKey);
  const a1 = await blockOf(alice, () => alice.repo.create(Note, { title: "a1" }, { key: "a1" }));
  const a2 = await blockOf(alice, () => alice.repo.create(Note, { title: "a2" }, { key: "a2" }));
  const c1 = await blockOf(carol, () => {
    carol.repo.create(Note, { title: "written-by-carol" }, { key: "c1" });
  });
  const tampered = copyBytes(c1);
  tampered[indexOfBytes(tampered, utf8("written-by-carol"))] ^= 0x01; // "v" for "w"
  const garbage = new Uint8Array([1, 2, 3]);

  const report = await bob.repo.importBlocks([a1, tampered, garbage, a2]);
  assert.equal(report.applied, 2);
  assert.equal(report.commits, 2);
  assert.deepEqual(report.rejected.map((r) => r.index), [1, 2]);
  assert.ok(isCairnError(report.rejected[0].error, "E_BAD_SIGNATURE"));
  assert.equal(report.rejected[0].session, carol.db.session.id, "the refusal names the session");
  assert.equal(report.rejected[0].seq, 1);
  assert.ok(isCairnError(report.rejected[1].error, "E_CORRUPT_ENCODING"));
  assert.deepEqual([...bob.repo.keys()].sort(), ["a1", "a2"]);

  assertClean(await bob.repo.importBlocks([c1]), "genuine c1");
  assert.deepEqual([...bob.repo.keys()].sort(), ["a1", "a2", "c1"]);
  await assertStillUsable(bob, alice);
});

test("the Cairn object signs nothing for its caller: its internal seams need a token no one else has", async () => {
  const db = await Cairn.open();
  try {
    // Cairn.internals is @internal (not in the public types), but it exists at run time.
    const internals = (Cairn as unknown as { internals(token: object): unknown }).internals;
    for (const token of [{}, Object.prototype, undefined, null]) {
      assert.throws(() => internals(token as object), (err) => isCairnError(err, "E_BAD_ARGUMENT"));
    }
  } finally {
    await db.close();
  }
});
