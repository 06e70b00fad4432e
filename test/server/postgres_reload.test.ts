/**
 * A PostgreSQL repository's cache loaded again (after a failed transaction, or a load) on a fake
 * pool whose reads the test holds: while the new cache is being built, readers — subscriptions
 * catching up or lagging — keep reading the old index, which holds only committed blocks, and
 * never a half-built one (its head going back to 0 made a lagging subscription spin without end).
 * Opened the first time, its index comes from the rows; the blocks are verified before it first
 * imports (a push).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeBlock } from "../../src/core/block.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { authorizedBlock } from "../../src/sync/server/store.ts";
import type { PooledClient, PostgresPool } from "../../src/sync/server/postgres_pool.ts";
import { PostgresRepository } from "../../src/sync/server/postgres_repository.ts";
import { asArrays, blocksOf, newSession, type TestSession } from "../harness/sync_client.ts";

const REPO = "/data/reloaded";

/**
 * Serves the repository's committed blocks (all of one session, seqs 1, 2, …, its first block
 * its only writer's); `hold()` makes the next reads of blocks wait for `release`.
 */
function fakePool(blocks: Uint8Array[], session: TestSession) {
  let gate: Promise<void> | undefined;
  let release = () => {};
  let waiting = 0;
  const rowsAfter = (after: number, limit: number) =>
    blocks.slice(after, after + limit).map((payload, i) => ({
      position: String(after + i + 1),
      session: session.session,
      seq: String(after + i + 1),
      payload,
    }));
  const pool: PostgresPool = {
    async query(text, values) {
      if (text.startsWith("SELECT head FROM cairn_repositories")) {
        return { rows: [{ head: String(blocks.length) }] };
      }
      if (text.startsWith("SELECT public_key, position FROM cairn_writers")) {
        return { rows: [{ public_key: session.publicKey, position: "1" }] };
      }
      assert.match(text, /^SELECT position, (session, seq, )?payload FROM cairn_blocks/);
      waiting++;
      await gate;
      waiting--;
      const [, after, limit] = values as [string, number, number];
      return { rows: rowsAfter(after, limit) };
    },
    connect: () => Promise.reject(new Error("no transactions here")) as Promise<PooledClient>,
    end: () => Promise.resolve(),
  };
  return {
    pool,
    hold() {
      gate = new Promise((resolve) => release = resolve);
    },
    release: () => release(),
    waiting: () => waiting,
  };
}

async function opened(pool: PostgresPool): Promise<PostgresRepository> {
  const repository = new PostgresRepository(REPO, "epoch", pool, await cryptoSuite(), () => {});
  await repository.load();
  return repository;
}

test("postgres cache: while it is loaded again, readers see the old index whole", async () => {
  const session = await newSession();
  const blocks = await blocksOf(session, REPO, 3);
  const fake = fakePool(blocks, session);
  const repository = await opened(fake.pool);
  assert.equal(repository.head(), 3);
  fake.hold();
  const reloading = repository.load();
  while (fake.waiting() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.equal(repository.head(), 3, "the head does not go back while the new cache is read");
  const read = await repository.readAfter(0, 1 << 20);
  assert.deepEqual(asArrays(read.map((block) => block.bytes)), asArrays(blocks));
  assert.deepEqual(Object.values(await repository.versionVector()), [3]);
  fake.release();
  await reloading;
  assert.equal(repository.head(), 3);
  assert.deepEqual(
    asArrays((await repository.readAfter(0, 1 << 20)).map((block) => block.bytes)),
    asArrays(blocks),
  );
});

test("postgres cache: opened, its blocks are served from their rows before it verifies them; one that fails is E_IO at the next push", async () => {
  const session = await newSession();
  const blocks = await blocksOf(session, REPO, 3);
  const tampered = blocks.map((block) => block.slice());
  tampered[1][tampered[1].length - 1] ^= 1; // the last byte of block 2's signature
  const repository = await opened(fakePool(tampered, session).pool);
  // Opened from the rows: every block readable, block 2 as stored (clients verify it again).
  assert.equal(repository.head(), 3);
  assert.deepEqual(
    asArrays((await repository.readAfter(0, 1 << 20)).map((block) => block.bytes)),
    asArrays(tampered),
  );
  assert.deepEqual(await repository.versionVector(), { [session.session]: 3 });
  const [writer] = await repository.writersAfter(0);
  assert.deepEqual([...writer.publicKey], [...session.publicKey]);
  assert.equal(writer.position, 1);
  await repository.refresh(); // PostgreSQL's head is the index's: nothing to wait for
  // A push waits for the verification, which refused block 2: the cache is loaded again, and
  // fails the same way.
  const next = await blocksOf(session, REPO, 1, 3);
  const sealed = await decodeBlock(next[0], await cryptoSuite());
  await assert.rejects(
    repository.apply([authorizedBlock(next[0], sealed)]),
    (err) => isCairnError(err) && err.code === "E_IO" && /fails verification/.test(err.message),
  );
});

test("postgres cache: a row whose session or seq is not its block's, or a first block with no writer, is E_IO", async () => {
  const session = await newSession();
  const blocks = await blocksOf(session, REPO, 2);
  const swapped = [blocks[1], blocks[0]]; // rows say seq 1, 2; the bytes are 2, 1
  const repository = await opened(fakePool(swapped, session).pool);
  const next = await blocksOf(session, REPO, 1, 2);
  await assert.rejects(
    repository.apply([authorizedBlock(next[0], await decodeBlock(next[0], await cryptoSuite()))]),
    (err) => isCairnError(err) && err.code === "E_IO",
  );
  const stranger = await newSession();
  const unwritten = fakePool(blocks, stranger); // the writers' table names another key only
  const pool: PostgresPool = {
    ...unwritten.pool,
    query: (text, values) =>
      text.includes("cairn_writers")
        ? Promise.resolve({ rows: [] })
        : unwritten.pool.query(text, values),
  };
  await assert.rejects(
    opened(pool),
    (err) => isCairnError(err) && err.code === "E_IO" && /inconsistent at 1/.test(err.message),
  );
});

test("postgres cache: a writer row naming a key that did not sign its session's blocks is E_IO at the open", async () => {
  const session = await newSession();
  const blocks = await blocksOf(session, REPO, 2);
  const stranger = await newSession();
  const fake = fakePool(blocks, session);
  // The writers' table was altered: members would tell clients to trust the stranger's key.
  const pool: PostgresPool = {
    ...fake.pool,
    query: (text, values) =>
      text.includes("cairn_writers")
        ? Promise.resolve({ rows: [{ public_key: stranger.publicKey, position: "1" }] })
        : fake.pool.query(text, values),
  };
  // Refused at the open, before members (read from the index, not verified yet) are served: a
  // subscribe before any push was told the stranger's key.
  await assert.rejects(
    opened(pool),
    (err) => isCairnError(err) && err.code === "E_IO" && /not what its row says/.test(err.message),
  );
});

test("postgres cache: a stored payload that is not a block is E_IO, not its decoder's code (which a client takes as its own block refused for good)", async () => {
  const session = await newSession();
  const blocks = await blocksOf(session, REPO, 3);
  const next = await blocksOf(session, REPO, 1, 3);
  const pushed = () => authorizedBlock(next[0], sealedNext);
  const sealedNext = await decodeBlock(next[0], await cryptoSuite());
  const isUnreadable = (err: unknown) =>
    isCairnError(err) && err.code === "E_IO" && /cannot be read/.test(err.message);
  // Among the rows the cache verifies before its first push.
  const garbled = [blocks[0], new Uint8Array([1, 2, 3, 4, 5]), blocks[2]];
  await assert.rejects(
    (await opened(fakePool(garbled, session).pool)).apply([pushed()]),
    isUnreadable,
  );
  // Among those another server committed since the cache's head.
  const later = [blocks[0], blocks[1]];
  const repository = await opened(fakePool(later, session).pool);
  later.push(new Uint8Array([0x92, 0xc1]));
  await assert.rejects(repository.refresh(), isUnreadable);
});

test("postgres cache: blocks another server placed are taken whatever their stamps say of this server's clock (servers' clocks differ)", async () => {
  // Written, and placed by another server, while the clocks there ran ten minutes ahead of
  // this one: past what a push to this server may be (hlc.ts), but accepted there. (A clock
  // takes Date.now when its database opens.)
  const realNow = Date.now;
  Date.now = () => realNow() + 10 * 60_000;
  let session: TestSession;
  try {
    session = await newSession();
  } finally {
    Date.now = realNow;
  }
  const ahead = await blocksOf(session, REPO, 2);
  const rows: Uint8Array[] = [];
  const repository = await opened(fakePool(rows, session).pool);
  rows.push(...ahead);
  await repository.refresh(); // refused before: E_IO, a stored block "fails verification"
  assert.equal(repository.head(), 2);
  assert.deepEqual(
    asArrays((await repository.readAfter(0, 1 << 20)).map((block) => block.bytes)),
    asArrays(ahead),
  );
});
