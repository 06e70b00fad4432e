/**
 * The sync client's connection handling against a scripted server and manual timers (no wall
 * time): heartbeats, a silent server, goaway, the backoff schedule, waking up early, and frames
 * that break the protocol.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { backoffDelay } from "../../src/sync/backoff.ts";
import { Cairn } from "../../src/db/database.ts";
import { syncWith } from "../../src/sync/client.ts";
import { encodeFrame, PROTOCOL_VERSION } from "../../src/sync/protocol.ts";
import { type FakeConnection, FakeSyncServer, ManualTimers } from "../harness/fake_sync_server.ts";
import {
  ack,
  linked,
  Note,
  PATH,
  serveSubscription,
  settle,
  until,
} from "../harness/linked_client.ts";

test("ping is answered with a pong of the same number", async () => {
  const { link, connection } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  connection.send({ type: "ping", n: 42 });
  const pong = await connection.expect("pong");
  assert.equal(pong.n, 42);
  await link.close();
});

/** After a drop, once the retry timer fires: the client connects again and syncs; then closes. */
async function reconnectsAndSyncs(
  { link, server, timers }: Pick<Awaited<ReturnType<typeof linked>>, "link" | "server" | "timers">,
): Promise<void> {
  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  await serveSubscription(again, { writers: [] });
  await link.synced();
  await link.close();
}

test("a server silent for three heartbeat intervals is dropped (4004), then reconnected", async () => {
  const { link, connection, server, timers, errors } = await linked();
  await connection.handshake({ maxFrame: 1 << 20, heartbeatMs: 1000 });
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  // The watchdog is re-armed by every frame, at 3 intervals; the other timer starts the backoff
  // over once the connection has stayed up ten seconds.
  assert.deepEqual(timers.delays(), [3000, 10_000]);
  connection.send({ type: "ping", n: 1 });
  await connection.expect("pong");
  assert.deepEqual(timers.delays(), [10_000, 3000]);
  assert.equal(timers.runNext(), 3000);
  assert.equal(connection.closed?.by, "client");
  assert.equal(connection.closed?.code, 4004);
  assert.equal(link.status, "offline");
  assert.ok(isCairnError(errors.at(-1), "E_IO"));
  await reconnectsAndSyncs({ link, server, timers });
});

test("a server that pings but never completes the handshake is dropped after three intervals, then reconnected", async () => {
  for (const step of ["hello", "prove"] as const) {
    const { link, connection, server, timers, errors } = await linked();
    await connection.expect("hello");
    if (step === "prove") {
      const nonce = new Uint8Array(32);
      const limits = { maxFrame: 1 << 20, heartbeatMs: 1000 };
      connection.send({
        type: "challenge",
        version: PROTOCOL_VERSION,
        serverId: "s",
        nonce,
        limits,
      });
      await connection.expect("prove");
    }
    const deadline = timers.delays()[0];
    for (let n = 1; n <= 5; n++) {
      connection.send({ type: "ping", n });
      await connection.expect("pong");
      assert.deepEqual(
        timers.delays(),
        [deadline],
        `${step}: a ping does not put off the deadline`,
      );
    }
    assert.equal(link.status, "connecting");
    assert.equal(timers.runNext(), deadline);
    assert.equal(connection.closed?.code, 4004);
    assert.equal(link.status, "offline");
    assert.match(errors.at(-1)!.message, /did not take the handshake's next step/);
    await reconnectsAndSyncs({ link, server, timers });
  }
});

test("a server that keeps the socket alive but acknowledges no push is dropped after eight intervals; the blocks go again on the next socket", async () => {
  const { link, connection, server, timers, errors, notes } = await linked();
  await connection.handshake({ maxFrame: 1 << 20, heartbeatMs: 1000 });
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "withheld" });
  const withheld = await connection.expect("push");
  // It answers a ping each 900 ms, so the watchdog (three intervals of silence) never fires;
  // synced() would wait for good. Eight intervals after the push, the wait for its ack ends.
  let pings = 0;
  while (connection.closed === undefined) {
    timers.advance(900);
    if (connection.closed !== undefined) break;
    connection.send({ type: "ping", n: ++pings });
    await connection.expect("pong");
  }
  assert.equal(pings, 8, "dropped eight intervals after the push, not before");
  assert.equal(connection.closed?.code, 4004);
  assert.equal(link.status, "offline");
  assert.match(errors.at(-1)!.message, /acknowledged no push for 8000 ms/);
  assert.ok(isCairnError(errors.at(-1), "E_IO"));
  assert.equal(link.unacknowledged, 1);
  // The next socket sends the block again; its ack settles it.
  timers.runNext();
  const again = await server.accept();
  await again.handshake({ maxFrame: 1 << 20, heartbeatMs: 1000 });
  await serveSubscription(again, { writers: [] });
  const resent = await again.expect("push");
  assert.deepEqual(resent.frames, withheld.frames);
  ack(again, resent);
  await link.synced();
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("pushes acknowledged in time keep the socket: each ack starts the wait for the next over", async () => {
  const { link, connection, timers, notes } = await linked();
  await connection.handshake({ maxFrame: 1 << 20, heartbeatMs: 1000 });
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  for (let i = 0; i < 3; i++) {
    notes.create(Note, { title: `note ${i}` });
    const push = await connection.expect("push");
    assert.ok(timers.delays().includes(8000), "a push in flight is watched");
    ack(connection, push);
    await until(() => link.unacknowledged === 0, "acknowledged");
    assert.ok(!timers.delays().includes(8000), "nothing in flight, nothing watched");
  }
  assert.equal(connection.closed, undefined);
  await link.close();
});

test("goaway: once the server closes, the client comes back after the delay it asked", async () => {
  const { link, connection, server, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  connection.send({ type: "goaway", reason: "restarting", retryAfterMs: 1234 });
  connection.close(1001, "going away");
  await until(() => link.status === "offline", "offline");
  assert.deepEqual(timers.delays(), [1234]);
  timers.runNext();
  assert.equal(link.status, "connecting");
  const again = await server.accept();
  await again.handshake();
  await serveSubscription(again, { writers: [] });
  await link.synced();
  await link.close();
});

test("a server's heartbeat interval is capped at ten minutes: the watchdog never overflows", async () => {
  const { link, connection, timers } = await linked();
  // 3 × this overflows setTimeout (2^31 - 1 ms), which then fires at once: a reconnect loop.
  await connection.handshake({ maxFrame: 1 << 20, heartbeatMs: Number.MAX_SAFE_INTEGER });
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  assert.deepEqual(timers.delays(), [3 * 10 * 60_000, 10_000]);
  await link.close();
});

test("backoff: full jitter under a cap that doubles from initialMs to maxMs", () => {
  const options = { initialMs: 250, maxMs: 30_000 };
  const caps = Array.from({ length: 10 }, (_, i) => backoffDelay(i, options, () => 0.9999999));
  assert.deepEqual(caps, [249, 499, 999, 1999, 3999, 7999, 15999, 29999, 29999, 29999]);
  assert.equal(backoffDelay(3, options, () => 0), 0);
  assert.equal(backoffDelay(3, options, () => 0.5), 1000);
  assert.equal(backoffDelay(5000, options, () => 0.5), 15000, "no overflow after many failures");
});

/** A link of a database with `paths` open, backing off from 100 ms to 1 s, on fakes. */
async function backingOff(paths: string[]) {
  const server = new FakeSyncServer();
  const timers = new ManualTimers();
  const db = await Cairn.open();
  for (const path of paths) await db.open(path);
  const link = syncWith(db, "ws://sync.test", { backoff: { initialMs: 100, maxMs: 1000 } }, {
    socket: server.socket,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    random: () => 0.5,
    wake: () => () => {},
  });
  return { server, timers, link };
}

test("a link whose connections keep failing backs off, and starts over once synced", async () => {
  const { server, timers, link } = await backingOff([PATH]);
  const delays: number[] = [];
  for (let i = 0; i < 6; i++) {
    const connection = await server.accept();
    connection.close(1006);
    await until(() => link.status === "offline", "offline");
    delays.push(timers.runNext());
  }
  assert.deepEqual(delays, [50, 100, 200, 400, 500, 500]);
  const good = await server.accept();
  await good.handshake();
  await serveSubscription(good, { writers: [] });
  await link.synced();
  assert.equal(timers.runNext(), 10_000, "up and caught up for ten seconds");
  good.close(1006);
  await until(() => link.status === "offline", "offline");
  assert.deepEqual(timers.delays(), [50]);
  await link.close();
  assert.deepEqual(timers.delays(), [], "close() leaves no timer behind");
});

test("a server that drops every connection right after its catch-up is backed off from, not called every 250 ms", async () => {
  const { server, timers, link } = await backingOff([PATH]);
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    const connection = await server.accept();
    await connection.handshake();
    await serveSubscription(connection, { writers: [] });
    await until(() => link.status === "synced", "synced");
    connection.close(1006);
    await until(() => link.status === "offline", "offline");
    delays.push(timers.runNext());
  }
  assert.deepEqual(delays, [50, 100, 200, 400, 500]);
  await link.close();
});

test("goaway's delay is at least the backoff's next one, at most an hour, for its own drop only", async () => {
  const { server, timers, link } = await backingOff([PATH]);
  /** The delay before the next connection after `connection` ends as `end` makes it. */
  const delayAfter = async (end: (connection: FakeConnection) => void) => {
    const connection = await server.accept();
    end(connection);
    await until(() => link.status === "offline", "offline");
    return timers.runNext();
  };
  const goaway = (retryAfterMs: number) => (connection: FakeConnection) => {
    connection.send({ type: "goaway", reason: "restarting", retryAfterMs });
    connection.close(1001, "going away");
  };
  const delays: number[] = [];
  // A server that sends every connection away at once, asking for no delay: still backed off.
  for (let i = 0; i < 4; i++) delays.push(await delayAfter(goaway(0)));
  assert.deepEqual(delays, [50, 100, 200, 400]);
  assert.equal(await delayAfter(goaway(2 ** 40)), 60 * 60_000, "an hour at most");
  // The next drop, without goaway, waits the backoff's delay, not the hour.
  assert.equal(await delayAfter((connection) => connection.close(1006)), 500);
  await link.close();
});

test("a socket that one repository keeps failing backs off though another repository syncs", async () => {
  const { server, timers, link } = await backingOff([PATH, "/stuck"]);
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    const connection = await server.accept();
    await connection.handshake();
    const repos: string[] = [];
    for (let j = 0; j < 2; j++) {
      repos.push((await connection.expect("subscribe")).repo);
      await connection.expect("credit");
    }
    assert.deepEqual(repos.sort(), ["/notes", "/stuck"]);
    // /notes catches up on every socket; /stuck never does before the socket fails.
    connection.send({ type: "members", repo: PATH, writers: [], canWrite: true });
    connection.send({ type: "synced", repo: PATH, cursor: ["e", 0], versionVector: null });
    await settle();
    connection.close(1006);
    await until(() => link.status === "offline", "offline");
    delays.push(timers.runNext());
  }
  assert.deepEqual(delays, [50, 100, 200, 400]);
  await link.close();
});

test("a wake-up signal (online, page visible) reconnects at once instead of waiting", async () => {
  const server = new FakeSyncServer();
  const timers = new ManualTimers();
  let wake = () => {};
  const db = await Cairn.open();
  const link = syncWith(db, "ws://sync.test", {}, {
    socket: server.socket,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    random: () => 0.5,
    wake: (callback) => {
      wake = callback;
      return () => wake = () => {};
    },
  });
  const first = await server.accept();
  first.close(1006);
  await until(() => link.status === "offline", "offline");
  assert.equal(timers.delays().length, 1);
  wake();
  assert.equal(link.status, "connecting");
  assert.deepEqual(timers.delays().length, 1, "the backoff timer is replaced by the watchdog");
  const second = await server.accept();
  await second.handshake();
  await link.synced();
  await link.close();
  wake(); // stopped listening: nothing happens
  assert.equal(server.made.length, 2);
});

for (
  const [what, send, code] of [
    [
      "bytes that are not MessagePack",
      (c) => c.sendRaw(new Uint8Array([0xc1, 0xff])),
      "E_PROTOCOL",
    ],
    ["a text message", (c) => c.sendRaw("hello"), "E_PROTOCOL"],
    ["an unknown frame type", (c) => c.sendRaw(encodeRaw([99, "x"])), "E_PROTOCOL"],
    ["a frame larger than maxFrame", (c) => c.sendRaw(new Uint8Array(8192)), "E_TOO_LARGE"],
    [
      "a client's frame type",
      (c) => c.send({ type: "prove", signature: new Uint8Array(64) }),
      "E_PROTOCOL",
    ],
    ["a second welcome", (c) => c.send({ type: "welcome" }), "E_PROTOCOL"],
    ["an ack of a push never sent", (c) =>
      c.send({
        type: "ack",
        repo: PATH,
        id: 77,
        applied: 1,
        duplicates: 0,
        rejected: [],
        position: 1,
      }), "E_PROTOCOL"],
    ["an error frame", (c) => c.send({ type: "error", code: "E_AUTH", message: "who?" }), "E_AUTH"],
  ] as const satisfies readonly [
    string,
    (c: Awaited<ReturnType<typeof linked>>["connection"]) => void,
    string,
  ][]
) {
  test(`${what} from the server: reported, socket closed, reconnect with backoff`, async () => {
    const { link, connection, server, timers, errors, notes } = await linked({ maxFrame: 4096 });
    const limits = { maxFrame: 4096, heartbeatMs: 15_000 };
    await connection.handshake(limits);
    await serveSubscription(connection, { writers: [] });
    await until(() => link.status === "synced", "synced");
    send(connection);
    await until(() => link.status === "offline", "offline");
    assert.ok(isCairnError(errors.at(-1), code), String(errors.at(-1)?.message));
    assert.equal(connection.closed?.by, "client");
    assert.equal(timers.delays().length, 1);
    // The link carries on: a new socket, and a write still reaches the server.
    timers.runNext();
    const again = await server.accept();
    await again.handshake(limits);
    await serveSubscription(again, { writers: [] });
    notes.create(Note, { title: "after" });
    assert.equal((await again.expect("push")).frames.length, 1);
    await link.close();
  });
}

test("a server speaking another protocol version is refused", async () => {
  const { link, connection, errors } = await linked();
  await connection.expect("hello");
  connection.send({
    type: "challenge",
    version: PROTOCOL_VERSION + 1,
    serverId: "s",
    nonce: new Uint8Array(32),
    limits: { maxFrame: 1 << 20, heartbeatMs: 1000 },
  });
  await until(() => link.status === "offline", "offline");
  assert.ok(isCairnError(errors.at(-1), "E_PROTOCOL"));
  await link.close();
});

function encodeRaw(value: unknown[]): Uint8Array {
  // A frame the encoder would never write: built from a valid one's bytes, type replaced.
  const bytes = encodeFrame({ type: "unsubscribe", repo: "/x" });
  const out = bytes.slice();
  out[1] = value[0] as number;
  return out;
}

test("a server whose frames are larger than the client's maxFrame is refused, naming the fix", async () => {
  const { link, connection, errors } = await linked({ maxFrame: 64 << 10 });
  await connection.expect("hello");
  connection.send({
    type: "challenge",
    version: PROTOCOL_VERSION,
    serverId: "s",
    nonce: new Uint8Array(32),
    limits: { maxFrame: 1 << 20, heartbeatMs: 1000 },
  });
  await until(() => link.status === "offline", "offline");
  assert.ok(isCairnError(errors.at(-1), "E_TOO_LARGE"));
  assert.match(errors.at(-1)!.message, /1048576 bytes.*maxFrame \(65536\).*at least/);
  await link.close();
});

test("a server whose frames could not carry a block is refused; a tiny heartbeat is not taken", async () => {
  const { link, connection, server, timers, errors } = await linked();
  await connection.expect("hello");
  const nonce = new Uint8Array(32);
  connection.send({
    type: "challenge",
    version: PROTOCOL_VERSION,
    serverId: "s",
    nonce,
    limits: { maxFrame: 100, heartbeatMs: 1000 },
  });
  await until(() => link.status === "offline", "offline");
  assert.ok(isCairnError(errors.at(-1), "E_PROTOCOL"));
  timers.runNext();
  const again = await server.accept();
  await again.handshake({ maxFrame: 1 << 20, heartbeatMs: 1 });
  await serveSubscription(again, { writers: [] });
  await until(() => link.status === "synced", "synced");
  assert.deepEqual(timers.delays(), [3000, 10_000], "the watchdog waits three seconds at least");
  await link.close();
});

test("a server flooding frames faster than they are handled is cut off (4000), then resumed by cursor", async () => {
  const maxFrame = 1 << 20;
  const { link, connection, server, timers, errors } = await linked({ maxFrame });
  await connection.handshake({ maxFrame, heartbeatMs: 15_000 });
  await serveSubscription(connection, { writers: [], cursor: ["epoch-1", 7] });
  await until(() => link.status === "synced", "synced");
  // The client's inbox cap with one repository: twice its 4 MiB credit, and two frames.
  const cap = 2 * (4 << 20) + 2 * maxFrame;
  const frame = encodeFrame({
    type: "live",
    repo: PATH,
    frames: [new Uint8Array(maxFrame - 1024)],
    position: 8,
  });
  // All sent in one tick: each is delivered (a microtask) before the client handles any; the
  // check queued after each delivery sees whether the client closed on it.
  let closedOn: number | undefined;
  const sent = 40;
  for (let i = 0; i < sent; i++) {
    connection.sendRaw(frame);
    queueMicrotask(() => {
      if (closedOn === undefined && connection.closed) closedOn = i;
    });
  }
  await until(() => link.status === "offline", "offline");
  assert.ok(closedOn !== undefined, "the client never closed");
  // What it held before the frame that closed it stayed within the cap.
  assert.ok(closedOn * frame.length <= cap, `closed on frame ${closedOn}`);
  assert.equal(connection.closed?.by, "client");
  assert.equal(connection.closed?.code, 4000);
  const error = errors.find((err) => err.message.includes("more than the client can take"));
  assert.ok(isCairnError(error, "E_PROTOCOL"));
  // A drop like any other: backoff, then a subscription by the cursor the client had.
  timers.runNext();
  const again = await server.accept();
  await again.handshake({ maxFrame, heartbeatMs: 15_000 });
  const subscribe = await serveSubscription(again, { writers: [], cursor: ["epoch-1", 7] });
  assert.deepEqual(subscribe.cursor, ["epoch-1", 7]);
  await link.synced();
  await link.close();
});

test("a socket that could not be made (its Error, then its close) is reported, then retried", async () => {
  const { link, connection, server, timers, errors } = await linked();
  connection.socket.onerror?.(new SyntaxError("ws refused the URL"));
  connection.close(1006, "ws refused the URL");
  await until(() => link.status === "offline", "offline");
  assert.ok(isCairnError(errors.at(-1), "E_IO"));
  assert.match(errors.at(-1)!.message, /refused the URL/);
  await reconnectsAndSyncs({ link, server, timers });
});
