/**
 * PostgreSQL failing under a running server, with a fake pool standing for it.
 *
 * A failover to a replica that lacks the last commits: a push whose
 * COMMIT the failover cuts leaves the server's cache stale, and the cache rebuilt from the new
 * primary holds fewer blocks than the positions already told to subscribers. Taken, those
 * positions went to other blocks, and clients resuming from them skipped blocks for good; the
 * rebuild must refuse it (E_IO, "was the database restored?") as a refresh does.
 *
 * A pool cut off past the retry minute while the LISTEN connection stays up: a notification's
 * reading then failed and was dropped, so the server's subscribers never heard of the block
 * until the repository's next push or subscribe.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { postgresFailure } from "../../src/sync/server/postgres_retry.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import type { PooledClient, PostgresPool } from "../../src/sync/server/postgres_pool.ts";
import { PostgresRepository } from "../../src/sync/server/postgres_repository.ts";
import { authorized, blocksOf, newSession } from "../harness/sync_client.ts";
import { waitFor } from "../harness/wait.ts";

const REPO = "/data/failover";

interface Row {
  payload: Uint8Array;
  session: string;
  seq: number;
  publicKey: Uint8Array;
}

/**
 * The committed rows of one repository, answering the queries PostgresRepository makes. With
 * `failover`, the first COMMIT fails and the rows are cut to that many: the new primary.
 */
function fakePostgres(committed: Row[], failover?: number): PostgresPool {
  let failedOver = false;
  const handle = (text: string, values: unknown[] = [], pending: Row[] = []) => {
    if (text.startsWith("SELECT head FROM cairn_repositories")) {
      return { rows: [{ head: String(committed.length) }] };
    }
    if (text.startsWith("SELECT public_key, position FROM cairn_writers")) {
      const first = new Map<string, { public_key: Uint8Array; position: string }>();
      committed.forEach((row, i) => {
        if (!first.has(row.session)) {
          first.set(row.session, { public_key: row.publicKey, position: String(i + 1) });
        }
      });
      return { rows: [...first.values()] };
    }
    if (text.startsWith("SELECT position,")) {
      const [, after, limit] = values as [string, number, number];
      return {
        rows: committed.slice(after, after + limit).map((row, i) => ({
          position: String(after + i + 1),
          session: row.session,
          seq: String(row.seq),
          payload: row.payload,
        })),
      };
    }
    if (text.startsWith("INSERT INTO cairn_blocks")) {
      for (let i = 0; i < values.length; i += 6) {
        pending.push({
          session: values[i + 1] as string,
          seq: values[i + 2] as number,
          payload: values[i + 4] as Uint8Array,
          publicKey: new Uint8Array(),
        });
      }
      return { rows: [] };
    }
    if (text === "COMMIT") {
      if (failover !== undefined && !failedOver) {
        failedOver = true;
        committed.length = failover;
        throw new Error("Connection terminated unexpectedly");
      }
      committed.push(...pending);
      return { rows: [] };
    }
    if (
      text === "BEGIN" || text === "ROLLBACK" ||
      text.startsWith("INSERT INTO cairn_repositories") ||
      text.startsWith("INSERT INTO cairn_writers") || text.startsWith("UPDATE") ||
      text.startsWith("SELECT pg_notify")
    ) {
      return { rows: [] };
    }
    throw new Error(`a query the fake does not know: ${text}`);
  };
  return {
    query: (text, values) => Promise.resolve(handle(text, values)),
    connect: () => {
      const pending: Row[] = [];
      const client = {
        query: (text: string, values?: unknown[]) => Promise.resolve(handle(text, values, pending)),
        release() {},
      };
      return Promise.resolve(client as unknown as PooledClient);
    },
    end: () => Promise.resolve(),
  };
}

for (const cut of ["with no push in flight", "cutting a push's COMMIT"] as const) {
  test(`postgres: a primary behind the positions served (a failover ${cut}) is refused E_IO, the positions kept`, async () => {
    const writer = await newSession();
    const other = await newSession();
    const written = await blocksOf(writer, REPO, 3);
    const [pushed] = await blocksOf(other, REPO, 1);
    const committed = written.map((payload, i) => ({
      payload,
      session: writer.session,
      seq: i + 1,
      publicKey: writer.publicKey,
    }));
    const pool = fakePostgres(committed, cut === "cutting a push's COMMIT" ? 1 : undefined);
    const repo = new PostgresRepository(REPO, "epoch", pool, await cryptoSuite(), () => {});
    try {
      await repo.load();
      assert.equal(repo.head(), 3);
      if (cut === "with no push in flight") committed.length = 1;
      const outcome = await repo.apply(await authorized([pushed])).then(
        (result) => result,
        (err) => err,
      );
      // Before, a rebuild after the failed COMMIT took the shorter history: the push was placed
      // at position 2, which subscribers had been told holds the writer's second block.
      assert.ok(isCairnError(outcome, "E_IO"), String(outcome));
      assert.match((outcome as Error).message, /was the database restored\?/);
      assert.equal(repo.head(), 3);
      const [second] = await repo.readAt([2]);
      assert.deepEqual(second.bytes, written[1]);
    } finally {
      await repo.close();
    }
  });
}

test("postgres: a notification whose reading fails past the retries is read again once PostgreSQL answers, and its block told", async () => {
  const writer = await newSession();
  const written = await blocksOf(writer, REPO, 3);
  const committed = written.slice(0, 2).map((payload, i) => ({
    payload,
    session: writer.session,
    seq: i + 1,
    publicKey: writer.publicKey,
  }));
  const postgres = fakePostgres(committed);
  let down = false;
  let failed = 0;
  const pool: PostgresPool = {
    ...postgres,
    // Past the retry minute, a pool that cannot reach PostgreSQL fails as retrying gives up.
    query: (text, values) => {
      if (!down) return postgres.query(text, values);
      failed++;
      return Promise.reject(postgresFailure(new Error("connect ECONNREFUSED")));
    },
  };
  const repo = new PostgresRepository(REPO, "epoch", pool, await cryptoSuite(), () => {});
  try {
    await repo.load();
    const told: number[] = [];
    repo.onPlacedElsewhere((result) => told.push(...result.placed.map((b) => b.position)));
    // Another server places block 3 and notifies; this server's pool is cut off meanwhile.
    committed.push({
      payload: written[2],
      session: writer.session,
      seq: 3,
      publicKey: writer.publicKey,
    });
    down = true;
    repo.noticed(3);
    await waitFor(() => failed > 0, "the notification read, and failed");
    down = false;
    // Before, nothing read it again: told stayed empty, the head at 2.
    await waitFor(() => told.length > 0, "the block told to subscribers");
    assert.deepEqual(told, [3]);
    assert.equal(repo.head(), 3);
  } finally {
    await repo.close();
  }
});
