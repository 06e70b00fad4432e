/**
 * The built-in access rules where they are stored. On PostgreSQL every server shares them: a
 * grant or revocation made through one server reaches the clients connected to another at once;
 * changes made at the same moment through two servers both count; of two first writers racing on
 * two servers, one becomes the owner every server agrees on and the other's push is refused; a change made while a server was
 * cut from PostgreSQL reaches it when it listens again. On files, a change that could not be
 * stored is neither visible nor built on by the next, and a malformed rules file is refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createSyncServer, type SyncServer } from "../../src/server.ts";
import { withPostgresServers } from "../harness/postgres_servers.ts";
import { blocksOf, keyOf, newSession, pushBlocks, RawClient } from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { waitFor } from "../harness/wait.ts";

const REPO = "/data/shared";

function ownerOf(server: SyncServer): string | null {
  return server.access.rules(REPO).owner;
}

test("shared rules: a grant through server A lets B's client read; a revocation through A denies it", async () => {
  await withPostgresServers(async ({ server }) => {
    const [a, b] = [await server("built-in"), await server("built-in")];
    const [owner, reader] = [await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(a.url, owner);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 2));
    await waitFor(() => ownerOf(b) === keyOf(owner), "B learns who owns the repository");

    const readerOnB = await RawClient.connect(b.url, reader);
    readerOnB.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
    assert.equal((await readerOnB.next("denied")).right, "read");

    await a.access.grant(REPO, keyOf(reader), "read");
    assert.equal((await readerOnB.next("reset")).repo, REPO, "B told its client it may read");
    assert.equal((await readerOnB.catchUp(REPO)).blocks.length, 2);
    assert.deepEqual(b.access.rules(REPO).members, { [keyOf(reader)]: "read" });

    await a.access.revoke(REPO, keyOf(reader));
    assert.equal((await readerOnB.next("denied")).right, "read", "B applied A's revocation");
    await Promise.all([ownerClient.close(), readerOnB.close()]);
  });
});

test("shared rules: grants made at once through two servers both count; racing first writers leave one owner", async () => {
  await withPostgresServers(async ({ server }) => {
    const [a, b] = [await server("built-in"), await server("built-in")];
    const [first, second] = [await newSession(), await newSession()];
    const [onA, onB] = [
      await RawClient.connect(a.url, first),
      await RawClient.connect(b.url, second),
    ];
    // Both push their first block at once: each server sees no owner and claims for its own.
    const [[ackA], [ackB]] = await Promise.all([
      pushBlocks(onA, REPO, await blocksOf(first, REPO, 1)),
      pushBlocks(onB, REPO, await blocksOf(second, REPO, 1)),
    ]);
    await waitFor(
      () => ownerOf(a) !== null && ownerOf(a) === ownerOf(b),
      "both servers agree on one owner",
    );
    const winner = ownerOf(a) === keyOf(first) ? ackA : ackB;
    const loser = winner === ackA ? ackB : ackA;
    assert.deepEqual([winner.applied, winner.rejected], [1, []]);
    assert.deepEqual([loser.applied, loser.rejected[0]?.code], [0, "E_FORBIDDEN"]);

    const members = await Promise.all([newSession(), newSession(), newSession(), newSession()]);
    await Promise.all(
      members.map((member, i) => (i % 2 ? a : b).access.grant(REPO, keyOf(member), "read")),
    );
    const expected = Object.fromEntries(members.map((member) => [keyOf(member), "read"]));
    for (const server of [a, b]) {
      await waitFor(
        () => Object.keys(server.access.rules(REPO).members).length === members.length,
        "every grant reaches every server",
      );
      assert.deepEqual(server.access.rules(REPO).members, expected);
    }
    // A third server reads them from PostgreSQL when it starts.
    assert.deepEqual((await server("built-in")).access.rules(REPO).members, expected);
    await Promise.all([onA.close(), onB.close()]);
  });
});

test("shared rules: a change made while a server was cut from PostgreSQL reaches it when it listens again", async () => {
  await withPostgresServers(async ({ cluster, server }) => {
    const [a, b] = [await server("built-in"), await server("built-in")];
    const [owner, reader] = [await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(a.url, owner);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 1));
    await waitFor(() => ownerOf(b) === keyOf(owner), "B learns who owns the repository");

    await cluster.restart();
    // Waits out the restart; B may or may not be listening yet when it commits.
    await a.access.setPublicRead(REPO, true);
    await a.access.grant(REPO, keyOf(reader), "write");
    await waitFor(
      () =>
        b.access.rules(REPO).publicRead && b.access.rules(REPO).members[keyOf(reader)] === "write",
      "B holds the changes made across the restart",
    );
    await ownerClient.close();
  });
});

test("files rules: a change that could not be stored is not kept, and the next change does not carry it", async () => {
  await withTempDirectory("rules", async (dir) => {
    await withSyncServer({ dir }, async (server) => {
      const [refused, accepted] = [await newSession(), await newSession()];
      // A directory where the rules file goes: replacing it fails.
      await mkdir(join(dir, "access.json", "in-the-way"), { recursive: true });
      await assert.rejects(server.access.grant(REPO, keyOf(refused), "read"));
      assert.deepEqual(server.access.rules(REPO).members, {});

      await rm(join(dir, "access.json"), { recursive: true });
      await server.access.grant(REPO, keyOf(accepted), "write");
      assert.deepEqual(server.access.rules(REPO).members, { [keyOf(accepted)]: "write" });
    });
    // What was stored is what a restarted server holds.
    await withSyncServer({ dir }, (server) => {
      assert.deepEqual(Object.values(server.access.rules(REPO).members), ["write"]);
      return Promise.resolve();
    });
  });
});

test("files rules: a rules file with a malformed entry is refused at start, not half read", async () => {
  await withTempDirectory("rules", async (dir) => {
    await writeFile(
      join(dir, "access.json"),
      JSON.stringify({ [REPO]: { owner: null, members: { someone: "admin" }, publicRead: false } }),
    );
    await assert.rejects(createSyncServer({ dir, port: 0 }), { code: "E_NOT_A_LOG" });
  });
});
