/**
 * Subscribing and catching up over real WebSockets: members first, catch-up in frames of at most
 * maxFrame paced by credit, then `synced` with the cursor; a cursor resumes with only what is
 * new (after a server restart too); a cursor of another epoch gets `reset`; a version vector
 * gets exactly the blocks it lacks.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { toBase64Url } from "../../src/core/bytes.ts";
import { asArrays, blocksOf, newSession, pushBlocks, RawClient } from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const REPO = "/data/notes";

test("sync catch-up: small credit and a small maxFrame: every frame fits, blocks arrive in order", async () => {
  const maxFrame = 2048;
  await withSyncServer({ open: true, maxFrame }, async (server) => {
    const writer = await RawClient.connect(server.url);
    const pushed = await blocksOf(writer.session, REPO, 40);
    await pushBlocks(writer, REPO, pushed, maxFrame);
    const reader = await RawClient.connect(server.url);
    reader.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
    const members = await reader.next("members");
    assert.deepEqual(asArrays(members.writers), asArrays([writer.session.publicKey]));
    assert.equal(members.canWrite, true);
    const received: Uint8Array[] = [];
    let frames = 0;
    while (true) {
      // One byte of credit buys exactly one frame: nothing more comes until the next grant.
      reader.send({ type: "credit", repo: REPO, bytes: 1 });
      const entry = await reader.nextEntry("blocks", "synced");
      if (entry.frame.type === "synced") {
        assert.deepEqual(entry.frame.cursor[1], pushed.length);
        break;
      }
      frames++;
      assert.ok(entry.bytes.length <= maxFrame, `a blocks frame of ${entry.bytes.length} bytes`);
      if (entry.frame.type === "blocks") received.push(...entry.frame.frames);
      reader.send({ type: "ping", n: frames });
      await reader.next("pong");
      assert.equal(reader.pending("blocks").length, 0, "no frame without credit");
    }
    assert.ok(frames > 1, `${frames} frames: the catch-up was split`);
    assert.deepEqual(asArrays(received), asArrays(pushed));
    await writer.close();
    await reader.close();
  });
});

test("sync catch-up: a cursor resumes with only the new blocks, after a restart too; another epoch is reset", async () => {
  const first = await newSession();
  await withTempDirectory("sync-catchup", async (dir) => {
    let cursor: readonly [string, number] = ["", 0];
    let before: Uint8Array[] = [];
    await withSyncServer({ open: true, dir }, async (server) => {
      const writer = await RawClient.connect(server.url, first);
      before = await blocksOf(first, REPO, 5);
      await pushBlocks(writer, REPO, before);
      const reader = await RawClient.connect(server.url);
      const caught = await reader.catchUp(REPO);
      assert.deepEqual(asArrays(caught.blocks), asArrays(before));
      cursor = caught.synced.cursor;
      assert.equal(cursor[1], 5);
      const more = await blocksOf(first, REPO, 3, 5);
      await pushBlocks(writer, REPO, more);
      const again = await RawClient.connect(server.url);
      const resumed = await again.catchUp(REPO, { cursor });
      assert.deepEqual(
        asArrays(resumed.blocks),
        asArrays(more),
        "only the blocks after the cursor",
      );
      assert.deepEqual(resumed.members.writers, [], "no writer added after the cursor");
      assert.equal(resumed.synced.versionVector, null);
      cursor = resumed.synced.cursor;
      await Promise.all([writer.close(), reader.close(), again.close()]);
    });
    // A new server on the same directory: the same epoch and positions.
    await withSyncServer({ open: true, dir }, async (server) => {
      const writer = await RawClient.connect(server.url, first);
      const later = await blocksOf(first, REPO, 2, 8);
      await pushBlocks(writer, REPO, later);
      const reader = await RawClient.connect(server.url);
      const resumed = await reader.catchUp(REPO, { cursor });
      assert.deepEqual(asArrays(resumed.blocks), asArrays(later));
      assert.deepEqual(resumed.synced.cursor, [cursor[0], 10]);
      // Positions are stable: a full catch-up is the same blocks in the same order as before.
      const full = await (await RawClient.connect(server.url)).catchUp(REPO);
      assert.deepEqual(asArrays(full.blocks.slice(0, 5)), asArrays(before));
      // Another epoch, and a position past the head, are reset.
      reader.send({
        type: "subscribe",
        repo: REPO,
        cursor: ["other-epoch", 3],
        versionVector: null,
      });
      assert.equal((await reader.next("reset")).repo, REPO);
      reader.send({ type: "subscribe", repo: REPO, cursor: [cursor[0], 11], versionVector: null });
      assert.equal((await reader.next("reset")).repo, REPO);
      await Promise.all([writer.close(), reader.close()]);
    });
  });
});

test("sync catch-up: a version vector gets exactly the blocks it lacks, and the server's vector", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const [a, b] = [await RawClient.connect(server.url), await RawClient.connect(server.url)];
    const fromA = await blocksOf(a.session, REPO, 6);
    const fromB = await blocksOf(b.session, REPO, 4);
    await pushBlocks(a, REPO, fromA);
    await pushBlocks(b, REPO, fromB);
    const reader = await RawClient.connect(server.url);
    const caught = await reader.catchUp(REPO, {
      versionVector: { [a.session.session]: 4, [b.session.session]: 1 },
    });
    assert.deepEqual(asArrays(caught.blocks), asArrays([...fromA.slice(4), ...fromB.slice(1)]));
    assert.deepEqual(caught.synced.versionVector, {
      [a.session.session]: 6,
      [b.session.session]: 4,
    });
    assert.equal(caught.synced.cursor[1], 10);
    // A vector catch-up lists every writer: the client trusts exactly these.
    const writers = caught.members.writers.map((key) => toBase64Url(key)).sort();
    assert.deepEqual(
      writers,
      [a.session.db.session.publicKey, b.session.db.session.publicKey].sort(),
    );
    await Promise.all([a.close(), b.close(), reader.close()]);
  });
});

test("sync catch-up: blocks pushed while a client catches up reach it once, without a gap", async () => {
  await withSyncServer({ open: true, maxFrame: 4096 }, async (server) => {
    const writer = await RawClient.connect(server.url);
    const all = await blocksOf(writer.session, REPO, 30);
    await pushBlocks(writer, REPO, all.slice(0, 20), 4096);
    const reader = await RawClient.connect(server.url);
    reader.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
    await reader.next("members");
    reader.send({ type: "credit", repo: REPO, bytes: 1 });
    await reader.next("blocks");
    // Pushed mid catch-up: part of the catch-up, then live.
    await pushBlocks(writer, REPO, all.slice(20, 25), 4096);
    reader.send({ type: "credit", repo: REPO, bytes: 1 << 20 });
    const synced = await reader.next("synced");
    assert.equal(synced.cursor[1], 25);
    await pushBlocks(writer, REPO, all.slice(25), 4096);
    const live = await reader.next("live");
    assert.equal(live.position, 30);
    const received = reader.received.flatMap(({ frame }) =>
      frame.type === "blocks" || frame.type === "live" ? frame.frames : []
    );
    assert.deepEqual(asArrays(received), asArrays(all));
    await Promise.all([writer.close(), reader.close()]);
  });
});
