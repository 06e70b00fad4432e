/**
 * A PostgreSQL repository's cache loaded again (after a failed transaction, or a load) on a fake
 * pool whose reads the test holds: while the new cache is being built, readers — subscriptions
 * catching up or lagging — keep reading the old index, which holds only committed blocks, and
 * never a half-built one (its head going back to 0 made a lagging subscription spin without end).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import type { PooledClient, PostgresPool } from "../../src/sync/server/postgres_pool.ts";
import { PostgresRepository } from "../../src/sync/server/postgres_repository.ts";
import { asArrays, blocksOf, newSession } from "../harness/sync_client.ts";

const REPO = "/data/reloaded";

/** Serves the repository's committed blocks; `hold()` makes the next reads wait for `release`. */
function fakePool(blocks: Uint8Array[]) {
  let gate: Promise<void> | undefined;
  let release = () => {};
  let waiting = 0;
  const pool: PostgresPool = {
    async query(text, values) {
      assert.match(text, /^SELECT position, payload FROM cairn_blocks/);
      waiting++;
      await gate;
      waiting--;
      const [, after, limit] = values as [string, number, number];
      const rows = blocks.slice(after, after + limit).map((payload, i) => ({
        position: after + i + 1,
        payload,
      }));
      return { rows };
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

test("postgres cache: while it is loaded again, readers see the old index whole", async () => {
  const blocks = await blocksOf(await newSession(), REPO, 3);
  const fake = fakePool(blocks);
  const repository = new PostgresRepository(
    REPO,
    "epoch",
    fake.pool,
    await cryptoSuite(),
    () => {},
  );
  await repository.load();
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
