/**
 * The sync client against a scripted server (no sockets, so in every runtime): the handshake,
 * catch-up paced by credit, pushes and acks, trust limited to the listed writers, a server that
 * alters blocks, and the cursor kept across sockets.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, openCairnOn } from "../../src/db/database.ts";
import { Repository } from "../../src/repo/repository.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { syncWith } from "../../src/sync/client.ts";
import { MAX_WRITERS } from "../../src/sync/repository_link.ts";
import { openBackend } from "../../src/storage/backends/select.ts";
import {
  CLOSE,
  DEFAULT_MAX_FRAME,
  type Frame,
  proofMessage,
  PUSH_WINDOW_FRAMES,
} from "../../src/sync/protocol.ts";
import {
  ack,
  keyOf,
  type Linked,
  linked,
  Note,
  PATH,
  serveSubscription,
  settle,
  until,
} from "../harness/linked_client.ts";
import { type FakeConnection, ManualTimers } from "../harness/fake_sync_server.ts";
import { FailingCalls, faultyBackend } from "../harness/faulty_backend.ts";
import { withScratchBackend } from "../harness/scratch_backend.ts";

/** Where `needle` first stands in `bytes`, or -1. */
function indexOfBytes(bytes: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** A database that wrote `count` notes to /notes; returns it and the blocks it holds. */
async function writer(count: number, perTick = 1) {
  const db = await Cairn.open({ schemas: [Note] });
  const notes = await db.open(PATH);
  for (let i = 0; i < count; i++) {
    notes.create(Note, { title: `note ${i}` });
    if ((i + 1) % perTick === 0) await notes.flush();
  }
  return { db, notes, frames: await notes.exportBlocks() };
}

test("handshake: hello names the session and token, the proof verifies, then subscribe with credit", async () => {
  const { db, link, connection, statuses } = await linked({ token: "app-token" });
  assert.equal(link.status, "connecting");
  const hello = await connection.handshake();
  assert.deepEqual(hello.versions, [2]);
  assert.equal(hello.session, db.session.id);
  assert.deepEqual(hello.publicKey, keyOf(db));
  assert.equal(hello.token, "app-token");
  const subscribe = await connection.expect("subscribe");
  assert.equal(subscribe.repo, PATH);
  assert.equal(subscribe.cursor, null);
  assert.deepEqual(subscribe.versionVector, {});
  const credit = await connection.expect("credit");
  assert.equal(credit.repo, PATH);
  assert.ok(credit.bytes >= DEFAULT_MAX_FRAME);
  assert.equal(link.status, "catching-up");
  connection.send({ type: "members", repo: PATH, writers: [], canWrite: true });
  connection.send({ type: "synced", repo: PATH, cursor: ["e", 0], versionVector: {} });
  await link.synced();
  assert.deepEqual(statuses, ["catching-up", "synced"]);
  await link.close();
  assert.equal(link.status, "closed");
  assert.equal(connection.closed?.by, "client");
});

test("a proof over another nonce is not what the client signs", async () => {
  // The harness checks the proof; here the message it checks is shown to bind nonce and server.
  const suite = await cryptoSuite();
  const a = proofMessage(new Uint8Array(32), "server-a", "s".repeat(22));
  const b = proofMessage(new Uint8Array(32).fill(1), "server-a", "s".repeat(22));
  const c = proofMessage(new Uint8Array(32), "server-b", "s".repeat(22));
  const key = await suite.ed25519.generate();
  const signature = await suite.ed25519.sign(key, a);
  assert.ok(await suite.ed25519.verify(key.publicKey, signature, a));
  assert.ok(!await suite.ed25519.verify(key.publicKey, signature, b));
  assert.ok(!await suite.ed25519.verify(key.publicKey, signature, c));
});

test("catch-up: blocks in several frames are imported and credit is granted back per frame", async () => {
  const alice = await writer(30, 3);
  const { notes, link, connection } = await linked();
  await connection.handshake();
  await connection.expect("subscribe");
  const initial = await connection.expect("credit");
  connection.send({ type: "members", repo: PATH, writers: [keyOf(alice.db)], canWrite: false });
  const chunks = [alice.frames.slice(0, 4), alice.frames.slice(4, 7), alice.frames.slice(7)];
  for (const frames of chunks) {
    connection.send({ type: "blocks", repo: PATH, frames });
    const credit = await connection.expect("credit");
    // The grant is the size of the frame just applied: the window stays where it was.
    const size = frames.reduce((sum, frame) => sum + frame.length, 0);
    assert.ok(credit.bytes > size && credit.bytes < size + 200, `${credit.bytes} for ${size}`);
    assert.ok(credit.bytes < initial.bytes);
  }
  connection.send({ type: "synced", repo: PATH, cursor: ["e", 10], versionVector: null });
  await link.synced();
  assert.equal(notes.count(), 30);
  assert.equal(link.status, "synced");
  assert.deepEqual(await connection.unreadFrames(), [], "nothing imported is pushed back");
  await link.close();
});

test("push: local writes of one tick go in one push, kept until the ack, then synced() resolves", async () => {
  const { db, notes, link, connection } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "a" });
  notes.create(Note, { title: "b" });
  let resolved = false;
  const synced = link.synced().then(() => resolved = true);
  const push = await connection.expect("push");
  assert.equal(push.repo, PATH);
  assert.equal(push.frames.length, 1);
  assert.deepEqual(push.frames, await notes.exportBlocks());
  assert.equal(link.unacknowledged, 1);
  await settle();
  assert.equal(resolved, false, "synced() waits for the ack");
  ack(connection, push);
  await synced;
  assert.equal(link.unacknowledged, 0);
  // A second tick is a second push with another id.
  notes.create(Note, { title: "c" });
  const second = await connection.expect("push");
  assert.notEqual(second.id, push.id);
  assert.deepEqual(second.frames, await notes.exportBlocks({ [db.session.id]: 1 }));
  await link.close();
});

test("unacknowledged blocks are sent again after a dropped socket; the cursor is kept", async () => {
  const { notes, link, connection, server, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [], cursor: ["epoch-7", 41] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "offline soon" });
  const lost = await connection.expect("push");
  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  assert.equal(link.unacknowledged, 1);
  notes.create(Note, { title: "written offline" });
  await notes.flush();
  assert.equal(link.unacknowledged, 2);

  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  const subscribe = await serveSubscription(again, { writers: [], cursor: ["epoch-7", 45] });
  assert.deepEqual(subscribe.cursor, ["epoch-7", 41]);
  assert.equal(subscribe.versionVector, null);
  const resent = await again.expect("push");
  assert.deepEqual(resent.frames, [...lost.frames, ...(await notes.exportBlocks()).slice(1)]);
  ack(again, resent);
  await link.synced();
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("reset: the client forgets its cursor and subscribes again with its version vector", async () => {
  const alice = await writer(3);
  const { notes, link, connection, server, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, {
    writers: [keyOf(alice.db)],
    frames: alice.frames,
    cursor: ["old-epoch", 3],
  });
  await until(() => link.status === "synced", "synced");
  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  const first = await again.expect("subscribe");
  assert.deepEqual(first.cursor, ["old-epoch", 3]);
  await again.expect("credit");
  again.send({ type: "reset", repo: PATH });
  const second = await again.expect("subscribe");
  assert.equal(second.cursor, null);
  assert.deepEqual(second.versionVector, notes.versionVector());
  assert.deepEqual(second.versionVector, { [alice.db.session.id]: 3 });
  await link.close();
});

test("members: the client trusts exactly the listed writers; another key's block is refused", async () => {
  const alice = await writer(2);
  const mallory = await writer(2);
  const { notes, link, connection, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, {
    writers: [keyOf(alice.db)],
    frames: [...mallory.frames, ...alice.frames],
  });
  await until(() => link.status === "synced", "synced");
  assert.equal(notes.count(), 2);
  assert.deepEqual(Object.keys(notes.versionVector()), [alice.db.session.id]);
  assert.equal(errors.length, 2);
  assert.ok(errors.every((err) => isCairnError(err, "E_UNTRUSTED_SESSION")));
  // A later members frame adds a writer: mallory's blocks now apply.
  connection.send({ type: "members", repo: PATH, writers: [keyOf(mallory.db)], canWrite: true });
  connection.send({ type: "live", repo: PATH, frames: mallory.frames, position: 4 });
  await until(() => notes.count() === 4, "mallory's notes applied");
  const sent = await connection.unreadFrames();
  assert.deepEqual(sent.map((frame) => frame.type), ["credit"], "nothing is pushed back");
  await link.close();
});

test("members: a server listing over MAX_WRITERS writers is a protocol error; the next subscription asks by version vector", async () => {
  const { link, connection, server, timers, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  const perFrame = 25_000;
  for (let listed = 0; listed < MAX_WRITERS; listed += perFrame) {
    const writers = Array.from(
      { length: perFrame },
      () => crypto.getRandomValues(new Uint8Array(32)),
    );
    connection.send({ type: "members", repo: PATH, writers, canWrite: true });
  }
  await settle();
  const closed = () => connection.closed;
  assert.equal(closed(), undefined, "the limit itself is kept");
  const one = crypto.getRandomValues(new Uint8Array(32));
  connection.send({ type: "members", repo: PATH, writers: [one], canWrite: true });
  await until(() => closed() !== undefined, "closed by the client");
  assert.equal(closed()?.code, CLOSE.protocol);
  assert.match(errors.at(-1)!.message, /lists over 100000 writers/);
  timers.runNext(); // the reconnect
  const again = await server.accept();
  await again.handshake();
  const subscribe = await again.expect("subscribe");
  assert.equal(subscribe.cursor, null);
  assert.notEqual(subscribe.versionVector, null);
  await link.close();
});

test("a server that alters a block's bytes is caught: the block is refused, nothing changes", async () => {
  const alice = await writer(1);
  const { notes, link, connection, errors } = await linked();
  await connection.handshake();
  const altered = alice.frames[0].slice();
  // Found among the bytes, not in a decoded string: the key and signature bytes before it are
  // not UTF-8, and decoding them would shift the index.
  const at = indexOfBytes(altered, new TextEncoder().encode("note 0"));
  assert.ok(at > 0);
  altered[at + 5] = "X".charCodeAt(0);
  await serveSubscription(connection, { writers: [keyOf(alice.db)], frames: [altered] });
  await until(() => link.status === "synced", "synced");
  assert.equal(notes.count(), 0);
  assert.deepEqual(notes.versionVector(), {});
  assert.equal(errors.length, 1);
  assert.ok(isCairnError(errors[0], "E_BAD_SIGNATURE"), errors[0].message);
  // The genuine block still applies.
  connection.send({ type: "live", repo: PATH, frames: alice.frames, position: 1 });
  await until(() => notes.count() === 1, "the genuine block applied");
  await link.close();
});

test("after synced with a version vector, the client pushes what the server lacks", async () => {
  const { db, notes, link, connection } = await linked({}, async (_db, notes) => {
    // Written before the link existed (as after an app restart).
    for (let i = 0; i < 3; i++) {
      notes.create(Note, { title: `old ${i}` });
      await notes.flush();
    }
  });
  await connection.handshake();
  const subscribe = await serveSubscription(connection, {
    writers: [],
    serverVector: { [db.session.id]: 1 },
  });
  assert.deepEqual(subscribe.versionVector, { [db.session.id]: 3 });
  const push = await connection.expect("push");
  assert.deepEqual(push.frames, await notes.exportBlocks({ [db.session.id]: 1 }));
  assert.equal(link.status, "catching-up", "not synced until what it lacked is acknowledged");
  ack(connection, push);
  await link.synced();
  assert.equal(link.status, "synced");
  await link.close();
});

/**
 * A client holding two offline writes subscribes; the server sends another session's three
 * blocks and then `synced` with the vector `told` makes of that session's id: the client must
 * push its own two blocks only.
 */
async function pushesOnlyWhatItHeld(told: (theirSession: string) => Record<string, number>) {
  const { db, notes, link, connection } = await linked({}, async (_db, notes) => {
    for (let i = 0; i < 2; i++) {
      notes.create(Note, { title: `offline ${i}` });
      await notes.flush();
    }
  });
  const other = await Cairn.open({ schemas: [Note] });
  const theirs = await other.open(PATH);
  for (let i = 0; i < 3; i++) {
    theirs.create(Note, { title: `theirs ${i}` });
    await theirs.flush();
  }
  await connection.handshake();
  const subscribe = await serveSubscription(connection, {
    writers: [keyOf(db), keyOf(other)],
    frames: await theirs.exportBlocks(),
    serverVector: told(other.session.id),
  });
  assert.deepEqual(subscribe.versionVector, { [db.session.id]: 2 });
  await connection.expect("credit"); // given back for the catch-up frame
  const push = await connection.expect("push");
  assert.deepEqual(push.frames, await notes.exportBlocks({ [other.session.id]: 3 }));
  assert.equal(push.frames.length, 2, "only what it held when it subscribed");
  ack(connection, push);
  await link.synced();
  assert.equal(notes.count(), 5);
  await link.close();
  await other.close();
}

test("a server's vector names only the sessions the client named: blocks it sent in the catch-up are not pushed back", async () => {
  // This client named its own session only, which the server lacks: an empty vector.
  await pushesOnlyWhatItHeld(() => ({}));
});

test("a server's vector entry for a session the client did not name is ignored (a hostile 0 asks for nothing back)", async () => {
  await pushesOnlyWhatItHeld((theirs) => ({ [theirs]: 0 }));
});

test("pushes waiting for their ack add up to at most PUSH_WINDOW_FRAMES frames; the rest go as acks come", async () => {
  // Each block nearly fills a frame of 4 KiB: the window holds PUSH_WINDOW_FRAMES of them.
  const blocks = PUSH_WINDOW_FRAMES * 2 + 3;
  const { notes, link, connection } = await linked({}, async (_db, notes) => {
    for (let i = 0; i < blocks; i++) {
      notes.create(Note, { title: `${i} `.padEnd(3700, "x") });
      await notes.flush();
    }
  });
  await connection.handshake({ maxFrame: 4096, heartbeatMs: 15_000 });
  await serveSubscription(connection, { writers: [], serverVector: {} });
  const pushes: Extract<Frame, { type: "push" }>[] = [];
  for (let i = 0; i < PUSH_WINDOW_FRAMES; i++) pushes.push(await connection.expect("push"));
  await settle();
  assert.equal(connection.unread, 0, "no more than the window before an ack");
  for (let acked = 0; acked < blocks; acked++) {
    assert.equal(link.status, "catching-up", "catching up until every push is acknowledged");
    ack(connection, pushes[acked]);
    if (pushes.length < blocks) pushes.push(await connection.expect("push"));
    await settle();
    assert.equal(connection.unread, 0, "one ack, one more push");
  }
  await link.synced();
  assert.equal(link.status, "synced");
  assert.deepEqual(pushes.flatMap((push) => push.frames), await notes.exportBlocks());
  assert.equal(new Set(pushes.map((push) => push.id)).size, blocks);
  await link.close();
});

test("small pushes are not held back by the window: each tick's goes at once", async () => {
  const { notes, link, connection } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  const pushes: Extract<Frame, { type: "push" }>[] = [];
  for (let i = 0; i < 3 * PUSH_WINDOW_FRAMES; i++) {
    notes.create(Note, { title: `tick ${i}` });
    pushes.push(await connection.expect("push"));
  }
  for (const push of pushes) ack(connection, push);
  await link.synced();
  await link.close();
});

test("blocks the app imports from elsewhere are pushed; the server's own are not", async () => {
  const alice = await writer(2);
  const bob = await writer(1);
  const { db, notes, link, connection } = await linked();
  await db.trust(bob.db.session.publicKey);
  await connection.handshake();
  await serveSubscription(connection, { writers: [keyOf(alice.db)], frames: alice.frames });
  await until(() => link.status === "synced", "synced");
  await connection.expect("credit");
  await notes.importBlocks(bob.frames); // e.g. received over another channel
  const push = await connection.expect("push");
  assert.deepEqual(push.frames, bob.frames.map((frame) => new Uint8Array(frame)));
  ack(connection, push);
  await link.synced();
  assert.equal(connection.unread, 0);
  await link.close();
});

test("a block refused for good is reported with its code and dropped, not sent again", async () => {
  const { notes, link, connection, server, timers, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "refused" });
  const push = await connection.expect("push");
  connection.send({
    type: "ack",
    repo: PATH,
    id: push.id,
    applied: 0,
    duplicates: 0,
    rejected: [{ index: 0, code: "E_CHAIN_FORK", message: "another block holds its place" }],
    position: 0,
  });
  await link.synced();
  assert.equal(link.unacknowledged, 0);
  assert.ok(isCairnError(errors.at(-1), "E_CHAIN_FORK"));
  assert.match(errors.at(-1)!.message, /another block holds its place/);
  // An unknown code is not passed on as if it were one of Cairn's.
  notes.create(Note, { title: "odd" });
  const next = await connection.expect("push");
  connection.send({
    type: "ack",
    repo: PATH,
    id: next.id,
    applied: 0,
    duplicates: 0,
    rejected: [{ index: 0, code: "E_MADE_UP", message: "?" }],
    position: 0,
  });
  await until(() => link.unacknowledged === 0, "settled");
  assert.ok(isCairnError(link.lastError, "E_PROTOCOL"));

  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  await serveSubscription(again, { writers: [] });
  await link.synced();
  assert.equal(again.unread, 0, "nothing re-sent");
  await link.close();
});

/** An ack of `push` refusing every block with `code`. */
function refuseAll(connection: Awaited<ReturnType<typeof linked>>["connection"], push: {
  repo: string;
  id: number;
  frames: Uint8Array[];
}, code: string): void {
  connection.send({
    type: "ack",
    repo: push.repo,
    id: push.id,
    applied: 0,
    duplicates: 0,
    rejected: push.frames.map((_, index) => ({ index, code, message: `${code} here` })),
    position: 0,
  });
}

test("a block the server failed to store (E_IO) stays queued and goes again with the next push", async () => {
  const { notes, link, connection, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "first" });
  const first = await connection.expect("push");
  let resolved = false;
  const synced = link.synced().then(() => resolved = true);
  refuseAll(connection, first, "E_IO");
  await until(() => errors.some((err) => isCairnError(err, "E_IO")), "reported");
  await settle();
  assert.equal(link.unacknowledged, 1, "kept");
  assert.equal(resolved, false, "synced() waits: the block is not stored");
  notes.create(Note, { title: "second" });
  const again = await connection.expect("push");
  const both = await notes.exportBlocks();
  assert.deepEqual(again.frames, both, "the refused block goes again, before the new one");
  ack(connection, again);
  await synced;
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("a block the server failed to store (E_IO) goes again after a backoff delay, with no new write", async () => {
  const { notes, link, connection, server, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "the only write" });
  const first = await connection.expect("push");
  const synced = link.synced();
  refuseAll(connection, first, "E_IO");
  await until(() => link.lastError !== undefined, "reported");
  await settle();
  assert.equal(connection.unread, 0, "not at once: a failing disk is not asked again and again");
  // The retry (a cap of 250 ms, jitter 0.5), due before the watchdog.
  assert.equal(timers.runNext(), 125);
  await until(() => connection.unread > 0, "pushed again");
  const again = await connection.expect("push");
  assert.deepEqual(again.frames, first.frames);
  // Refused again, then the socket drops: the retry goes with the socket, the block stays.
  refuseAll(connection, again, "E_IO");
  await settle();
  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  assert.equal(timers.delays().length, 1, "the reconnect alone: no retry left behind");
  assert.equal(link.unacknowledged, 1);
  timers.runNext();
  const next = await server.accept();
  await next.handshake();
  await serveSubscription(next, { writers: [] });
  const resent = await next.expect("push");
  assert.deepEqual(resent.frames, first.frames);
  ack(next, resent);
  await synced;
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("blocks refused for a time (E_CLOCK_AHEAD, the next E_CHAIN_GAP) stay queued and go again after a delay", async () => {
  const { notes, link, connection, timers, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "stamped ahead of the server's clock" });
  const first = await connection.expect("push");
  notes.create(Note, { title: "next in its chain" });
  const second = await connection.expect("push");
  let resolved = false;
  const synced = link.synced().then(() => resolved = true);
  refuseAll(connection, first, "E_CLOCK_AHEAD");
  refuseAll(connection, second, "E_CHAIN_GAP");
  await until(() => errors.some((err) => isCairnError(err, "E_CHAIN_GAP")), "reported");
  await settle();
  assert.equal(link.unacknowledged, 2, "both kept: dropped, they would break the chain for good");
  assert.equal(resolved, false, "synced() waits: the server lacks them");
  assert.equal(connection.unread, 0, "not sent again at once");
  timers.runNext(); // the retry, due before the watchdog
  await until(() => connection.unread > 0, "pushed again");
  const again = await connection.expect("push");
  assert.deepEqual(again.frames, await notes.exportBlocks(), "both, in their order");
  await settle();
  assert.equal(resolved, false, "synced() waits for their ack");
  ack(connection, again);
  await synced;
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("a block refused for good, and the gap behind it, are dropped; the next subscription is by version vector", async () => {
  const { db, notes, link, connection, server, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [], cursor: ["epoch-1", 0] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "another block holds its place" });
  const first = await connection.expect("push");
  notes.create(Note, { title: "behind it" });
  const second = await connection.expect("push");
  refuseAll(connection, first, "E_CHAIN_FORK");
  refuseAll(connection, second, "E_CHAIN_GAP");
  await link.synced(); // refused for good: reported, not waited for
  assert.equal(link.unacknowledged, 0, "a gap behind a fork never closes: not retried");
  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  const subscribe = await serveSubscription(again, { writers: [], serverVector: {} });
  assert.equal(subscribe.cursor, null, "a cursor would skip the dropped blocks for good");
  assert.deepEqual(subscribe.versionVector, { [db.session.id]: 2 });
  const push = await again.expect("push");
  assert.deepEqual(push.frames, await notes.exportBlocks(), "the catch-up offers them again");
  ack(again, push);
  await link.synced();
  await link.close();
});

test("nothing is pushed while the local disk fails: a block leaves once the local log holds it", async () => {
  // Pushed before, a block lost here in a crash would be sealed again differently at the same
  // place of the session's chain on the next open: a fork the server refuses for good.
  await withScratchBackend("push-after-store", async (_scratch, path) => {
    const plan = new FailingCalls();
    const open = () =>
      openCairnOn(
        { path, schemas: [Note] },
        async (directory) => faultyBackend(await openBackend(directory), plan),
      );
    const { db, notes, link, connection } = await linked({}, undefined, undefined, open);
    await connection.handshake();
    await serveSubscription(connection, { writers: [] });
    await until(() => link.status === "synced", "synced");
    plan.diskFull();
    notes.create(Note, { title: "written while the disk is full" });
    await assert.rejects(notes.flush(), (err) => isCairnError(err, "E_IO"));
    await settle();
    assert.equal(connection.unread, 0, "nothing pushed: the log does not hold the block");
    plan.clear();
    await notes.flush();
    const push = await connection.expect("push");
    assert.deepEqual(push.frames, await notes.exportBlocks());
    ack(connection, push);
    await link.close();
    await db.close();
  });
});

test("a block refused for want of the right (E_FORBIDDEN) waits for a grant, then goes", async () => {
  const { db, notes, link, connection, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "not yet" });
  const push = await connection.expect("push");
  refuseAll(connection, push, "E_FORBIDDEN");
  await link.synced(); // refused writing is reported, not waited for
  assert.ok(isCairnError(errors.at(-1), "E_FORBIDDEN"));
  assert.equal(link.unacknowledged, 1, "kept for a grant");
  // Not sent again on this socket while the right is missing: a new write goes alone.
  notes.create(Note, { title: "later" });
  const next = await connection.expect("push");
  assert.equal(next.frames.length, 1);
  assert.deepEqual(next.frames, await notes.exportBlocks({ [db.session.id]: 1 }));
  refuseAll(connection, next, "E_FORBIDDEN");
  await settle();
  assert.equal(connection.unread, 0);
  // Taken away and granted again (members): both go, in order.
  connection.send({ type: "members", repo: PATH, writers: [], canWrite: false });
  connection.send({ type: "members", repo: PATH, writers: [], canWrite: true });
  const granted = await connection.expect("push");
  assert.deepEqual(granted.frames, await notes.exportBlocks());
  ack(connection, granted);
  await link.synced();
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("another writer's block this client passes on, refused for want of that writer's right, goes again once the server lists the writer", async () => {
  const alice = await writer(1);
  const { db, notes, link, connection } = await linked();
  await db.trust(alice.db.session.publicKey);
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  await notes.importBlocks(alice.frames); // from elsewhere: passed on to the server
  const push = await connection.expect("push");
  refuseAll(connection, push, "E_FORBIDDEN");
  await settle();
  assert.equal(link.unacknowledged, 1, "kept for a grant");
  connection.send({ type: "members", repo: PATH, writers: [keyOf(alice.db)], canWrite: true });
  const again = await connection.expect("push");
  assert.deepEqual(again.frames, alice.frames);
  ack(connection, again);
  await link.synced();
  assert.equal(link.unacknowledged, 0);
  await link.close();
  await alice.db.close();
});

test("an ack that comes after writing was refused settles its push (no protocol error)", async () => {
  const { notes, link, connection, errors } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  notes.create(Note, { title: "in flight" });
  const push = await connection.expect("push");
  // The server took the right away while the push was being stored: denied, then the ack.
  connection.send({
    type: "denied",
    repo: PATH,
    right: "write",
    code: "E_FORBIDDEN",
    message: "writing taken away",
  });
  ack(connection, push);
  await until(() => link.unacknowledged === 0, "the ack settled the push");
  assert.equal(connection.closed, undefined, "the connection stays");
  assert.ok(!errors.some((err) => isCairnError(err, "E_PROTOCOL")), String(errors));
  await link.close();
});

/** Plays the catch-up of every repository the client subscribes, `count` of them. */
async function serveAll(connection: FakeConnection, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { repo } = await connection.expect("subscribe");
    await connection.expect("credit");
    connection.send({ type: "members", repo, writers: [], canWrite: true });
    connection.send({ type: "synced", repo, cursor: ["e", 0], versionVector: null });
  }
}

test("pushes in flight of a closed repository hold up no other's; their late acks are no protocol error", async () => {
  const { db, notes, link, connection, errors } = await linked({ maxFrame: 4096 });
  const other = await db.open("/other");
  await connection.handshake({ maxFrame: 4096, heartbeatMs: 15_000 });
  await serveAll(connection, 2);
  await until(() => link.status === "synced", "synced");
  // Blocks of nearly a frame each: /notes fills the push window, one more block waits.
  for (let i = 0; i <= PUSH_WINDOW_FRAMES; i++) {
    notes.create(Note, { title: `${i} `.padEnd(3700, "x") });
    await notes.flush();
  }
  const pushes: Extract<Frame, { type: "push" }>[] = [];
  for (let i = 0; i < PUSH_WINDOW_FRAMES; i++) pushes.push(await connection.expect("push"));
  await settle();
  assert.equal(connection.unread, 0, "the window is full");
  await db.close(PATH);
  await connection.expect("unsubscribe");
  for (const push of pushes) ack(connection, push);
  other.create(Note, { title: "b".padEnd(3000, "x") });
  await until(() => connection.unread > 0, "/other pushed");
  const push = await connection.expect("push");
  assert.equal(push.repo, "/other");
  ack(connection, push);
  await link.synced();
  assert.equal(connection.closed, undefined, "the connection stays");
  assert.ok(!errors.some((err) => isCairnError(err, "E_PROTOCOL")), String(errors));
  await link.close();
});

// (A repository closed and opened again gets a new socket, where no late ack comes: see "a
// repository closed and opened again while it catches up".)
for (
  const [what, subscribeAgain] of [
    ["reset by the server", ({ connection }) => connection.send({ type: "reset", repo: PATH })],
  ] as const satisfies readonly [string, (client: Linked) => unknown][]
) {
  test(`a push in flight when its repository is ${what}: its late ack is no protocol error`, async () => {
    const linkedClient = await linked();
    const { db, notes, link, connection, errors } = linkedClient;
    await connection.handshake();
    await serveSubscription(connection, { writers: [] });
    await until(() => link.status === "synced", "synced");
    notes.create(Note, { title: "in flight" });
    const push = await connection.expect("push");
    await subscribeAgain(linkedClient);
    ack(connection, push); // the server had stored it
    await serveSubscription(connection, { writers: [], serverVector: { [db.session.id]: 1 } });
    await until(() => link.status === "synced", "synced again");
    await link.synced();
    assert.equal(link.unacknowledged, 0);
    assert.equal(connection.closed, undefined, "the connection stays");
    assert.ok(!errors.some((err) => isCairnError(err, "E_PROTOCOL")), String(errors));
    await link.close();
  });
}

test("denied reading is reported and leaves the connection and other repositories alone", async () => {
  const { db, link, connection, errors } = await linked();
  await db.open("/other");
  await connection.handshake();
  const first = await connection.expect("subscribe");
  await connection.expect("credit");
  const second = await connection.expect("subscribe");
  await connection.expect("credit");
  assert.deepEqual([first.repo, second.repo].sort(), ["/notes", "/other"]);
  connection.send({
    type: "denied",
    repo: "/other",
    right: "read",
    code: "E_FORBIDDEN",
    message: "not yours",
  });
  connection.send({ type: "members", repo: PATH, writers: [], canWrite: true });
  connection.send({ type: "synced", repo: PATH, cursor: ["e", 0], versionVector: null });
  await link.synced();
  assert.equal(link.status, "synced");
  assert.ok(isCairnError(errors[0], "E_FORBIDDEN"));
  assert.equal(connection.closed, undefined);
  await link.close();
});

test("reading refused with E_IO (the server's store failed) is asked again after a delay; synced() waits for it", async () => {
  const { db, link, connection, errors, timers } = await linked();
  await db.open("/other");
  await connection.handshake();
  for (let i = 0; i < 2; i++) {
    await connection.expect("subscribe");
    await connection.expect("credit");
  }
  connection.send({
    type: "denied",
    repo: "/other",
    right: "read",
    code: "E_IO",
    message: "the server cannot read /other now",
  });
  connection.send({ type: "members", repo: PATH, writers: [], canWrite: true });
  connection.send({ type: "synced", repo: PATH, cursor: ["e", 0], versionVector: null });
  let resolved = false;
  const synced = link.synced().then(() => resolved = true);
  await until(() => errors.length > 0, "the refusal reported");
  assert.ok(isCairnError(errors[0], "E_IO"));
  await settle();
  assert.equal(link.status, "catching-up", "a repository the server could not read is not synced");
  assert.equal(resolved, false);
  assert.equal(connection.closed, undefined);
  // After the delay, the same socket subscribes again; this time the server reads it.
  timers.runNext();
  const again = await connection.expect("subscribe");
  assert.equal(again.repo, "/other");
  await connection.expect("credit");
  connection.send({ type: "members", repo: "/other", writers: [], canWrite: true });
  connection.send({ type: "synced", repo: "/other", cursor: ["e", 0], versionVector: null });
  await synced;
  assert.equal(link.status, "synced");
  await link.close();
});

test("repositories opened later are subscribed; closed ones unsubscribed; the option limits them", async () => {
  const { db, link, connection } = await linked({ repositories: [PATH, "/later"] });
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  await db.open("/ignored");
  await db.open("/later");
  const subscribe = await connection.expect("subscribe");
  assert.equal(subscribe.repo, "/later");
  assert.equal(link.status, "catching-up");
  await connection.expect("credit");
  await db.close("/later");
  const unsubscribe = await connection.expect("unsubscribe");
  assert.equal(unsubscribe.repo, "/later");
  assert.equal(link.status, "synced");
  await link.close();
});

test("closing the whole database closes its links: the socket closes, no reconnect is planned, synced() is E_CLOSED", async () => {
  const { db, link, connection, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, { writers: [] });
  await until(() => link.status === "synced", "synced");
  await db.close();
  assert.equal(link.status, "closed");
  assert.equal(connection.closed?.by, "client");
  assert.deepEqual(timers.delays(), [], "no reconnect, no timer left");
  await assert.rejects(link.synced(), (err) => isCairnError(err, "E_CLOSED"));
});

test("blocks the server lacked at its catch-up, refused for a while, keep the link catching-up; a synced() called before the catch-up waits for them", async () => {
  const { db, link, connection, timers } = await linked({}, async (_db, notes) => {
    for (let i = 0; i < 3; i++) {
      notes.create(Note, { title: `offline ${i}` });
      await notes.flush();
    }
  });
  await connection.handshake();
  let resolved = false;
  void link.synced().then(() => (resolved = true));
  await serveSubscription(connection, {
    writers: [keyOf(db)],
    serverVector: { [db.session.id]: 0 },
  });
  const push = await connection.expect("push");
  assert.equal(push.frames.length, 3, "the catch-up found the offline blocks");
  const refusal = (index: number, code: string) => ({ index, code, message: code });
  connection.send({
    type: "ack",
    repo: PATH,
    id: push.id,
    applied: 0,
    duplicates: 0,
    position: 0,
    rejected: [refusal(0, "E_IO"), refusal(1, "E_CHAIN_GAP"), refusal(2, "E_CHAIN_GAP")],
  });
  await settle();
  assert.equal(link.status, "catching-up", "three blocks the server lacks wait for a retry");
  assert.equal(resolved, false);
  timers.runNext(); // the retry
  ack(connection, await connection.expect("push"));
  await until(() => resolved, "synced() resolved");
  assert.equal(link.status, "synced");
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("offline blocks of two repositories, more than the push window holds: synced, and synced() resolved, only once every one is acknowledged", async () => {
  const title = (i: number) => `${"x".repeat(1500)} ${i}`;
  const { db, link, connection } = await linked({ maxFrame: 8192 }, async (db, notes) => {
    const other = await db.open("/other");
    for (let i = 0; i < 20; i++) {
      notes.create(Note, { title: title(i) });
      other.create(Note, { title: title(i) });
      await Promise.all([notes.flush(), other.flush()]);
    }
  });
  await connection.handshake({ maxFrame: 8192, heartbeatMs: 15_000 });
  let resolved = false;
  void link.synced().then(() => (resolved = true));
  for (const type of ["subscribe", "credit", "subscribe", "credit"] as const) {
    await connection.expect(type);
  }
  // /other caught up first: its pushes fill the window, and those of /notes wait for room.
  for (const repo of ["/other", PATH]) {
    connection.send({ type: "members", repo, writers: [keyOf(db)], canWrite: true });
    connection.send({
      type: "synced",
      repo,
      cursor: ["epoch-1", 0],
      versionVector: { [db.session.id]: 0 },
    });
    await settle();
  }
  const held: Extract<Frame, { type: "push" }>[] = [];
  const answer = async (ackNotes: boolean) => {
    for (const frame of await connection.unreadFrames()) {
      if (frame.type !== "push") continue;
      if (frame.repo === "/other" || ackNotes) ack(connection, frame);
      else held.push(frame);
    }
    await settle();
  };
  for (let round = 0; round < 50; round++) await answer(false);
  assert.ok(held.length > 0);
  assert.equal(link.status, "catching-up", "/notes's offline blocks are not acknowledged");
  assert.equal(resolved, false);
  assert.ok(link.unacknowledged >= 20, `${link.unacknowledged} unacknowledged`);
  for (const push of held) ack(connection, push);
  while (!resolved) await answer(true);
  assert.equal(link.status, "synced");
  assert.equal(link.unacknowledged, 0);
  await link.close();
});

test("a repository closed and opened again while it catches up gets a new socket: the old subscription's frames cannot pass for the new one's", async () => {
  const alice = await writer(5);
  const { db, link, connection, server } = await linked();
  await db.trust(alice.db.session.publicKey);
  await connection.handshake();
  await connection.expect("subscribe");
  await connection.expect("credit");
  connection.send({ type: "members", repo: PATH, writers: [keyOf(alice.db)], canWrite: true });
  await db.close(PATH);
  connection.send({ type: "blocks", repo: PATH, frames: alice.frames }); // dropped: closed
  await settle();
  const accepting = server.accept();
  const notes = await db.open(PATH);
  await connection.expect("unsubscribe");
  assert.deepEqual(connection.closed, {
    by: "client",
    code: 1000,
    reason: "a repository was opened again",
  });
  // What the server sent for the first subscription before it read the unsubscribe: lost with
  // the old socket, where the new link would have taken it as its own catch-up.
  connection.send({ type: "synced", repo: PATH, cursor: ["epoch-1", 5], versionVector: {} });
  const again = await accepting;
  await again.handshake();
  let resolved = false;
  void link.synced().then(() => (resolved = true));
  await settle();
  assert.equal(resolved, false);
  assert.notEqual(link.status, "synced");
  const subscribe = await serveSubscription(again, {
    writers: [keyOf(alice.db)],
    frames: alice.frames,
  });
  assert.equal(subscribe.cursor, null, "no cursor taken from the old subscription");
  await until(() => resolved, "synced() resolved");
  assert.equal(notes.count(), 5);
  await link.close();
  await alice.db.close();
});

test("synced() resolves once connected when no open repository is to sync", async () => {
  const { link, connection } = await linked({ repositories: ["/not-open"] });
  let resolved = false;
  const synced = link.synced().then(() => resolved = true);
  await settle();
  assert.equal(resolved, false, "not before the link is up");
  await connection.handshake();
  await until(() => resolved, "synced() resolved");
  await synced;
  assert.equal(link.status, "synced");
  await link.close();
});

test("synced() resolves when the repository still catching up closes", async () => {
  const { db, link, connection } = await linked();
  await connection.handshake();
  await connection.expect("subscribe");
  await connection.expect("credit");
  assert.equal(link.status, "catching-up");
  let resolved = false;
  const synced = link.synced().then(() => resolved = true);
  await settle();
  assert.equal(resolved, false, "waits for the catch-up");
  await db.close(PATH);
  await connection.expect("unsubscribe");
  await until(() => resolved, "synced() resolved");
  await synced;
  assert.equal(link.status, "synced");
  await link.close();
});

test("sync() checks its arguments with typed errors", async () => {
  const db = await Cairn.open();
  const bad = [
    ["http://x", {}],
    ["ws://x", { maxFrame: 10 }],
    ["ws://x", { token: 5 }],
    ["ws://x", { repositories: ["no-slash"] }],
    ["ws://x", { backoff: { initialMs: 0, maxMs: 1 } }],
    ["ws://x", { colour: "red" }],
  ] as const;
  for (const [url, options] of bad) {
    assert.throws(
      () => syncWith(db, url, options as never, {}),
      (err) => isCairnError(err, "E_BAD_ARGUMENT") || isCairnError(err, "E_BAD_PATH"),
      JSON.stringify(options),
    );
  }
  assert.throws(() => syncWith({} as never, "ws://x", {}, {}), (err) => isCairnError(err));
  const trusted = await Cairn.open({ trusted: true });
  assert.throws(() => syncWith(trusted, "ws://x", {}, {}), (err) => isCairnError(err));
});

test("a malformed server URL is refused at once, naming it, and no socket is opened", async () => {
  const db = await Cairn.open();
  const timers = new ManualTimers();
  const opened: string[] = [];
  const seams = {
    socket: (url: string): never => {
      opened.push(url);
      throw new SyntaxError(`the constructor refuses ${url}`);
    },
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
  };
  // URLs every runtime's parser refuses (Chromium's takes "ws://bad host", for one).
  for (const url of ["ws://:80", "wss://[::1", "ws://sync.test/#fragment"]) {
    assert.throws(
      () => syncWith(db, url, {}, seams),
      (err) => isCairnError(err, "E_BAD_ARGUMENT") && err.message.includes(url),
      url,
    );
  }
  assert.deepEqual(opened, []);
});

test("after a reconnect by cursor, members adds writers; by version vector it replaces them", async () => {
  const alice = await writer(2);
  const mallory = await writer(1);
  const { notes, link, connection, server, timers } = await linked();
  await connection.handshake();
  await serveSubscription(connection, {
    writers: [keyOf(alice.db)],
    frames: alice.frames.slice(0, 1),
    cursor: ["e", 1],
  });
  await until(() => link.status === "synced", "synced");
  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  // By cursor: only the writer added since is listed; alice stays trusted.
  await serveSubscription(again, { writers: [keyOf(mallory.db)], cursor: ["e", 1] });
  again.send({
    type: "live",
    repo: PATH,
    frames: [alice.frames[1], ...mallory.frames],
    position: 3,
  });
  await until(() => notes.count() === 3, "alice's and mallory's blocks applied");

  // By version vector (after a reset), the list is whole: alice is no longer listed.
  again.send({ type: "reset", repo: PATH });
  const subscribe = await again.expect("subscribe");
  assert.equal(subscribe.cursor, null);
  await again.expect("credit");
  again.send({ type: "members", repo: PATH, writers: [keyOf(mallory.db)], canWrite: true });
  alice.notes.create(Note, { title: "later" });
  const later = await alice.notes.exportBlocks(notes.versionVector());
  again.send({ type: "live", repo: PATH, frames: later, position: 4 });
  await until(() => link.lastError !== undefined, "refused");
  assert.ok(isCairnError(link.lastError, "E_UNTRUSTED_SESSION"));
  assert.equal(notes.count(), 3);
  await link.close();
});

test("after a refused block the cursor is dropped: the next subscription asks by version vector", async () => {
  const alice = await writer(2);
  const { notes, link, connection, server, timers } = await linked();
  await connection.handshake();
  const altered = alice.frames[1].slice();
  altered[altered.length - 1] ^= 1; // the signature's last byte
  await serveSubscription(connection, {
    writers: [keyOf(alice.db)],
    frames: [alice.frames[0], altered],
    cursor: ["e", 2],
  });
  await until(() => link.status === "synced", "synced");
  assert.equal(notes.count(), 1);
  connection.close(1006);
  await until(() => link.status === "offline", "offline");
  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  const subscribe = await serveSubscription(again, {
    writers: [keyOf(alice.db)],
    frames: alice.frames.slice(1),
    cursor: ["e", 2],
  });
  assert.equal(subscribe.cursor, null);
  assert.deepEqual(subscribe.versionVector, { [alice.db.session.id]: 1 });
  await until(() => notes.count() === 2, "the genuine block applied");
  await link.close();
});

test("a socket lost while the server's vector is read: what the server lacks is still pushed", async () => {
  const { db, notes, link, connection, server, timers } = await linked({}, async (_db, notes) => {
    // Written before the link existed (as after an app restart): the link learns of these
    // blocks only from the server's version vector.
    for (let i = 0; i < 3; i++) {
      notes.create(Note, { title: `old ${i}` });
      await notes.flush();
    }
  });
  const serverVector = { [db.session.id]: 1 };
  await connection.handshake();
  // The socket goes while the client reads what to push after `synced` (a cursor kept from that
  // synced, with nothing queued, made the next subscription skip those blocks for good).
  const exportNamedBlocks = Repository.prototype.exportNamedBlocks;
  Repository.prototype.exportNamedBlocks = function (since) {
    connection.close(1006);
    return exportNamedBlocks.call(this, since);
  };
  try {
    await serveSubscription(connection, { writers: [], cursor: ["epoch-1", 5], serverVector });
    await until(() => link.status === "offline", "offline");
  } finally {
    Repository.prototype.exportNamedBlocks = exportNamedBlocks;
  }

  timers.runNext();
  const again = await server.accept();
  await again.handshake();
  const subscribe = await again.expect("subscribe");
  await again.expect("credit");
  again.send({ type: "members", repo: PATH, writers: [], canWrite: true });
  // A server answers a subscription by cursor without its vector, by vector with it.
  again.send({
    type: "synced",
    repo: PATH,
    cursor: ["epoch-1", 5],
    versionVector: subscribe.cursor ? null : serverVector,
  });
  const push = await again.expect("push");
  assert.deepEqual(push.frames, await notes.exportBlocks(serverVector));
  ack(again, push);
  await link.synced();
  await link.close();
});
