/**
 * The PostgreSQL store (src/sync/server/postgres_store.ts) under servers sharing one cluster:
 * acks survive a PostgreSQL restart, a block pushed through one server reaches the subscribers of
 * another live, a cursor given by one server resumes on another, a server that never held a
 * repository catches a client up from PostgreSQL, and two servers given conflicting blocks at the
 * same place of a chain at once apply exactly one (the other is E_CHAIN_FORK, nothing written).
 * Bad arguments and a schema newer than the server are refused with a code.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn } from "../../src/db/database.ts";
import { fromBase64Url } from "../../src/core/bytes.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { createSyncServer, postgresStore } from "../../src/server.ts";
import { withPostgresServers } from "../harness/postgres_servers.ts";
import {
  asArrays,
  blocksOf,
  newSession,
  pushBlocks,
  RawClient,
  type TestSession,
} from "../harness/sync_client.ts";

const REPO = "/data/shared";

test("postgres store: an ack survives a PostgreSQL restart; a fresh server catches up from PostgreSQL", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    const a = await server();
    const writer = await RawClient.connect(a.url);
    const blocks = await blocksOf(writer.session, REPO, 5);
    const [ack] = await pushBlocks(writer, REPO, blocks);
    assert.deepEqual([ack.applied, ack.duplicates, ack.rejected, ack.position], [5, 0, [], 5]);
    await writer.close();
    await a.close();
    await cluster.restart();
    // A server that never held the repository: everything is read from PostgreSQL.
    const b = await server();
    const reader = await RawClient.connect(b.url);
    const caughtUp = await reader.catchUp(REPO);
    assert.deepEqual(asArrays(caughtUp.blocks), asArrays(blocks));
    assert.equal(caughtUp.synced.cursor[1], 5);
    await reader.close();
  });
});

test("postgres store: a push through server A reaches B's subscribers live; A's cursor resumes on B", async () => {
  await withPostgresServers(async ({ server }) => {
    const [a, b] = [await server(), await server()];
    const writer = await RawClient.connect(a.url);
    const watcherOnB = await RawClient.connect(b.url);
    const first = await watcherOnB.catchUp(REPO);
    assert.equal(first.synced.cursor[1], 0);
    const blocks = await blocksOf(writer.session, REPO, 3);
    await pushBlocks(writer, REPO, blocks);
    const live = await watcherOnB.next("live");
    assert.deepEqual(asArrays(live.frames), asArrays(blocks));
    assert.equal(live.position, 3);
    // A reader of A takes a cursor, moves to B, and is sent only what came after it.
    const readerOnA = await RawClient.connect(a.url);
    const onA = await readerOnA.catchUp(REPO);
    await readerOnA.close();
    const more = await blocksOf(writer.session, REPO, 2, 3);
    await pushBlocks(writer, REPO, more);
    const readerOnB = await RawClient.connect(b.url, readerOnA.session);
    const onB = await readerOnB.catchUp(REPO, { cursor: onA.synced.cursor });
    assert.deepEqual(asArrays(onB.blocks), asArrays(more));
    assert.equal(onB.synced.cursor[1], 5);
    await Promise.all([writer.close(), watcherOnB.close(), readerOnB.close()]);
  });
});

/** Two blocks at one session and seq: one session's key in two databases, each writing. */
async function forkedPair(repo: string): Promise<[TestSession, Uint8Array, Uint8Array]> {
  const original = await newSession();
  const twin = await Cairn.open({ secretKey: original.db.exportSecretKey() });
  const [mine] = await blocksOf(original, repo, 1);
  const [theirs] = await blocksOf(
    { db: twin, session: twin.session.id, publicKey: fromBase64Url(twin.session.publicKey)! },
    repo,
    1,
    100,
  );
  return [original, mine, theirs];
}

test("postgres store: conflicting blocks pushed to two servers at once: one applied, one E_CHAIN_FORK", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    const [a, b] = [await server(), await server()];
    for (let round = 0; round < 5; round++) {
      const repo = `${REPO}/fork-${round}`;
      const [session, mine, theirs] = await forkedPair(repo);
      const [onA, onB] = [
        await RawClient.connect(a.url, session),
        await RawClient.connect(b.url, session),
      ];
      const [[ackA], [ackB]] = await Promise.all([
        pushBlocks(onA, repo, [mine]),
        pushBlocks(onB, repo, [theirs]),
      ]);
      const outcomes = [ackA, ackB].map((ack) => [ack.applied, ack.rejected.map((r) => r.code)]);
      assert.deepEqual(
        outcomes.sort((x, y) => Number(y[0]) - Number(x[0])),
        [[1, []], [0, ["E_CHAIN_FORK"]]],
        `round ${round}`,
      );
      // Exactly the winner is stored, at position 1, and the head says so.
      const winner = ackA.applied === 1 ? mine : theirs;
      const reader = await RawClient.connect(a.url);
      assert.deepEqual(asArrays((await reader.catchUp(repo)).blocks), asArrays([winner]));
      await Promise.all([onA.close(), onB.close(), reader.close()]);
      const rows = await countRows(cluster.url, repo);
      assert.deepEqual(rows, { blocks: 1, head: 1 });
    }
  });
});

test("postgres store: a bad URL or pool size is E_BAD_ARGUMENT; a newer schema E_UNSUPPORTED_VERSION", async () => {
  assert.throws(() => postgresStore("mysql://host/db"), (e) => isCairnError(e, "E_BAD_ARGUMENT"));
  assert.throws(
    () => postgresStore({ url: "postgres://host/db", maxConnections: 0 }),
    (e) => isCairnError(e, "E_BAD_ARGUMENT"),
  );
  await withPostgresServers(async ({ cluster, server }) => {
    await (await server()).close(); // creates the schema
    await query(cluster.url, "UPDATE cairn_schema SET version = 99");
    await assert.rejects(
      createSyncServer({ store: postgresStore(cluster.url), port: 0 }),
      (e) => isCairnError(e, "E_UNSUPPORTED_VERSION"),
    );
  });
});

test("postgres store: a server whose role has only the rights docs/deploy.md lists starts and takes pushes", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    await (await server()).close(); // the tables, made by a role that may create them
    await query(cluster.url, "CREATE ROLE cairn_runtime LOGIN");
    const tables = [
      "cairn_schema",
      "cairn_server",
      "cairn_repositories",
      "cairn_blocks",
      "cairn_writers",
      "cairn_rules",
      "cairn_rule_changes",
    ];
    await query(
      cluster.url,
      `GRANT SELECT, INSERT, UPDATE ON ${tables.join(", ")} TO cairn_runtime`,
    );
    await query(cluster.url, "GRANT DELETE ON cairn_rule_changes TO cairn_runtime");
    const url = cluster.url.replace("postgres://postgres@", "postgres://cairn_runtime@");
    // Before: 42501, permission denied for schema public (a CREATE TABLE IF NOT EXISTS).
    const limited = await createSyncServer({ store: postgresStore(url), port: 0, open: true });
    try {
      const client = await RawClient.connect(limited.url);
      const [ack] = await pushBlocks(client, REPO, await blocksOf(client.session, REPO, 2));
      assert.equal(ack.applied, 2);
      await client.close();
    } finally {
      await limited.close();
    }
  });
});

test("postgres store: pushes that place nothing leave no row, whatever paths they name", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    const { url } = await server("built-in");
    const client = await RawClient.connect(url);
    const paths = Array.from({ length: 20 }, (_, i) => `/data/nobody-${i}`);
    for (const [id, path] of paths.entries()) {
      client.send({ type: "push", repo: path, id, frames: [] });
      assert.equal((await client.next("ack")).applied, 0);
    }
    const [forged] = await blocksOf(client.session, "/data/forged", 1);
    forged[forged.length - 1] ^= 1; // refused before the store: its signature
    const [ack] = await pushBlocks(client, "/data/forged", [forged]);
    assert.equal(ack.rejected[0]?.code, "E_BAD_SIGNATURE");
    await client.close();
    // A row each before: a client could fill the table with paths nobody wrote.
    const rows = await query(cluster.url, "SELECT count(*) AS n FROM cairn_repositories", []);
    assert.equal(Number(rows[0].n), 0);
  });
});

test("postgres store: a repository whose rows do not add up is refused alone (denied E_IO); the socket's other repositories sync", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    const repos = ["/data/good1", "/data/bad", "/data/good2"];
    const writer = await RawClient.connect((await server()).url);
    for (const repo of repos) {
      await pushBlocks(writer, repo, await blocksOf(writer.session, repo, 3));
    }
    await writer.close();
    // A row moved (a partial restore, a hand edit): the blocks no longer run 1, 2, 3.
    await query(
      cluster.url,
      "UPDATE cairn_blocks SET position = 7 WHERE repository = '/data/bad' AND position = 3",
    );
    const reader = await RawClient.connect((await server()).url);
    for (const repo of repos) {
      reader.send({ type: "subscribe", repo, cursor: null, versionVector: null });
      reader.send({ type: "credit", repo, bytes: 1 << 24 });
    }
    const denied = await reader.next("denied");
    assert.equal(denied.repo, "/data/bad");
    assert.equal(denied.code, "E_IO");
    assert.match(denied.message, /inconsistent/);
    // Before, the whole socket was closed with an error frame: /data/good2 was never read.
    const synced = new Set<string>();
    while (synced.size < 2) synced.add((await reader.next("synced")).repo);
    assert.deepEqual([...synced].sort(), ["/data/good1", "/data/good2"]);
    await reader.close();
  });
});

test("postgres store: a head moved backwards under a running server (a restore) refuses pushes and subscribes with E_IO instead of leaving a gap", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    const repo = "/data/restored";
    const { url } = await server();
    const writer = await RawClient.connect(url);
    const blocks = await blocksOf(writer.session, repo, 4);
    await pushBlocks(writer, repo, blocks.slice(0, 3));
    // Restored to a point before the last two blocks, the server left running.
    await query(cluster.url, "DELETE FROM cairn_blocks WHERE repository = $1 AND position > 1", [
      repo,
    ]);
    await query(cluster.url, "UPDATE cairn_repositories SET head = 1 WHERE path = $1", [repo]);
    const [ack] = await pushBlocks(writer, repo, blocks.slice(3));
    assert.equal(ack.applied, 0);
    assert.equal(ack.rejected[0]?.code, "E_IO");
    assert.match(ack.rejected[0].message, /restored/);
    // Before, block 4 was placed at position 4 over a head of 1: a gap no server could load.
    assert.deepEqual(await countRows(cluster.url, repo), { blocks: 1, head: 1 });
    const reader = await RawClient.connect(url);
    reader.send({ type: "subscribe", repo, cursor: null, versionVector: null });
    const denied = await reader.next("denied");
    assert.equal(denied.code, "E_IO");
    await reader.close();
    await writer.close();
  });
});

async function query(url: string, text: string, values: unknown[] = []) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function countRows(url: string, repo: string): Promise<{ blocks: number; head: number }> {
  const [blocks] = await query(
    url,
    "SELECT count(*) AS n FROM cairn_blocks WHERE repository = $1",
    [repo],
  );
  const [head] = await query(url, "SELECT head FROM cairn_repositories WHERE path = $1", [repo]);
  return { blocks: Number(blocks.n), head: Number(head.head) };
}
