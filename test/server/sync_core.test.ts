/**
 * The server core without sockets: fake sockets whose buffered amount the test sets. A subscriber
 * whose buffer is at the high-water mark is sent nothing while blocks are pushed; once it drains
 * it is sent what it missed as `live` frames read from the store, gap-free, then live again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { openFilesStore } from "../../src/sync/server/files_store.ts";
import { SyncServerCore } from "../../src/sync/server/server_core.ts";
import type { SocketHandlers, SyncSocket } from "../../src/sync/server/socket.ts";
import { decodeFrame, encodeFrame, type Frame } from "../../src/sync/protocol.ts";
import {
  asArrays,
  blocksOf,
  helloFrame,
  newSession,
  sign,
  type TestSession,
} from "../harness/sync_client.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const REPO = "/data/core";
const HIGH_WATER_MARK = 10_000;

class FakeSocket implements SyncSocket {
  readonly received: Frame[] = [];
  bufferedAmount = 0;
  closed: { code: number; reason: string } | undefined;
  handlers!: SocketHandlers;

  send(bytes: Uint8Array): void {
    this.received.push(decodeFrame(bytes, 1 << 30));
  }

  close(code: number, reason: string): void {
    this.closed = { code, reason };
    this.handlers.closed(); // as a transport reports it
  }

  deliver(frame: Frame): void {
    this.handlers.message(encodeFrame(frame));
  }

  /** Waits (polling the event loop) until `done` holds. */
  async until(done: (received: Frame[]) => boolean): Promise<void> {
    while (!done(this.received)) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  frames<T extends Frame["type"]>(type: T): Extract<Frame, { type: T }>[] {
    return this.received.filter((f) => f.type === type) as Extract<Frame, { type: T }>[];
  }
}

async function connect(core: SyncServerCore, session: TestSession): Promise<FakeSocket> {
  const socket = new FakeSocket();
  socket.handlers = core.accept(socket);
  socket.deliver(helloFrame(session));
  await socket.until((r) => r.some((f) => f.type === "challenge"));
  const challenge = socket.frames("challenge")[0];
  socket.deliver({ type: "prove", signature: await sign(session, challenge) });
  await socket.until((r) => r.some((f) => f.type === "welcome"));
  return socket;
}

test("sync core: a subscriber at the high-water mark is sent nothing, then caught up from the store", async () => {
  await withTempDirectory("sync-core", async (dir) => {
    const store = await openFilesStore(dir);
    const core = await SyncServerCore.create(store, {
      open: true,
      highWaterMark: HIGH_WATER_MARK,
    });
    try {
      const [author, watcher] = [await newSession(), await newSession()];
      const writer = await connect(core, author);
      const reader = await connect(core, watcher);
      reader.deliver({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
      reader.deliver({ type: "credit", repo: REPO, bytes: 1 << 20 });
      await reader.until((r) => r.some((f) => f.type === "synced"));

      const blocks = await blocksOf(author, REPO, 8);
      reader.bufferedAmount = HIGH_WATER_MARK; // full
      for (let i = 0; i < 5; i++) {
        writer.deliver({ type: "push", repo: REPO, id: i, frames: [blocks[i]] });
        await writer.until(() => writer.frames("ack").length === i + 1);
      }
      assert.equal(reader.frames("live").length, 0, "nothing sent past the mark");
      assert.equal(reader.frames("members").length, 1, "not even the new writer");
      assert.equal(core.stats().connections.length, 2);

      reader.bufferedAmount = 0; // drained
      await reader.until(() => reader.frames("live").at(-1)?.position === 5);
      // The writer was announced before its first block, and the blocks came in order.
      const order = reader.received.map((f) => f.type);
      assert.ok(order.lastIndexOf("members") < order.indexOf("live"));
      const sent = reader.frames("live").flatMap((f) => f.frames);
      assert.deepEqual(asArrays(sent), asArrays(blocks.slice(0, 5)));

      // Live again: the next pushes go straight out.
      writer.deliver({ type: "push", repo: REPO, id: 5, frames: blocks.slice(5) });
      await reader.until(() => reader.frames("live").at(-1)?.position === 8);
      assert.deepEqual(
        asArrays(reader.frames("live").flatMap((f) => f.frames)),
        asArrays(blocks),
      );
      assert.equal(reader.closed, undefined);
    } finally {
      await core.close();
    }
  });
});
