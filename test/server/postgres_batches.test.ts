/**
 * Group commit on the PostgreSQL store, on a fake pool that records each transaction: pushes
 * queued while one transaction runs share the next, but no transaction takes more than its
 * bound of block bytes (the first push of one whatever its size); the rest wait for the next.
 * Unbounded, a queue grown behind one slow transaction was verified under the row lock past
 * PostgreSQL's idle-in-transaction limit, so no attempt of it could ever commit. Also: a
 * subscribe's refresh racing this server's own push.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeBlock } from "../../src/core/block.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { authorizedBlock } from "../../src/sync/server/store.ts";
import type { PooledClient, PostgresPool } from "../../src/sync/server/postgres_pool.ts";
import { MAX_BATCH_BYTES, PostgresRepository } from "../../src/sync/server/postgres_repository.ts";
import { blocksOf, newSession } from "../harness/sync_client.ts";

const REPO = "/data/batched";

/** A pool over one empty repository whose transactions are recorded: the payloads each placed. */
function recordingPool() {
  const payloads: Uint8Array[] = [];
  const transactions: Uint8Array[][] = [];
  let head = 0;
  let gate: Promise<void> | undefined;
  let release = () => {};
  let begun = 0;
  let committed = () => {};
  let headLate = false;
  const query = async (text: string, values: unknown[] = []) => {
    if (text.startsWith("SELECT head FROM cairn_repositories")) {
      const snapshot = head; // the statement's snapshot, taken now
      if (headLate) {
        // Its answer read only after a COMMIT on another connection was answered.
        headLate = false;
        await new Promise<void>((resolve) => committed = resolve);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return { rows: [{ head: String(snapshot) }] };
    }
    if (text.startsWith("SELECT position, ") && text.includes("FROM cairn_blocks")) {
      const after = Number(values[1]);
      const rows = payloads.slice(after).map((payload, i) => ({
        position: String(after + i + 1),
        payload,
      }));
      return { rows: text.includes("session") ? [] : rows };
    }
    if (text.startsWith("SELECT public_key")) return { rows: [] };
    throw new Error(`unexpected query: ${text}`);
  };
  const pool: PostgresPool = {
    query: (text, values) => query(text, values),
    end: () => Promise.resolve(),
    connect: () => {
      const placed: Uint8Array[] = [];
      const client: PooledClient = {
        async query(text, values = []) {
          if (text === "BEGIN") {
            begun++;
            await gate;
          } else if (text.startsWith("INSERT INTO cairn_blocks")) {
            for (let i = 4; i < values.length; i += 6) placed.push(values[i] as Uint8Array);
          } else if (text.startsWith("UPDATE cairn_repositories")) head = Number(values[1]);
          else if (text === "COMMIT") {
            payloads.push(...placed);
            transactions.push(placed);
            setTimeout(committed, 0);
          } else if (text.startsWith("SELECT position, payload")) return query(text, values);
          return { rows: text.includes("FOR UPDATE") ? [{ head: String(head) }] : [] };
        },
        release: () => {},
      };
      return Promise.resolve(client);
    },
  };
  return {
    pool,
    transactions,
    hold() {
      gate = new Promise((resolve) => release = resolve);
    },
    release: () => release(),
    begun: () => begun,
    /** The next head read by the pool takes its snapshot at once, and answers after a COMMIT. */
    answerHeadLate: () => (headLate = true),
  };
}

test("postgres group commit: pushes queued behind a transaction share the next ones, each within its byte bound", async () => {
  const suite = await cryptoSuite();
  const session = await newSession();
  const blocks = await Promise.all(
    (await blocksOf(session, REPO, 12)).map(async (bytes) =>
      authorizedBlock(bytes, await decodeBlock(bytes, suite))
    ),
  );
  const bound = 3 * blocks[1].bytes.length; // MAX_BATCH_BYTES in production: 4 MiB
  const fake = recordingPool();
  const repository = new PostgresRepository(REPO, "epoch", fake.pool, suite, () => {}, bound);
  await repository.load();
  fake.hold();
  const first = repository.apply(blocks.slice(0, 1));
  while (fake.begun() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  // Queued while the first transaction waits: one push of two blocks, then nine of one.
  const queued = [repository.apply(blocks.slice(1, 3))];
  for (const block of blocks.slice(3)) queued.push(repository.apply([block]));
  fake.release();
  const results = await Promise.all([first, ...queued]);
  const positions = results.flatMap((result) =>
    result.outcomes.map((outcome) => outcome.status === "applied" ? outcome.position : -1)
  );
  assert.deepEqual(positions, blocks.map((_, i) => i + 1), "every block placed, in order");
  const sizes = fake.transactions.map((placed) => placed.reduce((n, b) => n + b.length, 0));
  assert.equal(fake.transactions[0].length, 1, "the first transaction took the first push");
  for (const [i, size] of sizes.entries()) {
    assert.ok(size <= bound, `transaction ${i} placed ${size} bytes, over ${bound}`);
  }
  // Group commit still: the eleven queued blocks went in fewer transactions than pushes.
  assert.ok(fake.transactions.length < 1 + queued.length, `${fake.transactions.length}`);
  assert.equal(fake.transactions.flat().length, blocks.length);
  assert.equal(MAX_BATCH_BYTES, 4 << 20);
});

test("postgres refresh: a head read before this server's own commit and answered after it is no restore", async () => {
  const suite = await cryptoSuite();
  const session = await newSession();
  const [bytes] = await blocksOf(session, REPO, 1);
  const fake = recordingPool();
  const repository = new PostgresRepository(REPO, "epoch", fake.pool, suite, () => {});
  await repository.load();
  fake.answerHeadLate();
  // A subscribe's refresh and a push at once, on two connections.
  const refreshed = repository.refresh();
  await repository.apply([authorizedBlock(bytes, await decodeBlock(bytes, suite))]);
  await refreshed; // E_IO "was the database restored?" before: the push moved the index past it
  assert.equal(repository.head(), 1);
});
