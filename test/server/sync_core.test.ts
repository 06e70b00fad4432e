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
import { CLOSE, decodeFrame, encodeFrame, type Frame } from "../../src/sync/protocol.ts";
import { unansweredLimit } from "../../src/sync/server/connection.ts";
import { MIN_BLOCK_BYTES } from "../../src/core/block.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
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

/** A server core on a files store in a directory of its own, closed after `run`. */
async function withCore(
  options: Parameters<typeof SyncServerCore.create>[1],
  run: (core: SyncServerCore) => Promise<void>,
): Promise<void> {
  await withTempDirectory("sync-core", async (dir) => {
    const core = await SyncServerCore.create(await openFilesStore(dir), options);
    try {
      await run(core);
    } finally {
      await core.close();
    }
  });
}

test("sync core: a subscriber at the high-water mark is sent nothing, then caught up from the store", async () => {
  await withCore({
    open: true,
    highWaterMark: HIGH_WATER_MARK,
  }, async (core) => {
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
  });
});

test("sync core: a client that reads nothing is not served, and is closed once it sends too much", async () => {
  const config = { highWaterMark: HIGH_WATER_MARK, maxFrame: 4096 };
  await withCore({ open: true, ...config }, async (core) => {
    const author = await newSession();
    const writer = await connect(core, author);
    const blocks = await blocksOf(author, REPO, 1);
    writer.deliver({ type: "push", repo: REPO, id: 0, frames: blocks });
    await writer.until(() => writer.frames("ack").length === 1);
    writer.bufferedAmount = 2 * HIGH_WATER_MARK + 1; // it stopped reading
    const limit = unansweredLimit(config);
    const ping = encodeFrame({ type: "ping", n: 1 }).length;
    for (let sent = 0; sent + ping <= limit; sent += ping) {
      writer.deliver({ type: "ping", n: 1 });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(writer.frames("pong").length, 0, "nothing handled while it reads nothing");
    assert.equal(writer.closed, undefined, "up to the limit, what it sends waits");
    writer.deliver({ type: "ping", n: 2 });
    // (Read anew: the assertion above narrowed the property's type.)
    assert.equal((writer as FakeSocket).closed?.code, CLOSE.tooLarge);
    assert.equal(writer.frames("error").at(-1)?.code, "E_TOO_LARGE");
  });
});

test("sync core: a client answered as it reads may send far more than the limit", async () => {
  const config = { highWaterMark: HIGH_WATER_MARK, maxFrame: 4096 };
  await withCore({ open: true, ...config }, async (core) => {
    const author = await newSession();
    const writer = await connect(core, author);
    const blocks = await blocksOf(author, REPO, 250);
    const limit = unansweredLimit(config);
    let sent = 0;
    for (let i = 0; i * 10 < blocks.length; i++) {
      const frames = blocks.slice(i * 10, i * 10 + 10);
      writer.deliver({ type: "push", repo: REPO, id: i, frames });
      sent += frames.reduce((n, block) => n + block.length, 0);
      await writer.until(() => writer.frames("ack").length === i + 1);
    }
    assert.ok(sent > limit, `${sent} bytes pushed, limit ${limit}`);
    assert.equal(writer.closed, undefined);
    assert.equal(writer.frames("ack").reduce((n, ack) => n + ack.applied, 0), blocks.length);
  });
});

test("sync core: only a push holding a block claims a repository; too many bins that are not blocks close", async () => {
  await withCore({ highWaterMark: HIGH_WATER_MARK }, async (core) => {
    const [squatter, author] = [await newSession(), await newSession()];
    const bad = await connect(core, squatter);
    const [theirs] = await blocksOf(squatter, REPO, 1);
    const forged = theirs.slice();
    forged[forged.length - 1] ^= 1; // the signature's last byte
    bad.deliver({ type: "push", repo: REPO, id: 0, frames: [] });
    bad.deliver({ type: "push", repo: REPO, id: 1, frames: [new Uint8Array(200)] });
    bad.deliver({ type: "push", repo: REPO, id: 2, frames: [forged] });
    await bad.until(() => bad.frames("ack").length === 3);
    assert.equal(bad.frames("ack")[1].rejected[0].code, "E_CORRUPT_ENCODING");
    assert.equal(bad.frames("ack")[2].rejected[0].code, "E_BAD_SIGNATURE");
    assert.equal(core.access.rules(REPO).owner, null, "no verified block, no claim");
    const good = await connect(core, author);
    good.deliver({ type: "push", repo: REPO, id: 0, frames: await blocksOf(author, REPO, 1) });
    await good.until(() => good.frames("ack").length === 1);
    assert.equal(good.frames("ack")[0].applied, 1);
    assert.equal(core.access.rules(REPO).owner, toBase64Url(author.publicKey));
    // Bins that are not blocks cost a refusal each: a connection gets a bounded number.
    const garbage = Array.from({ length: 1100 }, (_, i) => new Uint8Array(MIN_BLOCK_BYTES).fill(i));
    bad.deliver({ type: "push", repo: "/data/other", id: 3, frames: garbage });
    await bad.until(() => bad.closed !== undefined);
    assert.equal(bad.closed?.code, CLOSE.protocol);
    assert.equal(bad.frames("ack").length, 3, "no ack of a thousand refusals");
  });
});

test("sync core: a push of bins too short to be blocks is refused as it arrives, not held until answered", async () => {
  // Held decoded, a frame of empty bins costs a view each: a hundred times its bytes, and the
  // server holds what a client sends until it answers (a client reading nothing is not answered).
  const config = { highWaterMark: HIGH_WATER_MARK, maxFrame: 1 << 20 };
  await withCore({ open: true, ...config }, async (core) => {
    const client = await connect(core, await newSession());
    client.bufferedAmount = 2 * HIGH_WATER_MARK + 1; // it reads nothing: nothing is answered
    const tiny = Array.from({ length: 100_000 }, () => new Uint8Array(0));
    client.deliver({ type: "push", repo: REPO, id: 0, frames: tiny });
    assert.equal(client.closed?.code, CLOSE.protocol, "closed at once, not queued");
    const error = client.frames("error").at(-1);
    assert.equal(error?.code, "E_PROTOCOL");
    assert.match(error?.message ?? "", new RegExp(`at least ${MIN_BLOCK_BYTES} bytes`));
  });
});

test("sync core: a connection pushing over a thousand forged blocks is closed; its genuine blocks stay", async () => {
  await withCore({ open: true, highWaterMark: HIGH_WATER_MARK }, async (core) => {
    const forger = await newSession();
    const socket = await connect(core, forger);
    const [genuine] = await blocksOf(forger, REPO, 1);
    const forged = genuine.slice();
    forged[forged.length - 1] ^= 1; // the signature's last byte
    // Each forged block costs the server a signature check and a refusal: 900 are answered...
    for (let id = 0; id < 3; id++) {
      socket.deliver({ type: "push", repo: REPO, id, frames: Array(300).fill(forged) });
      await socket.until(() => socket.frames("ack").length === id + 1);
      assert.equal(socket.frames("ack")[id].rejected.length, 300);
      assert.ok(socket.frames("ack")[id].rejected.every((r) => r.code === "E_BAD_SIGNATURE"));
    }
    // ...the push that takes them over 1,024 is not: the connection is closed.
    socket.deliver({
      type: "push",
      repo: REPO,
      id: 3,
      frames: [...Array(299).fill(forged), genuine],
    });
    await socket.until(() => socket.closed !== undefined || socket.frames("ack").length > 3);
    assert.equal(socket.frames("ack").length, 3, "the push over the limit is not answered");
    assert.equal(socket.closed?.code, CLOSE.protocol);
    // The genuine block of that push was accepted all the same.
    const again = await connect(core, forger);
    again.deliver({ type: "push", repo: REPO, id: 0, frames: [genuine] });
    await again.until(() => again.frames("ack").length === 1);
    assert.deepEqual([again.frames("ack")[0].applied, again.frames("ack")[0].duplicates], [0, 1]);
  });
});

/** `bytes` with every occurrence of the ASCII text `from` replaced by `to` (of the same length). */
function replaceText(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const [a, b] = [new TextEncoder().encode(from), new TextEncoder().encode(to)];
  const out = bytes.slice();
  for (let i = 0; i + a.length <= out.length; i++) {
    if (a.every((byte, j) => out[i + j] === byte)) out.set(b, i);
  }
  return out;
}

test("sync core: a block naming another session than its key's is refused before rights are asked", async () => {
  const [alice, mallory] = [await newSession(), await newSession()];
  const asked: string[] = [];
  await withCore({
    highWaterMark: HIGH_WATER_MARK,
    // An app that decides by session: Alice may write, nobody else.
    authorize: ({ session, right }) => {
      if (right === "write") asked.push(session);
      return right === "read" || session === alice.session;
    },
  }, async (core) => {
    const socket = await connect(core, mallory);
    const [own] = await blocksOf(mallory, REPO, 1);
    const posing = replaceText(own, mallory.session, alice.session);
    socket.deliver({ type: "push", repo: REPO, id: 0, frames: [posing] });
    await socket.until(() => socket.frames("ack").length === 1);
    assert.equal(socket.frames("ack")[0].rejected[0]?.code, "E_BAD_KEY");
    assert.deepEqual(asked, [], "the hook was not asked for Alice's session with Mallory's key");
    // Mallory's own block is asked for Mallory's session, and refused.
    socket.deliver({ type: "push", repo: REPO, id: 1, frames: [own] });
    await socket.until(() => socket.frames("ack").length === 2);
    assert.equal(socket.frames("ack")[1].rejected[0]?.code, "E_FORBIDDEN");
    assert.deepEqual(asked, [mallory.session]);
  });
});

test("sync core: a connection holds at most maxSubscriptions repositories, and remembers at most as many refused", async () => {
  const readable = (repo: string) => !repo.startsWith("/private/");
  let reads = 0;
  await withCore({
    highWaterMark: HIGH_WATER_MARK,
    maxSubscriptions: 3,
    authorize: ({ repository, right }) => {
      if (right === "read") reads++;
      return readable(repository);
    },
  }, async (core) => {
    const socket = await connect(core, await newSession());
    const subscribe = (repo: string) =>
      socket.deliver({ type: "subscribe", repo, cursor: null, versionVector: null });
    for (const repo of ["/a", "/b", "/c", "/d"]) subscribe(repo);
    // A subscription taken is answered with its writers (`members`).
    await socket.until(() =>
      socket.frames("members").length === 3 && socket.frames("denied").length === 1
    );
    const denied = socket.frames("denied")[0];
    assert.deepEqual([denied.repo, denied.right, denied.code], ["/d", "read", "E_TOO_LARGE"]);
    // One let go: the next subscribe is taken.
    socket.deliver({ type: "unsubscribe", repo: "/a" });
    subscribe("/d");
    await socket.until(() => socket.frames("members").some((frame) => frame.repo === "/d"));
    // Refused repositories are asked about again at each reauthorize: at most three of them.
    socket.deliver({ type: "unsubscribe", repo: "/b" });
    socket.deliver({ type: "unsubscribe", repo: "/c" });
    socket.deliver({ type: "unsubscribe", repo: "/d" });
    for (let i = 0; i < 50; i++) subscribe(`/private/${i}`);
    await socket.until(() => socket.frames("denied").length === 51);
    reads = 0;
    core.reauthorize();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(reads, 3, "the three refused last, not fifty");
  });
});

test("sync core: the hook is never asked about a writer whose key a pushed block does not prove", async () => {
  const [alice, mallory] = [await newSession(), await newSession()];
  const asked: string[] = [];
  await withCore({
    highWaterMark: HIGH_WATER_MARK,
    authorize: ({ publicKey, right }) => {
      if (right === "write") asked.push(publicKey);
      return true;
    },
  }, async (core) => {
    const socket = await connect(core, mallory);
    const [alices] = await blocksOf(alice, REPO, 1); // never sent by Alice
    const forged = alices.slice();
    forged[forged.length - 1] ^= 1; // the signature's last byte
    socket.deliver({ type: "push", repo: REPO, id: 0, frames: [forged] });
    await socket.until(() => socket.frames("ack").length === 1);
    assert.equal(socket.frames("ack")[0].rejected[0]?.code, "E_BAD_SIGNATURE");
    assert.deepEqual(asked, [], "no false 'Alice writes' request");
    // Her genuine block, relayed by Mallory, is asked about once: her key, proven.
    socket.deliver({ type: "push", repo: REPO, id: 1, frames: [alices] });
    await socket.until(() => socket.frames("ack").length === 2);
    assert.equal(socket.frames("ack")[1].applied, 1);
    assert.deepEqual(asked, [toBase64Url(alice.publicKey)]);
  });
});

test("sync core: a store that fails (its database unreachable) is E_IO and close 1011 for the client, not E_PROTOCOL", async () => {
  await withTempDirectory("sync-core", async (dir) => {
    const files = await openFilesStore(dir);
    // The PostgreSQL driver's own error, as a minute of retries left it.
    const failing = new Proxy(files, {
      get(target, name) {
        if (name === "openRepository") {
          return () => Promise.reject(new Error("connect ECONNREFUSED"));
        }
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const core = await SyncServerCore.create(failing, {
      open: true,
      highWaterMark: HIGH_WATER_MARK,
    });
    try {
      const client = await connect(core, await newSession());
      client.deliver({ type: "subscribe", repo: REPO, cursor: null, versionVector: null });
      await client.until(() => client.closed !== undefined);
      assert.equal(client.closed?.code, CLOSE.internal, "4000, a protocol error, before");
      const error = client.frames("error").at(-1);
      assert.deepEqual([error?.code, error?.message], ["E_IO", "connect ECONNREFUSED"]);
    } finally {
      await core.close();
    }
  });
});
