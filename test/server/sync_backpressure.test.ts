/**
 * Backpressure: a subscriber that stops reading while many blocks are pushed. The server stops
 * sending it live frames once its socket buffers past the high-water mark, so what the server
 * holds for it stays under the mark plus one frame (measured in the server, not timed); when the
 * client reads again it is brought up to date from the store, gap-free and byte-identical.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { decodeFrame, encodeFrame, type Frame, proofMessage } from "../../src/sync/protocol.ts";
import {
  asArrays,
  helloFrame,
  newSession,
  NOTE,
  pushBlocks,
  RawClient,
} from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";

const REPO = "/data/firehose";
const MAX_FRAME = 64 * 1024;
const HIGH_WATER_MARK = 256 * 1024;
const BLOCKS = 400;

/** A connection whose reading can stop: the kernel's buffers fill, then the server's. */
interface SlowClient {
  send(frame: Frame): void;
  /** Reads frames until `done` holds for what has been received. */
  until(done: () => boolean): Promise<void>;
  readonly frames: Frame[];
  pause(): void;
  resume(): void;
  close(): void;
}

/**
 * On Node, `ws` with its socket paused. On Deno, whose node:net keeps reading a paused socket,
 * a WebSocket spoken over Deno.connect by hand, simply not read while paused.
 */
function connectSlow(url: string): Promise<SlowClient> {
  return "Deno" in globalThis ? connectDenoRaw(url) : connectWs(url);
}

async function connectWs(url: string): Promise<SlowClient> {
  const socket = new WebSocket(url);
  const frames: Frame[] = [];
  let wake: (() => void) | undefined;
  socket.on("message", (data: Buffer) => {
    frames.push(decodeFrame(new Uint8Array(data), 1 << 30));
    wake?.();
  });
  await new Promise((resolve) => socket.once("open", resolve));
  const raw = (socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  return {
    frames,
    send: (frame) => socket.send(encodeFrame(frame)),
    async until(done) {
      while (!done()) await new Promise<void>((resolve) => (wake = resolve));
    },
    pause: () => raw.pause(),
    resume: () => raw.resume(),
    close: () => socket.close(),
  };
}

interface DenoConn {
  read(buffer: Uint8Array): Promise<number | null>;
  write(bytes: Uint8Array): Promise<number>;
  close(): void;
}

async function connectDenoRaw(url: string): Promise<SlowClient> {
  const { hostname, port } = new URL(url);
  const deno = (globalThis as unknown as {
    Deno: { connect(o: { hostname: string; port: number }): Promise<DenoConn> };
  }).Deno;
  const conn = await deno.connect({ hostname, port: Number(port) });
  const request = `GET / HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\n` +
    `Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n` +
    `Sec-WebSocket-Version: 13\r\n\r\n`;
  await conn.write(new TextEncoder().encode(request));
  let pending = new Uint8Array(0);
  const readMore = async () => {
    const chunk = new Uint8Array(1 << 16);
    const n = await conn.read(chunk);
    if (n === null) throw new Error("connection closed");
    const joined = new Uint8Array(pending.length + n);
    joined.set(pending);
    joined.set(chunk.subarray(0, n), pending.length);
    pending = joined;
  };
  // The 101 response ends with an empty line.
  while (!new TextDecoder().decode(pending).includes("\r\n\r\n")) await readMore();
  pending = pending.subarray(new TextDecoder().decode(pending).indexOf("\r\n\r\n") + 4);
  const frames: Frame[] = [];
  const takeFrame = (): boolean => {
    if (pending.length < 2) return false;
    let length = pending[1] & 0x7f;
    let at = 2;
    if (length === 126) [length, at] = [(pending[2] << 8) | pending[3], 4];
    else if (length === 127) {
      length = Number(new DataView(pending.buffer, pending.byteOffset + 2, 8).getBigUint64(0));
      at = 10;
    }
    if (pending.length < at + length) return false;
    if ((pending[0] & 0x0f) === 2) {
      frames.push(decodeFrame(pending.slice(at, at + length), 1 << 30));
    }
    pending = pending.subarray(at + length);
    return true;
  };
  let paused = false;
  return {
    frames,
    send(frame) {
      const payload = encodeFrame(frame);
      const header = payload.length < 126
        ? [0x82, 0x80 | payload.length]
        : payload.length < 65536
        ? [0x82, 0x80 | 126, payload.length >> 8, payload.length & 0xff]
        : [
          0x82,
          0x80 | 127,
          0,
          0,
          0,
          0,
          ...new Uint8Array(new Uint32Array([payload.length]).buffer).reverse(),
        ];
      // A zero mask: masked as the protocol requires, the bytes unchanged.
      const bytes = new Uint8Array([...header, 0, 0, 0, 0, ...payload]);
      void conn.write(bytes);
    },
    async until(done) {
      while (!done()) {
        if (paused) throw new Error("reading while paused");
        if (!takeFrame()) await readMore();
      }
    },
    pause: () => void (paused = true),
    resume: () => void (paused = false),
    close: () => conn.close(),
  };
}

test(
  "sync backpressure: a client that stops reading costs the server at most the high-water mark",
  {
    timeout: 300_000,
  },
  async () => {
    await withSyncServer(
      { open: true, maxFrame: MAX_FRAME, highWaterMark: HIGH_WATER_MARK },
      async (server) => {
        const session = await newSession();
        const slow = await connectSlow(server.url);
        slow.send(helloFrame(session));
        await slow.until(() => slow.frames.some((f) => f.type === "challenge"));
        const challenge = slow.frames.find((f) => f.type === "challenge")!;
        if (challenge.type !== "challenge") throw new Error("no challenge");
        const suite = await cryptoSuite();
        const key = await suite.ed25519.fromSecret(session.db.exportSecretKey());
        const signature = await suite.ed25519.sign(
          key,
          proofMessage(challenge.nonce, challenge.serverId, session.session),
        );
        slow.send({ type: "prove", signature });
        slow.send({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
        slow.send({ type: "credit", repo: REPO, bytes: 1 << 20 });
        await slow.until(() => slow.frames.some((f) => f.type === "synced"));
        // The client stops reading: the kernel's buffers fill, then the server's socket buffer.
        slow.pause();

        const writer = await RawClient.connect(server.url);
        const handle = await writer.session.db.open(REPO);
        for (let i = 0; i < BLOCKS; i++) {
          handle.create(NOTE, { text: `${i} `.padEnd(30_000, "x") });
          await handle.flush(); // one block each
        }
        const pushed = await handle.exportBlocks();
        assert.equal(pushed.length, BLOCKS);
        await pushBlocks(writer, REPO, pushed, MAX_FRAME);
        const stats = server.stats().connections.find((c) => c.session === session.session)!;
        assert.ok(
          stats.maxBufferedAmount >= HIGH_WATER_MARK,
          `the slow client's buffer reached the mark (${stats.maxBufferedAmount} bytes): the test applied pressure`,
        );
        assert.ok(
          stats.maxBufferedAmount <= HIGH_WATER_MARK + MAX_FRAME,
          `at most the mark and one frame buffered for it, got ${stats.maxBufferedAmount}`,
        );
        // Reading again: it catches up from the store, in order, without a gap.
        slow.resume();
        const received = () =>
          slow.frames.flatMap((f) =>
            f.type === "live" ? f.frames : f.type === "blocks" ? f.frames : []
          );
        await slow.until(() => received().length >= pushed.length);
        assert.deepEqual(asArrays(received()), asArrays(pushed));
        const positions = slow.frames.flatMap((f) => f.type === "live" ? [f.position] : []);
        assert.equal(positions.at(-1), BLOCKS);
        slow.close();
        await writer.close();
      },
    );
  },
);
