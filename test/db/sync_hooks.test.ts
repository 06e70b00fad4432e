/**
 * The engine hooks a sync client builds on: capped sealing seen through a database, the block
 * listener (what entered, from where, with its bytes), per-repository trust, the session's proof
 * signature and the repositories opened and closed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, signAsSession, watchRepositories } from "../../src/db/database.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { fromBase64Url } from "../../src/core/bytes.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { type Repository, sealing } from "../../src/repo/repository.ts";
import { type EnteredBlock, SEALED_HERE } from "../../src/repo/block_listeners.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { OPTIONAL_TITLE } from "../harness/schemas.ts";

const Note = defineSchema(OPTIONAL_TITLE);

async function openDb(trust: string[] = []) {
  return await Cairn.open({ schemas: [Note], trust });
}

/** The internal repository behind `path` of `db`. */
async function repoOf(db: Cairn, path: string): Promise<Repository> {
  await db.open(path);
  let found: Repository | undefined;
  watchRepositories(db, {
    opened: (repo) => {
      if (repo.path === path) found = repo;
    },
    closed: () => {},
  })();
  return found!;
}

test("a large tick is sealed as several blocks under the cap, and a peer imports them all", async () => {
  const saved = sealing.maxBlockBody;
  sealing.maxBlockBody = 2048;
  try {
    const alice = await openDb();
    const bob = await openDb([alice.session.publicKey]);
    const notes = await alice.open("/notes");
    for (let i = 0; i < 200; i++) notes.create(Note, { title: `note ${i}` });
    await notes.flush();
    const frames = await notes.exportBlocks();
    assert.ok(frames.length > 5, `${frames.length} blocks`);
    assert.equal(notes.versionVector()[alice.session.id], frames.length);
    for (const frame of frames) assert.ok(frame.length < 2048 + 200);
    const copy = await bob.open("/notes");
    const report = await copy.importBlocks(frames);
    assert.equal(report.applied, frames.length);
    assert.equal(report.commits, 200);
    assert.equal(copy.count(), 200);
  } finally {
    sealing.maxBlockBody = saved;
  }
});

test("the block listener hears sealed and imported blocks once, with their origin and bytes", async () => {
  const alice = await openDb();
  const bob = await openDb([alice.session.publicKey]);
  const aliceRepo = await repoOf(alice, "/notes");
  const bobRepo = await repoOf(bob, "/notes");
  const heardByAlice: EnteredBlock[] = [];
  const heardByBob: EnteredBlock[] = [];
  aliceRepo.onBlock((block) => heardByAlice.push(block));
  const stop = bobRepo.onBlock((block) => heardByBob.push(block));

  const notes = await alice.open("/notes");
  notes.create(Note, { title: "one" });
  notes.create(Note, { title: "two" });
  await notes.flush();
  notes.create(Note, { title: "three" });
  await notes.flush();
  const frames = await notes.exportBlocks();
  assert.deepEqual(heardByAlice.map((b) => [b.seq, b.origin]), [[1, SEALED_HERE], [
    2,
    SEALED_HERE,
  ]]);
  assert.deepEqual(heardByAlice.map((b) => b.bytes()), frames);

  const origin = { name: "a sync link" };
  await bobRepo.importBlocks(frames, origin);
  await bobRepo.importBlocks(frames, origin); // duplicates: nothing enters
  assert.equal(heardByBob.length, 2);
  assert.ok(heardByBob.every((b) => b.origin === origin && b.session === alice.session.id));
  assert.ok(heardByBob.every((b, i) => b.bytes() === frames[i]), "the imported bytes, not a copy");

  stop();
  (await bob.open("/notes")).create(Note, { title: "by bob" });
  await bob.flush();
  assert.equal(heardByBob.length, 2);
});

test("writers trusted for one repository are trusted there only, and the set is replaced", async () => {
  const alice = await openDb();
  const bob = await openDb();
  const notes = await alice.open("/notes");
  notes.create(Note, { title: "from alice" });
  const frames = await notes.exportBlocks();
  const trusting = await repoOf(bob, "/notes");
  const other = await repoOf(bob, "/other");

  const refused = await trusting.importBlocks(frames);
  assert.ok(isCairnError(refused.rejected[0]?.error, "E_UNTRUSTED_SESSION"));
  trusting.trustWriters(new Set([alice.session.publicKey]));
  assert.equal((await trusting.importBlocks(frames)).applied, 1);
  assert.equal(trusting.count(), 1);
  const elsewhere = await other.importBlocks(frames);
  assert.ok(isCairnError(elsewhere.rejected[0]?.error, "E_UNTRUSTED_SESSION"));

  trusting.trustWriters(new Set());
  notes.create(Note, { title: "later" });
  const later = await notes.exportBlocks(trusting.versionVector());
  const after = await trusting.importBlocks(later);
  assert.ok(isCairnError(after.rejected[0]?.error, "E_UNTRUSTED_SESSION"));
  assert.equal(trusting.count(), 1);
});

test("signAsSession signs with the session key, which the session's public key verifies", async () => {
  const db = await openDb();
  const suite = await cryptoSuite();
  const message = new TextEncoder().encode("a nonce");
  const signature = await signAsSession(db, message);
  const publicKey = fromBase64Url(db.session.publicKey)!;
  assert.ok(await suite.ed25519.verify(publicKey, signature, message));
  assert.ok(!await suite.ed25519.verify(publicKey, signature, new TextEncoder().encode("other")));
  assert.ok(!Object.values(db).includes(signAsSession), "not reachable from the database object");
});

test("watchRepositories tells of open repositories, then each one opened and closed", async () => {
  const db = await openDb();
  await db.open("/a");
  const events: string[] = [];
  const stop = watchRepositories(db, {
    opened: (repo) => events.push(`opened ${repo.path}`),
    closed: (repo) => events.push(`closed ${repo.path}`),
  });
  await db.open("/b");
  await db.open("/b");
  await db.close("/a");
  await db.close();
  assert.deepEqual(events, ["opened /a", "opened /b", "closed /a", "closed /b"]);
  stop();
});
