/**
 * The tab coordination parts on Chromium's real Web Locks and BroadcastChannel, within one page
 * (locks and channels do not tell pages apart: two requests of one page contend as two tabs do,
 * and two BroadcastChannel objects of one name hear each other): holdLock's ifAvailable and
 * steal, an election with a closed and a silent leader, and repositories linked over a real
 * channel converging. Waits are bounded loops on state, never assertions on time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, watchRepositories } from "../../src/db/database.ts";
import { defineSchema } from "../../src/core/schema.ts";
import type { RepositoryHandle } from "../../src/db/repository_handle.ts";
import type { Repository } from "../../src/repo/repository.ts";
import { openTabChannel } from "../../src/tabs/broadcast_channel.ts";
import { Election, HEARTBEAT_MS } from "../../src/tabs/election.ts";
import { holdLock, type LockManagerLike } from "../../src/tabs/locks.ts";
import { FollowerRepositoryLink, LeaderRepositoryLink } from "../../src/tabs/repository_link.ts";
import { decodeTabMessage } from "../../src/tabs/tab_messages.ts";
import { OPTIONAL_TITLE } from "../harness/schemas.ts";

const Note = defineSchema(OPTIONAL_TITLE);
const locks = navigator.locks as unknown as LockManagerLike;

/** Waits until `condition()` holds, for at most `limitMs` (then fails, naming `what`). */
async function until(condition: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("holdLock on real Web Locks: ifAvailable finds it held, a steal makes the holder's lost resolve", async () => {
  const name = `cairn-test:${crypto.randomUUID()}`;
  const first = await holdLock(locks, name);
  assert.ok(first);
  assert.equal(await holdLock(locks, name, { ifAvailable: true }), undefined);
  let lost = false;
  void first.lost.then(() => lost = true);
  const thief = await holdLock(locks, name, { steal: true });
  assert.ok(thief);
  await until(() => lost, "the stolen holder learns it");
  thief.release();
  // The browser frees a released lock asynchronously: ask until it is granted.
  let again;
  const end = Date.now() + 10_000;
  while (!again && Date.now() < end) again = await holdLock(locks, name, { ifAvailable: true });
  assert.ok(again, "released locks are free again");
  again.release();
});

test("an election on real locks and a real channel: one leader, a closed one replaced, a silent one stolen from", async () => {
  const directory = `cairn-test/${crypto.randomUUID()}`;
  const tabs = ["a", "b", "c"].map((name) => {
    const channel = openTabChannel(directory);
    const state = {
      name,
      events: [] as string[],
      silent: false,
      election: undefined as unknown as Election,
      channel,
    };
    state.election = new Election(
      directory,
      { locks, now: () => Date.now(), visible: () => true },
      {
        becameLeader: (term) => state.events.push(`leader ${term}`),
        lostLead: () => state.events.push("lost"),
        sendHeartbeat: (term) => channel.post({ type: "heartbeat", leader: name, term }),
        sendProbe: () => channel.post({ type: "probe", from: name }),
      },
    );
    channel.listen((value) => {
      const message = decodeTabMessage(value);
      if (message.type === "heartbeat") state.election.heardHeartbeat(message.term);
      // A silent tab stands for a frozen one: it answers nothing either.
      if (message.type === "probe" && !state.silent) state.election.heardProbe();
    });
    return state;
  });
  const timers = tabs.map((tab) =>
    setInterval(() => {
      if (!tab.silent) tab.election.tick();
    }, HEARTBEAT_MS)
  );
  try {
    for (const tab of tabs) tab.election.start();
    const leaders = () => tabs.filter((t) => t.election.role === "leader").map((t) => t.name);
    await until(() => leaders().length === 1, "one leader");
    const first = tabs.find((t) => t.election.role === "leader")!;
    const firstTerm = first.election.term;
    first.election.close();
    await until(() => leaders().length === 1, "a second leader after the first closed");
    const second = tabs.find((t) => t.election.role === "leader")!;
    assert.notEqual(second, first);
    const secondTerm = second.election.term;
    assert.ok(secondTerm > firstTerm, `terms ${firstTerm}, ${secondTerm}`);
    // Silent (as if frozen): the remaining follower steals, and the silent one steps down.
    second.silent = true;
    const third = tabs.find((t) => t !== first && t !== second)!;
    await until(() => third.election.role === "leader", "the follower steals");
    await until(() => second.election.role === "follower", "the silent leader steps down");
    assert.deepEqual(second.events, [`leader ${secondTerm}`, "lost"]);
    assert.ok(third.election.term > secondTerm);
  } finally {
    for (const timer of timers) clearInterval(timer);
    for (const tab of tabs) {
      tab.election.close();
      tab.channel.close();
    }
  }
});

test("repositories linked over a real BroadcastChannel converge, and a follower's flush is acknowledged", async () => {
  const directory = `cairn-test/${crypto.randomUUID()}`;
  const dbs = await Promise.all([0, 1, 2].map(() => Cairn.open({ schemas: [Note] })));
  for (const db of dbs) {
    for (const other of dbs) if (db !== other) await db.trust(other.session.publicKey);
  }
  const repos: Repository[] = [];
  const handles: RepositoryHandle[] = [];
  for (const db of dbs) {
    watchRepositories(db, { opened: (repo) => repos.push(repo), closed: () => {} });
    handles.push(await db.open("/notes"));
  }
  const channels = dbs.map(() => openTabChannel(directory));
  const leader = new LeaderRepositoryLink(
    { tab: "t0", channel: channels[0], repo: repos[0] },
    () => handles[0].flush(),
  );
  const followers = [1, 2].map((i) =>
    new FollowerRepositoryLink({
      tab: `t${i}`,
      channel: channels[i],
      repo: repos[i],
      isLeader: (tab) => tab === "t0",
    })
  );
  try {
    await Promise.all(followers.map((f) => f.load()));
    for (let round = 0; round < 20; round++) {
      handles.forEach((notes, i) => notes.create(Note, { title: `${i}.${round}` }));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await Promise.all(followers.map((f) => f.flush()));
    await until(() => handles.every((notes) => notes.count() === 60), "every tab holds every note");
    assert.deepEqual(followers.map((f) => f.unacknowledged), [0, 0]);
  } finally {
    leader.close();
    for (const f of followers) f.close();
    for (const channel of channels) channel.close();
    for (const db of dbs) await db.close();
  }
});
