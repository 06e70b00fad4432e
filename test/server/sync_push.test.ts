/**
 * Pushes over real WebSockets: acks (applied, duplicates, rejected with a code), live fan-out of
 * the exact bytes pushed to every other subscriber with `members` before a new writer's first
 * block, refusals that store and forward nothing, access rules per repository and per block
 * author, and goaway on close.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { encodeBlock, MIN_BLOCK_BYTES, sealBlock, UNBOUND } from "../../src/core/block.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { CLOSE } from "../../src/sync/protocol.ts";
import { joinFrame, splitFrame } from "../harness/peers.ts";
import {
  asArrays,
  blocksOf,
  keyOf,
  newSession,
  NOTE,
  pushBlocks,
  RawClient,
  type TestSession,
} from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";

const REPO = "/data/shared";

test("sync push: acked applied then duplicate; others get the same bytes live, members first", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const [a, b] = [await RawClient.connect(server.url), await RawClient.connect(server.url)];
    const watcher = await RawClient.connect(server.url);
    for (const client of [a, b, watcher]) await client.catchUp(REPO);
    const fromA = await blocksOf(a.session, REPO, 3);
    const [ack] = await pushBlocks(a, REPO, fromA);
    assert.deepEqual(
      { applied: ack.applied, duplicates: ack.duplicates, rejected: ack.rejected },
      { applied: 3, duplicates: 0, rejected: [] },
    );
    assert.equal(ack.position, 3);
    const [again] = await pushBlocks(a, REPO, fromA);
    assert.deepEqual([again.applied, again.duplicates, again.position], [0, 3, 3]);
    for (const other of [b, watcher]) {
      const members = await other.next("members");
      assert.deepEqual(members.writers.map(toBase64Url), [keyOf(a.session)]);
      const live = await other.nextEntry("live");
      assert.deepEqual(
        asArrays(live.frame.type === "live" ? live.frame.frames : []),
        asArrays(fromA),
      );
      // members came before the live frame carrying the new writer's first block.
      const order = other.received.map((entry) => entry.frame.type);
      assert.ok(order.lastIndexOf("members") < order.indexOf("live"));
    }
    const fromB = await blocksOf(b.session, REPO, 1);
    await pushBlocks(b, REPO, fromB);
    const live = await watcher.next("live");
    assert.deepEqual(asArrays(live.frames), asArrays(fromB));
    assert.equal(live.position, 4);
    // The pusher is not sent its own blocks back.
    a.send({ type: "ping", n: 1 });
    await a.next("pong");
    assert.deepEqual(a.pending("live").map((f) => f.type === "live" && f.position), [4]);
    await Promise.all([a.close(), b.close(), watcher.close()]);
  });
});

test("sync push: forged, tampered and non-member blocks are rejected with a code, not stored, not fanned out", async () => {
  await withSyncServer({}, async (server) => {
    const [owner, relay, outsider] = [await newSession(), await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(server.url, owner);
    const mine = await blocksOf(owner, REPO, 2);
    await pushBlocks(ownerClient, REPO, mine.slice(0, 1)); // claims the repository
    assert.equal(server.access.rules(REPO).owner, keyOf(owner));
    await server.access.grant(REPO, keyOf(relay), "write");
    const watcher = await RawClient.connect(server.url, owner);
    await watcher.catchUp(REPO);
    const relayClient = await RawClient.connect(server.url, relay);
    const byOutsider = await blocksOf(outsider, REPO, 1);
    const good = mine[1];
    const { body, signature } = splitFrame(good);
    const forged = joinFrame({ body, signature: splitFrame(byOutsider[0]).signature });
    const tampered = joinFrame({ body, signature: signature.map((x, i) => i === 5 ? x ^ 1 : x) });
    const bodyFlipped = good.slice();
    bodyFlipped[bodyFlipped.length - 80] ^= 0x10;
    const [ack] = await pushBlocks(relayClient, REPO, [
      forged,
      tampered,
      bodyFlipped,
      byOutsider[0],
      new Uint8Array(MIN_BLOCK_BYTES).fill(3), // long enough for a block, but none
      good,
    ]);
    assert.equal(ack.applied, 1);
    assert.deepEqual(ack.rejected.map((r) => r.index), [0, 1, 2, 3, 4]);
    assert.equal(ack.rejected[0].code, "E_BAD_SIGNATURE");
    assert.equal(ack.rejected[1].code, "E_BAD_SIGNATURE");
    assert.ok(
      ["E_BAD_SIGNATURE", "E_CORRUPT_ENCODING"].includes(ack.rejected[2].code),
      ack.rejected[2].code,
    );
    assert.equal(ack.rejected[3].code, "E_FORBIDDEN");
    assert.equal(ack.rejected[4].code, "E_CORRUPT_ENCODING");
    // Only the good block was forwarded and stored.
    const live = await watcher.next("live");
    assert.deepEqual(asArrays(live.frames), asArrays([good]));
    const fresh = await RawClient.connect(server.url, owner);
    const caught = await fresh.catchUp(REPO);
    assert.deepEqual(asArrays(caught.blocks), asArrays(mine));
    assert.deepEqual(caught.members.writers.map(toBase64Url), [keyOf(owner)]);
    await Promise.all([ownerClient.close(), watcher.close(), relayClient.close(), fresh.close()]);
  });
});

test("sync access: a forbidden read is denied and the connection stays usable; a forbidden write is rejected", async () => {
  await withSyncServer({}, async (server) => {
    const [owner, stranger] = [await newSession(), await newSession()];
    const ownerClient = await RawClient.connect(server.url, owner);
    await pushBlocks(ownerClient, REPO, await blocksOf(owner, REPO, 2));
    const client = await RawClient.connect(server.url, stranger);
    client.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
    const denied = await client.next("denied");
    assert.deepEqual(
      [denied.repo, denied.right, denied.code],
      [REPO, "read", "E_FORBIDDEN"],
    );
    const [ack] = await pushBlocks(client, REPO, await blocksOf(stranger, REPO, 1));
    assert.deepEqual([ack.applied, ack.rejected[0]?.code], [0, "E_FORBIDDEN"]);
    // Still connected: its own repository works.
    const own = await client.catchUp("/data/mine");
    assert.equal(own.members.canWrite, true);
    // Public read lets it read, not write.
    await server.access.setPublicRead(REPO, true);
    const reader = await RawClient.connect(server.url, stranger);
    const caught = await reader.catchUp(REPO);
    assert.equal(caught.blocks.length, 2);
    assert.equal(caught.members.canWrite, false);
    // A write grant (the rules persist in the server's directory).
    await server.access.grant(REPO, keyOf(stranger), "write");
    assert.deepEqual(server.access.rules(REPO).members, { [keyOf(stranger)]: "write" });
    const writer = await RawClient.connect(server.url, stranger);
    // Its refused block (seq 1) and a new one.
    await blocksOf(stranger, REPO, 1, 1);
    const all = await (await stranger.db.open(REPO)).exportBlocks();
    const [granted] = await pushBlocks(writer, REPO, all);
    assert.equal(granted.applied, 2);
    await server.access.revoke(REPO, keyOf(stranger));
    assert.deepEqual(server.access.rules(REPO).members, {});
    await Promise.all([ownerClient.close(), client.close(), reader.close(), writer.close()]);
  });
});

test("sync access: the authorize hook decides, with the connection's token", async () => {
  const asked: string[] = [];
  await withSyncServer({
    authorize: ({ token, right, repository }) => {
      asked.push(`${right} ${repository} ${token}`);
      return token === "let-me-in";
    },
  }, async (server) => {
    const refused = await RawClient.connect(server.url, undefined, "wrong");
    refused.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
    assert.equal((await refused.next("denied")).code, "E_FORBIDDEN");
    const allowed = await RawClient.connect(server.url, undefined, "let-me-in");
    const caught = await allowed.catchUp(REPO);
    assert.equal(caught.members.canWrite, true);
    const [ack] = await pushBlocks(allowed, REPO, await blocksOf(allowed.session, REPO, 1));
    assert.equal(ack.applied, 1);
    assert.ok(asked.includes(`write ${REPO} let-me-in`));
    await Promise.all([refused.close(), allowed.close()]);
  });
});

test("sync server: close() sends goaway, answers pending pushes, then closes 1001", async () => {
  let client: RawClient & { session: TestSession } | undefined;
  let pushed: Uint8Array[] = [];
  await withSyncServer({ open: true }, async (server) => {
    client = await RawClient.connect(server.url);
    pushed = await blocksOf(client.session, REPO, 2);
    client.send({ type: "push", repo: REPO, id: 99, frames: pushed });
    // Frames are handled in order: once the ping is answered, the push is in flight.
    client.send({ type: "ping", n: 1 });
    await client.next("pong");
    await server.close();
  });
  const closed = await client!.closed;
  assert.equal(closed.code, CLOSE.goingAway);
  const types = client!.received.map((entry) => entry.frame.type);
  assert.ok(types.includes("goaway"), `got ${types}`);
  const ack = client!.received.find((entry) => entry.frame.type === "ack")?.frame;
  assert.ok(ack?.type === "ack" && ack.applied === 2, "the push before goaway was acked");
});

test("sync push: a block too large to be sent on in a frame is rejected E_TOO_LARGE", async () => {
  const maxFrame = 4096;
  await withSyncServer({ open: true, maxFrame }, async (server) => {
    const client = await RawClient.connect(server.url);
    // The push itself fits (its own overhead is small), but not a live frame's worst case.
    const block = new Uint8Array(maxFrame - 20);
    client.send({ type: "push", repo: REPO, id: 1, frames: [block] });
    const ack = await client.next("ack");
    assert.deepEqual(ack.rejected.map((r) => r.code), ["E_TOO_LARGE"]);
    assert.equal(ack.position, 0);
    await client.close();
  });
});

test("sync push: a reader of one repository cannot replay an author's blocks into another she may write", async () => {
  await withSyncServer({}, async (server) => {
    const [alice, mallory] = [await newSession(), await newSession()];
    const other = "/data/other";
    const aliceClient = await RawClient.connect(server.url, alice);
    await pushBlocks(aliceClient, REPO, await blocksOf(alice, REPO, 2));
    await server.access.setPublicRead(REPO, true);
    // Alice owns /data/other too, and has not written there yet.
    await pushBlocks(aliceClient, other, []);
    await server.access.grant(other, keyOf(alice), "write");
    const reader = await RawClient.connect(server.url, mallory);
    const { blocks } = await reader.catchUp(REPO);
    assert.equal(blocks.length, 2);
    const [replayed] = await pushBlocks(aliceClient, other, blocks); // as if through any writer
    assert.deepEqual(
      [replayed.applied, replayed.rejected.map((r) => r.code)],
      [0, ["E_CHAIN_FORK", "E_CHAIN_GAP"]],
    );
    assert.match(replayed.rejected[0].message, /in \/data\/shared, not in \/data\/other/);
    // Her own first block there is still taken.
    const [own] = await pushBlocks(aliceClient, other, await blocksOf(alice, other, 1));
    assert.deepEqual([own.applied, own.rejected], [1, []]);
    await Promise.all([aliceClient.close(), reader.close()]);
  });
});

for (const boundChainsOnly of [false, true]) {
  test(
    `sync push: a chain begun before chains were bound (prev "") is ${
      boundChainsOnly ? "refused E_FORBIDDEN with boundChainsOnly" : "taken by default"
    }`,
    async () => {
      await withSyncServer({ open: true, boundChainsOnly }, async (server) => {
        const author = await newSession();
        const suite = await cryptoSuite();
        const key = await suite.ed25519.fromSecret(author.db.exportSecretKey());
        const legacy = await sealBlock(
          {
            session: author.session,
            publicKey: author.publicKey,
            seq: 1,
            prev: UNBOUND,
            commits: [{
              session: author.session,
              seq: 1,
              key: "old",
              hlc: 1_790_000_000_000 * 1024,
              parents: [],
              schema: NOTE.id,
              kind: "value",
              value: { text: "written before 2026-11-27" },
            }],
          },
          { key, ed25519: suite.ed25519 },
          suite,
        );
        const client = await RawClient.connect(server.url, author);
        const [ack] = await pushBlocks(client, REPO, [encodeBlock(legacy)]);
        if (boundChainsOnly) {
          assert.deepEqual([ack.applied, ack.rejected.map((r) => r.code)], [0, ["E_FORBIDDEN"]]);
          assert.match(ack.rejected[0].message, /bound to no repository/);
        } else assert.deepEqual([ack.applied, ack.rejected], [1, []]);
        await client.close();
      });
    },
  );
}
