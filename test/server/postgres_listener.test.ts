/**
 * The PostgreSQL store's LISTEN connection, on fake connections: one that dies without a word
 * (a NAT or a failover dropping it, no error, no end) is found by its unanswered check, and the
 * listener connects again and says so, so the store re-reads what it may have missed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { StoreListener } from "../../src/sync/server/postgres_listener.ts";
import type { PostgresConnection } from "../../src/sync/server/postgres_pool.ts";
import { waitFor } from "../harness/wait.ts";

/** A connection that LISTENs; once `silent`, its queries are never answered and it says nothing. */
function fakeConnection(log: string[], silent: { now: boolean }): PostgresConnection {
  const name = `connection ${log.filter((line) => line.endsWith("connected")).length + 1}`;
  return {
    connect: () => {
      log.push(`${name} connected`);
      return Promise.resolve();
    },
    query: (text: string) => {
      if (silent.now && text === "SELECT 1") return new Promise(() => {});
      return Promise.resolve({ rows: [] });
    },
    end: () => {
      log.push(`${name} ended`);
      return Promise.resolve();
    },
    on: () => {},
  } as unknown as PostgresConnection;
}

test("postgres listener: a connection dead without a word is found by its check and replaced", async () => {
  const log: string[] = [];
  const silent = { now: false };
  let reconnected = 0;
  const listener = await StoreListener.start(() => fakeConnection(log, silent), {
    blocks: () => {},
    rules: () => {},
    reconnected: () => reconnected++,
  }, 20);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepEqual(log, ["connection 1 connected"], "a live connection answers and is kept");
  silent.now = true;
  await waitFor(() => reconnected === 1, "listening again");
  assert.deepEqual(log.slice(0, 3), [
    "connection 1 connected",
    "connection 1 ended",
    "connection 2 connected",
  ]);
  await listener.close();
});
