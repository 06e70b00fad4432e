/**
 * The pool the PostgreSQL store opens (src/sync/server/postgres_pool.ts) on a throwaway cluster:
 * a session left idle inside a transaction (a server frozen, or cut off, in the middle of a push)
 * is ended by PostgreSQL, so the row lock it held stops stalling the other servers' pushes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { startPostgres } from "../../scripts/lib/postgres.ts";
import { IDLE_IN_TRANSACTION_MS, loadDriver } from "../../src/sync/server/postgres_pool.ts";

test("postgres pool: a session idle in a transaction is ended, and the row lock it held is free", async () => {
  await using cluster = await startPostgres();
  const driver = await loadDriver();
  const pool = driver.pool(cluster.url, 4, 500); // IDLE_IN_TRANSACTION_MS in production
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
