/**
 * The PostgreSQL access rules read again after a notification or a reconnect (postgres_rules.ts),
 * on a fake pool: a malformed row is passed over without stopping the rows after it (a revoke
 * among them must still arrive), reads are retried for as long as the store is open and end once
 * it closes; and `retrying` itself: backoff while told to keep trying, never for a CairnError.
 * On a real cluster: a change retried after its COMMIT's answer was lost is not made again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CairnError, isCairnError } from "../../src/core/errors.ts";
import type { RepositoryRules } from "../../src/sync/server/access.ts";
import { loadDriver, type PostgresPool } from "../../src/sync/server/postgres_pool.ts";
import { migrate } from "../../src/sync/server/postgres_schema.ts";
import { startPostgres } from "../../scripts/lib/postgres.ts";
import { retrying } from "../../src/sync/server/postgres_retry.ts";
import { PostgresRules } from "../../src/sync/server/postgres_rules.ts";
import { waitFor } from "../harness/wait.ts";

const OWNER = "A".repeat(43);
const RULES = { owner: OWNER, members: {}, publicRead: false };

/** A pool whose reads of cairn_rules give `rows()`, or throw what it throws. */
function fakePool(rows: () => Record<string, unknown>[]) {
  const pool = {
    reads: 0,
    query(text: string) {
      assert.match(text, /^SELECT repository, rules FROM cairn_rules/);
      pool.reads++;
      return Promise.resolve().then(() => ({ rows: rows() }));
    },
    connect: () => Promise.reject(new Error("not used")),
    end: () => Promise.resolve(),
  };
  return pool as typeof pool & PostgresPool;
}

function reported(rules: PostgresRules): Map<string, RepositoryRules> {
  const seen = new Map<string, RepositoryRules>();
  rules.onChangedElsewhere((repository, stored) => seen.set(repository, stored));
  return seen;
}

test("reloading every repository's rules passes over a malformed row, and one the server refuses, and reports the rest", async () => {
  const pool = fakePool(() => [
    { repository: "/a", rules: { owner: 7 } },
    { repository: "/b", rules: RULES },
    { repository: "/c", rules: "not rules" },
    { repository: "no path", rules: RULES },
    { repository: "/d", rules: { ...RULES, publicRead: true } },
  ]);
  const rules = new PostgresRules(pool);
  // As the server's reauthorize refuses a repository that no path names (a row edited by hand).
  rules.onChangedElsewhere((repository) => {
    if (!repository.startsWith("/")) throw new CairnError("E_BAD_PATH", repository);
  });
  const seen = reported(rules);
  rules.reloadAll();
  // Before, the refusal stopped the reload: /d (and the other listeners) never heard.
  await waitFor(() => seen.has("/d"), "the rows after the refused one reported");
  assert.deepEqual([...seen.keys()], ["/b", "no path", "/d"]);
  assert.equal(seen.get("/d")!.publicRead, true);
  rules.close();
});

test("a read that fails is tried again until it succeeds, and no longer once closed", async () => {
  let failing = true;
  const pool = fakePool(() => {
    if (failing) throw new Error("connection refused");
    return [{ repository: "/b", rules: RULES }];
  });
  const rules = new PostgresRules(pool);
  const seen = reported(rules);
  rules.changed("/b");
  await waitFor(() => pool.reads >= 3, "tried again");
  failing = false;
  await waitFor(() => seen.has("/b"), "reported once PostgreSQL answers");

  failing = true;
  rules.changed("/b");
  await waitFor(() => pool.reads >= 6, "tried again");
  rules.close();
  const reads = pool.reads;
  await new Promise((resolve) => setTimeout(resolve, 2_500)); // past the longest backoff
  assert.ok(pool.reads <= reads + 1, `${pool.reads - reads} reads after close`);
});

test("retrying backs off while told to keep trying, and never retries a CairnError", async () => {
  let calls = 0;
  const delays: number[] = [];
  const value = await retrying(() => {
    if (++calls < 4) return Promise.reject(new Error("transient"));
    return Promise.resolve("done");
  }, (delay) => (delays.push(delay), true));
  assert.equal(value, "done");
  assert.deepEqual(delays, [50, 100, 200]);

  // Given up: E_IO, the driver's error its cause (it was the driver's plain Error, which a
  // subscribe took for a fault of the connection and closed the whole socket for).
  calls = 0;
  const down = new Error("connect ECONNREFUSED 127.0.0.1:1");
  await assert.rejects(
    retrying(() => (calls++, Promise.reject(down)), () => calls < 3),
    (err) =>
      isCairnError(err, "E_IO") && err.cause === down &&
      err.message === "E_IO: PostgreSQL: connect ECONNREFUSED 127.0.0.1:1",
  );
  assert.equal(calls, 3);

  calls = 0;
  await assert.rejects(
    retrying(() => (calls++, Promise.reject(new CairnError("E_BAD_ARGUMENT", "bad"))), () => true),
    (err) => err instanceof CairnError,
  );
  assert.equal(calls, 1);
});

test("a change retried after its COMMIT's answer was lost is not made twice over a change made in between", async () => {
  await using cluster = await startPostgres();
  const driver = await loadDriver();
  const pool = driver.pool(cluster.url, 4);
  try {
    const client = await pool.connect();
    await migrate(client, () => ({ serverId: "cairn-test", epoch: "e1" })).finally(() =>
      client.release()
    );
    const elsewhere = new PostgresRules(pool); // another server on the same database
    await elsewhere.update("/r", () => RULES);
    const member = "M".repeat(43);
    // The first COMMIT of this server's grant is made, then its answer lost; before the retry,
    // the other server revokes the grant.
    let lost = false;
    const losing: PostgresPool = {
      end: () => pool.end(),
      query: (text, values) => pool.query(text, values),
      connect: async () => {
        const inner = await pool.connect();
        return {
          release: (err) => inner.release(err),
          query: async (text, values) => {
            const result = await inner.query(text, values);
            if (text === "COMMIT" && !lost) {
              lost = true;
              await elsewhere.update("/r", (rules) => ({ ...rules, members: {} }));
              throw new Error("Connection terminated unexpectedly");
            }
            return result;
          },
        };
      },
    };
    const stored = await new PostgresRules(losing).update("/r", (rules) => ({
      ...rules,
      members: { ...rules.members, [member]: "write" },
    }));
    assert.ok(lost, "the answer to a COMMIT was lost");
    assert.deepEqual(stored.members, {}, "the revoke made after the grant stands");
    const { rows } = await pool.query("SELECT rules FROM cairn_rules WHERE repository = '/r'");
    assert.deepEqual((rows[0].rules as RepositoryRules).members, {});
  } finally {
    await pool.end();
  }
});
