/**
 * A hostile server, at random: after the handshake it sends genuine frames, genuine frames with
 * bytes flipped, cut or appended, and random bytes, in a seeded order. Whatever comes, the client
 * reports only CairnErrors, never applies a block that is not genuine, and recovers: after the
 * storm a well-behaved server still syncs it. CAIRN_SYNC_FUZZ=N runs N messages (default 300),
 * CAIRN_SYNC_FUZZ_SEED=S replays seed S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn } from "../../src/db/database.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { encodeFrame, type Frame } from "../../src/sync/protocol.ts";
import type { FakeConnection } from "../harness/fake_sync_server.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";
import { ack, keyOf, linked, Note, PATH, settle, until } from "../harness/linked_client.ts";

const MESSAGES = envInteger("CAIRN_SYNC_FUZZ") ?? 300;
const SEED = envInteger("CAIRN_SYNC_FUZZ_SEED") ?? 20261126;

test(`a hostile server cannot crash the client or slip a block past it (${MESSAGES} messages, seed ${SEED})`, async () => {
  const random = seededRandom(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const alice = await Cairn.open({ schemas: [Note] });
  const aliceNotes = await alice.open(PATH);
  const genuine = new Set<string>();
  for (let i = 0; i < 6; i++) {
    genuine.add(aliceNotes.create(Note, { title: `genuine ${i}` }).key);
    await aliceNotes.flush();
  }
  const blocks = await aliceNotes.exportBlocks();
  const { notes, link, server, timers, connection, errors } = await linked({ maxFrame: 8192 });

  const frames: Frame[] = [
    { type: "members", repo: PATH, writers: [keyOf(alice)], canWrite: true },
    { type: "blocks", repo: PATH, frames: blocks.slice(0, 3) },
    { type: "live", repo: PATH, frames: blocks.slice(3), position: 6 },
    { type: "synced", repo: PATH, cursor: ["e", 6], versionVector: {} },
    { type: "ping", n: 3 },
    { type: "reset", repo: PATH },
    { type: "denied", repo: PATH, right: "write", code: "E_FORBIDDEN", message: "no" },
    { type: "ack", repo: PATH, id: 1, applied: 1, duplicates: 0, rejected: [], position: 2 },
    { type: "welcome" },
    { type: "goaway", reason: "x", retryAfterMs: 5 },
  ];
  const mutate = (bytes: Uint8Array): Uint8Array | string => {
    const copy = bytes.slice();
    switch (Math.floor(random() * 5)) {
      case 0:
        return copy; // genuine
      case 1:
        for (let i = 0; i < 1 + random() * 3; i++) {
          copy[Math.floor(random() * copy.length)] ^= 1 << Math.floor(random() * 8);
        }
        return copy;
      case 2:
        return copy.slice(0, Math.floor(random() * copy.length));
      case 3:
        return Uint8Array.from({ length: Math.floor(random() * 64) }, () => random() * 256);
      default:
        return random() < 0.5 ? "text" : new Uint8Array(9000);
    }
  };

  let current: FakeConnection = connection;
  let handshaken = false;
  try {
    for (let i = 0; i < MESSAGES; i++) {
      if (current.closed) {
        // The client dropped the socket: let it reconnect.
        await until(() => link.status === "offline", "offline");
        timers.runNext();
        current = await server.accept();
        handshaken = false;
      }
      if (!handshaken) {
        await current.handshake({ maxFrame: 8192, heartbeatMs: 15_000 });
        handshaken = true;
      }
      current.sendRaw(mutate(encodeFrame(pick(frames))));
      await settle(5);
    }
    assert.ok(errors.every((err) => isCairnError(err)), "only CairnErrors are reported");
    for (const key of notes.keys()) assert.ok(genuine.has(key), `${key} is not alice's`);

    // A well-behaved server after the storm: everything arrives, and a write is acknowledged.
    current.close(1006);
    await until(() => link.status === "offline", "offline");
    timers.runNext();
    const good = await server.accept();
    await good.handshake({ maxFrame: 8192, heartbeatMs: 15_000 });
    const subscribe = await good.expect("subscribe");
    await good.expect("credit");
    assert.equal(subscribe.repo, PATH);
    good.send({ type: "members", repo: PATH, writers: [keyOf(alice)], canWrite: true });
    good.send({ type: "blocks", repo: PATH, frames: blocks });
    good.send({ type: "synced", repo: PATH, cursor: ["e", 6], versionVector: null });
    // What the storm's servers claimed to lack is pushed again: acknowledge it all.
    for (let i = 0; i < 200 && link.status !== "synced"; i++) {
      for (const frame of await good.unreadFrames()) if (frame.type === "push") ack(good, frame);
      await settle();
    }
    assert.equal(link.status, "synced");
    assert.deepEqual([...notes.keys()].sort(), [...genuine].sort());
    notes.create(Note, { title: "after the storm" });
    let push;
    do push = await good.next(); while (push.type !== "push");
    ack(good, push);
    await link.synced();
  } catch (err) {
    throw new Error(`sync fuzz failed (replay: CAIRN_SYNC_FUZZ_SEED=${SEED})`, { cause: err });
  } finally {
    await link.close();
  }
});
