/**
 * One subscription on a files store, with an outbox whose buffer holds what it is sent until the
 * test drains it: however large a result published to it at once (what another server placed
 * while the PostgreSQL listener was away comes as one), a live client's buffer never holds more
 * than the high-water mark and one frame; the rest is read from the store as it drains, in order
 * and without a gap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeFrame, encodeFrame, type Frame } from "../../src/sync/protocol.ts";
import { openFilesStore } from "../../src/sync/server/files_store.ts";
import { OpenRepository } from "../../src/sync/server/repositories.ts";
import { type Outbox, Subscription } from "../../src/sync/server/subscription.ts";
import { asArrays, authorized, newSession, NOTE } from "../harness/sync_client.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { waitFor } from "../harness/wait.ts";

const REPO = "/data/subscribed";

/** An outbox whose socket sends nothing until drained: its buffer grows with each frame. */
class StalledOutbox implements Outbox {
  readonly frames: Frame[] = [];
  bufferedAmount = 0;
  most = 0;

  send(frame: Frame): number {
    return this.sendEncoded(encodeFrame(frame));
  }

  sendEncoded(bytes: Uint8Array): number {
    this.frames.push(decodeFrame(bytes, 1 << 30));
    this.bufferedAmount += bytes.length;
    this.most = Math.max(this.most, this.bufferedAmount);
    return bytes.length;
  }

  fail(err: unknown): void {
    throw err;
  }

  blocks(): Uint8Array[] {
    return this.frames.flatMap((f) => f.type === "live" || f.type === "blocks" ? f.frames : []);
  }
}

test("a result larger than a live client's buffer has room for is read from the store as it drains", async () => {
  await withTempDirectory("sync-subscription", async (dir) => {
    const store = await openFilesStore(dir);
    const repository = new OpenRepository(await store.openRepository(REPO));
    const limits = { maxFrame: 4096, highWaterMark: 8192, drainPollMs: 2 };
    const outbox = new StalledOutbox();
    const subscription = await Subscription.start(repository, outbox, limits, {
      cursor: null,
      versionVector: {},
      canWrite: true,
    });
    subscription!.addCredit(1 << 20);
    await waitFor(() => outbox.frames.some((f) => f.type === "synced"), "caught up (nothing)");

    // 60 blocks of ~1 KB placed at once, as one result: over seven times the high-water mark.
    const author = await newSession();
    const handle = await author.db.open(REPO);
    for (let i = 0; i < 60; i++) {
      await handle.create(NOTE, { text: `${i} `.padEnd(1000, "x") });
      await handle.flush();
    }
    const frames = await handle.exportBlocks();
    const result = await repository.stored.apply(await authorized(frames));
    repository.publish(result, undefined);
    assert.ok(
      outbox.most <= limits.highWaterMark + limits.maxFrame,
      `${outbox.most} bytes queued at once`,
    );
    // As the client reads, the rest comes, in order, each block once.
    while (outbox.blocks().length < frames.length) {
      outbox.bufferedAmount = 0;
      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(outbox.most <= limits.highWaterMark + limits.maxFrame, `${outbox.most} bytes`);
    }
    assert.deepEqual(asArrays(outbox.blocks()), asArrays(frames));
    subscription!.end();
    await author.db.close();
    await store.close();
  });
});
