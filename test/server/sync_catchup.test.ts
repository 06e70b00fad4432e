/**
 * Subscribing and catching up over real WebSockets: members first, catch-up in frames of at most
 * maxFrame paced by credit, then `synced` with the cursor; a cursor resumes with only what is
 * new (after a server restart too); a cursor of another epoch gets `reset`; a version vector
 * gets exactly the blocks it lacks.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { toBase64Url } from "../../src/core/bytes.ts";
import { Cairn, sync } from "../../src/mod.ts";
import {
  asArrays,
  blocksOf,
  newSession,
  NOTE,
  pushBlocks,
  RawClient,
} from "../harness/sync_client.ts";
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
    // The server's vector names only the sessions the client's did (one the server lacks: none).
    const [stranger, second] = [await newSession(), await RawClient.connect(server.url)];
    const partial = await second.catchUp(REPO, {
      versionVector: { [a.session.session]: 6, [stranger.session]: 3 },
    });
    assert.deepEqual(partial.synced.versionVector, { [a.session.session]: 6 });
    assert.deepEqual(asArrays(partial.blocks), asArrays(fromB));
    await Promise.all([second.close(), stranger.db.close()]);
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

test("sync catch-up: more writers than one members frame holds come in several, and a client trusts them all", async () => {
  const maxFrame = 4096; // the least a client accepts: about 120 writers a frame
  const writers = await Promise.all(Array.from({ length: 300 }, () => newSession()));
  await withSyncServer({ open: true, maxFrame }, async (server) => {
    // One client relays every writer's first block (the server takes blocks of other authors).
    const relay = await RawClient.connect(server.url);
    const pushed = (await Promise.all(writers.map((w) => blocksOf(w, REPO, 1)))).flat();
    await pushBlocks(relay, REPO, pushed, maxFrame);
    await relay.close();

    const reader = await RawClient.connect(server.url);
    reader.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
    reader.send({ type: "credit", repo: REPO, bytes: 1 << 20 });
    const listed: string[] = [];
    let frames = 0;
    while (true) {
      const { frame, bytes } = await reader.nextEntry("members", "blocks", "synced");
      if (frame.type !== "members") break; // every writer is listed before any block
      assert.ok(bytes.length <= maxFrame, `a members frame of ${bytes.length} bytes`);
      listed.push(...frame.writers.map(toBase64Url));
      frames++;
    }
    assert.ok(frames >= 3, `${frames} members frames`);
    assert.deepEqual(listed.sort(), writers.map((w) => toBase64Url(w.publicKey)).sort());
    await reader.close();

    // A database syncing through frames that small trusts every writer: it gets every block.
    const options = { maxFrame, backoff: { initialMs: 5, maxMs: 50 } };
    const db = await Cairn.open({ schemas: [NOTE] });
    const repo = await db.open(REPO);
    const refused: unknown[] = [];
    const first = sync(db, server.url, options);
    first.on("error", (err) => refused.push(err));
    await first.synced();
    await first.close();
    assert.equal(repo.count(), writers.length);
    // Written offline, then synced by a new link (no cursor): this database's version vector of
    // 301 sessions does not fit in a frame, nor does the server's. It subscribes with neither,
    // pushes all it holds, and its writes arrive.
    const offline = repo.create(NOTE, { text: "written offline" });
    await repo.flush();
    const second = sync(db, server.url, options);
    second.on("error", (err) => refused.push(err));
    await second.synced();
    await second.close();
    await db.close();
    assert.deepEqual(refused, []);
    const check = await RawClient.connect(server.url);
    const all = await check.catchUp(REPO, { versionVector: {} });
    assert.equal(all.blocks.length, writers.length + 1, `${offline.key} reached the server`);
    await check.close();
  });
  await Promise.all(writers.map((w) => w.db.close()));
});
