import { test } from "node:test";
import assert from "node:assert/strict";
import { type SealedBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import { CairnError } from "../../src/core/errors.ts";
import { HybridClock } from "../../src/core/hlc.ts";
import { defineSchema, SchemaRegistry } from "../../src/core/schema.ts";
import { Repository } from "../../src/repo/repository.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { ALL_TYPES } from "../harness/schemas.ts";
import { trustedRepository } from "../harness/repositories.ts";

const suite = await cryptoSuite();
const Note = defineSchema(ALL_TYPES);

/** A write to storage that ends when the test says: `finish()` or `fail()`. */
interface PendingWrite {
  sealed: SealedBlock;
  finish(): void;
  fail(): void;
  /** Settles (resolved) when the write has ended either way. */
  ended: Promise<void>;
}

/**
 * A signed repository whose storage writes end only when the test ends them, and every block
 * it seals, in order.
 */
async function repositoryWithStorage() {
  const registry = new SchemaRegistry();
  registry.register(Note);
  const key = await suite.ed25519.generate();
  const writes: PendingWrite[] = [];
  const repo = new Repository("/notes", {
    session: await sessionIdFromPublicKey(key.publicKey, suite),
    publicKey: key.publicKey,
    signer: { key, ed25519: suite.ed25519 },
    suite,
    registry,
    clock: new HybridClock(),
    isTrusted: () => true,
    persist: (block) => {
      const written = Promise.withResolvers<void>();
      writes.push({
        sealed: block,
        finish: written.resolve,
        fail: () => written.reject(new CairnError("E_IO", "the disk is full")),
        ended: written.promise.catch(() => {}),
      });
      return written.promise;
    },
    // Every write handed on so far has ended (this stand-in does not write a failed one again).
    persisted: async () => {
      await Promise.all(writes.map((write) => write.ended));
    },
  });
  const write = (n: number) =>
    repo.create(`k${n}`, Note.id, Note.createWire({ title: `note ${n}` }));
  return { repo, writes, write };
}

/** Lets every queued microtask run, and the next task start. */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The items written in each block sealed so far (each is handed to storage at once). */
const blockKeys = (writes: PendingWrite[]) =>
  writes.map(({ sealed }) => sealed.block.commits.map((commit) => commit.key));

test("an idle repository seals a tick's writes when the tick ends", async () => {
  const { writes, write } = await repositoryWithStorage();
  write(1);
  write(2);
  assert.equal(writes.length, 0, "nothing is sealed before the tick ends");
  await nextTask();
  assert.deepEqual(blockKeys(writes), [["k1", "k2"]]);
  writes[0].finish();
  await nextTask();
  write(3);
  await nextTask();
  assert.deepEqual(blockKeys(writes), [["k1", "k2"], ["k3"]], "stored: the next tick's own block");
});

test("ticks that end while a block is being stored are sealed together once it is stored", async () => {
  const { writes, write } = await repositoryWithStorage();
  write(1);
  await nextTask();
  for (let n = 2; n <= 5; n++) {
    write(n);
    await nextTask(); // a tick of its own, ended while block 1 is being written
  }
  assert.deepEqual(blockKeys(writes), [["k1"]], "nothing sealed while block 1 is being written");
  writes[0].finish();
  await nextTask();
  assert.deepEqual(blockKeys(writes), [["k1"], ["k2", "k3", "k4", "k5"]]);
  assert.deepEqual(writes.map(({ sealed }) => sealed.block.seq), [1, 2]);
  assert.equal(writes[1].sealed.block.prev, writes[0].sealed.hash, "the group follows the chain");
});

test("a failed write does not stop sealing: the next group is sealed, and flush writes all", async () => {
  const { repo, writes, write } = await repositoryWithStorage();
  write(1);
  await nextTask();
  write(2);
  await nextTask();
  writes[0].fail();
  await nextTask();
  assert.deepEqual(blockKeys(writes), [["k1"], ["k2"]]);
  write(3);
  const flushing = repo.flush();
  await nextTask();
  assert.deepEqual(blockKeys(writes), [["k1"], ["k2"], ["k3"]]);
  writes[1].finish();
  writes[2].finish();
  await flushing;
  assert.notEqual(repo.snapshot(), undefined, "every write sealed");
});

test("flush seals what waits at once, even while a block is being stored, and resolves once all is persisted", async () => {
  const { repo, writes, write } = await repositoryWithStorage();
  write(1);
  await nextTask();
  write(2);
  write(3);
  let flushed = false;
  const flushing = repo.flush().then(() => (flushed = true));
  await nextTask();
  assert.deepEqual(blockKeys(writes), [["k1"], ["k2", "k3"]]);
  writes[1].finish();
  await nextTask();
  assert.equal(flushed, false, "block 1 is still being written");
  writes[0].finish();
  await flushing;
  assert.equal(flushed, true);
});

test("a repository without storage seals each tick's writes at its end", async () => {
  const repo = trustedRepository("/memory", "in-memory", Note);
  const sealed: number[] = [];
  repo.onBlock((block) => sealed.push(block.seq));
  for (let n = 1; n <= 3; n++) {
    repo.create(`k${n}`, Note.id, Note.createWire({ title: `note ${n}` }));
    await nextTask();
    assert.deepEqual(sealed, Array.from({ length: n }, (_, i) => i + 1), `block ${n} sealed`);
  }
});

// Block listeners (a sync client, a leading tab) hear of a block only once storage holds it: sent
// on earlier and lost here in a crash, it would be sealed again differently at the same place.

/** What the block listeners of `repo` heard: origin and seq of each block, in order. */
function heardBlocks(repo: Repository): string[] {
  const heard: string[] = [];
  repo.onBlock((block) => heard.push(`${String(block.origin)} ${block.seq}`));
  return heard;
}

test("a block sealed here reaches block listeners only once its write has ended well", async () => {
  const { repo, writes, write } = await repositoryWithStorage();
  const heard = heardBlocks(repo);
  write(1);
  await nextTask();
  assert.equal(writes.length, 1, "sealed and handed to storage");
  assert.deepEqual(heard, [], "not announced while being written");
  writes[0].finish();
  await nextTask();
  assert.deepEqual(heard, ["sealed-here 1"]);
});

/** A repository whose first block's write failed, and what its block listeners heard. */
async function withFailedFirstWrite() {
  const storage = await repositoryWithStorage();
  const heard = heardBlocks(storage.repo);
  storage.write(1);
  await nextTask();
  storage.writes[0].fail();
  await nextTask();
  assert.deepEqual(heard, [], "a failed write announces nothing");
  return { ...storage, heard };
}

test("a block whose write failed is announced after a later write succeeds, in order", async () => {
  const { writes, write, heard } = await withFailedFirstWrite();
  write(2);
  await nextTask();
  assert.equal(writes.length, 2);
  writes[1].finish(); // the log writes a failed block again before the next one
  await nextTask();
  assert.deepEqual(heard, ["sealed-here 1", "sealed-here 2"]);
});

test("a flush that succeeds announces every block still waiting", async () => {
  const { repo, heard } = await withFailedFirstWrite();
  await repo.flush();
  assert.deepEqual(heard, ["sealed-here 1"]);
});

test("an imported block reaches block listeners only once its write has ended well", async () => {
  const author = await repositoryWithStorage();
  author.write(1);
  await nextTask();
  author.writes[0].finish();
  const frames = await author.repo.exportBlocks();
  const { repo, writes } = await repositoryWithStorage();
  const heard = heardBlocks(repo);
  const report = await repo.importBlocks(frames, "peer");
  assert.equal(report.applied, 1);
  assert.equal(writes.length, 1, "handed to storage");
  assert.deepEqual(heard, []);
  writes[0].finish();
  await nextTask();
  assert.deepEqual(heard, ["peer 1"]);
});

test("whenQuiet: told at once when nothing waits; else at the end of the storing round that leaves nothing unsealed, before a write made after it; false after as many rounds without one", async () => {
  const { repo, writes, write } = await repositoryWithStorage();
  const told: (boolean | string)[] = [];
  repo.whenQuiet((quiet) => told.push(quiet), 3);
  assert.deepEqual([...told], [true], "idle: at once");

  // A writer that waits for each write and makes the next at once: the round's end is the only
  // moment nothing is unsealed, and the listener sees it before the next write.
  write(1);
  await nextTask();
  repo.whenQuiet(
    (quiet) => told.push(quiet ? `quiet, snapshot ${repo.snapshot() !== undefined}` : "gave up"),
    3,
  );
  const next = repo.flush().then(() => write(2)); // as `await item.commit()` does
  writes[0].finish();
  await next;
  assert.deepEqual([...told], [true, "quiet, snapshot true"]);

  // Writes that never pause: every round ends with the next group sealed at once.
  await nextTask();
  repo.whenQuiet((quiet) => told.push(quiet ? "quiet" : "gave up"), 2);
  for (let round = 1; round <= 2; round++) {
    write(10 + round); // waits behind the round being stored
    await nextTask();
    writes[round].finish();
    await nextTask();
  }
  assert.deepEqual(told.slice(2), ["gave up"], "two rounds, each ending with writes waiting");
  writes[3].finish();
  await nextTask();
});
