/**
 * The pool the PostgreSQL store opens (src/sync/server/postgres_pool.ts) on a throwaway cluster:
 * a session left idle inside a transaction (a server frozen, or cut off, in the middle of a push)
 * is ended by PostgreSQL, so the row lock it held stops stalling the other servers' pushes; a
 * PostgreSQL that answers nothing (frozen) fails queries and connects in bounded time, and once it
 * answers again the pool works.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { startPostgres } from "../../scripts/lib/postgres.ts";
import { CairnError } from "../../src/core/errors.ts";
import {
  CONNECT_TIMEOUT_MS,
  IDLE_IN_TRANSACTION_MS,
  inTransaction,
  loadDriver,
  type PooledClient,
  type PostgresPool,
  QUERY_TIMEOUT_MS,
} from "../../src/sync/server/postgres_pool.ts";
import { settledWithin } from "../harness/wait.ts";

test("postgres pool: a session idle in a transaction is ended, and the row lock it held is free", async () => {
  await using cluster = await startPostgres();
  const driver = await loadDriver();
  // IDLE_IN_TRANSACTION_MS in production.
  const pool = driver.pool(cluster.url, 4, { idleInTransactionMs: 500 });
  try {
    const settings = await pool.query("SHOW idle_in_transaction_session_timeout", []);
    assert.equal(settings.rows[0].idle_in_transaction_session_timeout, "500ms");
    await pool.query("CREATE TABLE heads (path text PRIMARY KEY, head bigint)", []);
    await pool.query("INSERT INTO heads VALUES ('/r', 1)", []);
    // A server frozen inside its push: the row locked, nothing more said.
    const frozen = await pool.connect();
    await frozen.query("BEGIN", []);
    await frozen.query("SELECT head FROM heads WHERE path = '/r' FOR UPDATE", []);
    // Another server's push waits for the lock: for good before (no timeout was set).
    const other = await pool.connect();
    try {
      await other.query("BEGIN", []);
      const locked = await other.query("SELECT head FROM heads WHERE path = '/r' FOR UPDATE", []);
      assert.equal(locked.rows[0].head, "1");
      await other.query("COMMIT", []);
    } finally {
      other.release();
    }
    await assert.rejects(frozen.query("COMMIT", []), "the frozen session was ended");
    frozen.release(new Error("ended by the server"));
  } finally {
    await pool.end();
  }
  assert.equal(IDLE_IN_TRANSACTION_MS, 30_000);
});

test("postgres pool: a frozen PostgreSQL fails a query and a connect instead of leaving them waiting; thawed, the pool works", async () => {
  await using cluster = await startPostgres();
  const driver = await loadDriver();
  // QUERY_TIMEOUT_MS and CONNECT_TIMEOUT_MS in production.
  const pool = driver.pool(cluster.url, 2, { queryTimeoutMs: 300, connectTimeoutMs: 300 });
  const listener = driver.connection(cluster.url, { queryTimeoutMs: 300, connectTimeoutMs: 300 });
  try {
    await pool.query("SELECT 1", []); // one connection open, idle in the pool
    await listener.connect();
    const thaw = await cluster.freeze();
    try {
      const asked: [string, () => Promise<unknown>][] = [
        ["a query on an open connection", () => pool.query("SELECT 2", [])],
        ["the listener's query", () => listener.query("SELECT 3")],
        ["a connect", () => driver.connection(cluster.url, { connectTimeoutMs: 300 }).connect()],
      ];
      for (const [what, ask] of asked) {
        const outcome = await settledWithin(ask(), 10_000);
        assert.ok(outcome instanceof Error, `${what}: ${String(outcome)}`);
      }
    } finally {
      thaw();
    }
    // The connection whose query timed out was dropped: the next query gets a working one.
    const rows = await pool.query("SELECT 4 AS n", []);
    assert.equal(rows.rows[0].n, 4);
  } finally {
    await listener.end().catch(() => {});
    await pool.end();
  }
  assert.equal(QUERY_TIMEOUT_MS, 45_000);
  assert.ok(QUERY_TIMEOUT_MS > IDLE_IN_TRANSACTION_MS, "longer than a row lock may be held");
  assert.equal(CONNECT_TIMEOUT_MS, 10_000);
});

test("postgres transactions: a failed query drops its connection without a ROLLBACK (which waited behind it for a second timeout); a refusal rolls back and keeps it", async () => {
  for (
    const [thrown, rollsBack] of [[new Error("Query read timeout"), false], [
      refusal(),
      true,
    ]] as const
  ) {
    const sent: string[] = [];
    let released: unknown = "not released";
    const client: PooledClient = {
      query: (text) => {
        sent.push(text);
        return text === "SELECT head" ? Promise.reject(thrown) : Promise.resolve({ rows: [] });
      },
      release: (err) => (released = err),
    };
    const pool = { connect: () => Promise.resolve(client) } as unknown as PostgresPool;
    await assert.rejects(
      inTransaction(pool, (c) => c.query("SELECT head")),
      (err) => err === thrown,
    );
    assert.deepEqual(
      sent,
      rollsBack ? ["BEGIN", "SELECT head", "ROLLBACK"] : ["BEGIN", "SELECT head"],
    );
    assert.equal(released, rollsBack ? undefined : thrown, "dropped (an error given) or kept");
  }
});

function refusal(): CairnError {
  return new CairnError("E_CHAIN_FORK", "refused");
}
