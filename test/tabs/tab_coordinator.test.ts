/**
 * One tab's coordinator (src/tabs/tab_coordinator.ts) on fake locks and a fake channel, with
 * in-memory databases standing for the stored one: a follower is welcomed with the stored
 * secret and a key index of its own (hostile values, and welcomes not matching its join
 * that arrive before the leader's, change nothing), loads from the leader and is acknowledged once the leader
 * persisted; when the leader's tab crashes with a write unacknowledged, the next tab opens the
 * storage (waiting while it is still locked, or while it fails) and that write reaches it; a push
 * that finds its repository closed by the leader's own page is stored once it is opened again,
 * and so are two pushes in flight then; a tab that led since
 * its open and loses the lead to a steal is told so; a reloaded page whose old self holds the
 * lead a moment longer leads itself rather than taking over; a tab past the pool's size gets
 * E_LOCKED; heartbeats and servings with forged huge terms throw nothing and stop no takeover;
 * a leader's own block lost in its crash before it was persisted is persisted by the next leader
 * from its tab, so the tab that takes the old leader's key continues that key's chain; a leader
 * stolen from while frozen sends the tabs what its close stores, and a leader's block stored but
 * never sent (it crashed in between) is sent to every tab by the next leader, so no tab refuses
 * that session's later blocks; answers (persisted, flushed, loaded, welcome) count only from the
 * leader, and another release's heartbeats posted while a leader of this one is heard fail
 * nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { toBase64Url } from "../../src/core/bytes.ts";
import { CairnError, isCairnError } from "../../src/core/errors.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { HEARTBEAT_MS } from "../../src/tabs/election.ts";
import { type Persister, TabCoordinator } from "../../src/tabs/tab_coordinator.ts";
import { MAX_TABS, tabSecret } from "../../src/tabs/tab_keys.ts";
import { TAB_PROTOCOL, type TabMessage } from "../../src/tabs/tab_messages.ts";
import { Note, PATH } from "../harness/linked_client.ts";
import {
  environment,
  fakes,
  openDatabase,
  persisting,
  settled,
  titles,
} from "../harness/tab_fakes.ts";
import { waitFor } from "../harness/wait.ts";

test("a follower gets the stored secret and a key of its own, loads from the leader, and is acknowledged once persisted", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  stored.notes.create(Note, { title: "stored" });
  let persists = 0;
  const a = await TabCoordinator.join(environment(fake, "a"));
  assert.equal(a.leads, true);
  a.coordinator.lead(persisting(stored.db, () => {
    persists++;
    return stored.db.flush();
  }));

  const b = await TabCoordinator.join(environment(fake, "b"));
  assert.equal(b.leads, false);
  assert.deepEqual([a.coordinator.keyIndex, b.coordinator.keyIndex], [0, 1]);
  const secret = b.storedSecret!;
  assert.equal(toBase64Url(secret), toBase64Url(stored.db.exportSecretKey()));

  const front = await openDatabase(await tabSecret(await cryptoSuite(), secret, 1));
  const link = await b.coordinator.follow(front.repo);
  assert.deepEqual(titles(front), ["stored"]);
  front.notes.create(Note, { title: "from b" });
  await settled(link.flush(), "the write acknowledged by the leader");
  assert.ok(persists > 0);
  assert.deepEqual(titles(stored), ["from b", "stored"]);
  assert.deepEqual(fake.refused, []);

  await b.coordinator.close();
  await a.coordinator.close();
  await Promise.all([stored.db.close(), front.db.close()]);
});

test("hostile messages around a join: garbage is reported, welcomes not matching the join are ignored", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  // Made before the leader's ends: what it posts in answer to a join arrives before the leader's.
  const evil = fake.channels.end("evil");
  const forged = new Uint8Array(32).fill(9);
  evil.listen((value) => {
    const join = value as { type?: string; from?: string; id?: number };
    if (join.type !== "join") return;
    evil.post({ type: "welcome", from: "evil", to: "someone-else", id: join.id!, secret: forged });
    evil.post({ type: "welcome", from: "evil", to: join.from!, id: join.id! + 1, secret: forged });
  });
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db));
  const garbage: unknown[] = [
    null,
    7,
    "join",
    { protocol: TAB_PROTOCOL, type: "join" },
    { protocol: TAB_PROTOCOL, type: "welcome", to: "x" },
  ];
  for (const value of garbage) evil.postRaw(value);

  const b = await TabCoordinator.join(environment(fake, "b"));
  const welcomes = fake.channels.posted.filter((message) => message.type === "welcome");
  assert.equal(welcomes.length, 3, "two forged welcomes, then the leader's");
  assert.equal(toBase64Url(b.storedSecret!), toBase64Url(stored.db.exportSecretKey()));
  await waitFor(() => fake.refused.length >= garbage.length, "each undecodable value reported");
  assert.ok(fake.refused.every((err) => isCairnError(err) && err.code === "E_PROTOCOL"));
  await b.coordinator.close();
  await a.coordinator.close();
  await stored.db.close();
});

test("a follower's flushLeader waits for the leader to flush all it stored; a failed flush is E_IO; one left unanswered goes to the next leader", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  const flushes: { by: string; end(err?: Error): void }[] = [];
  const flushOf = (by: string) => () =>
    new Promise<void>((resolve, reject) => {
      flushes.push({ by, end: (err) => err ? reject(err) : resolve() });
    });
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, undefined, flushOf("a")));
  const b = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => Promise.resolve(persisting(stored.db, undefined, flushOf("b"))),
  }));

  // Resolved only once the leader's flush is.
  let done = false;
  const first = b.coordinator.flushLeader().then(() => done = true);
  await waitFor(() => flushes.length === 1, "the leader asked to flush");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(done, false, "resolved before the leader flushed");
  flushes[0].end();
  await settled(first, "the flush answered");

  // The leader's failure is the follower's, typed.
  const failing = assert.rejects(
    b.coordinator.flushLeader(),
    (err) => isCairnError(err, "E_IO") && /the disk is full/.test(err.message),
  );
  await waitFor(() => flushes.length === 2, "the leader asked again");
  flushes[1].end(new CairnError("E_IO", "the disk is full"));
  await settled(failing, "the failure answered");

  // A leader closing while it flushes does not answer; the next one is asked.
  const across = b.coordinator.flushLeader();
  await waitFor(() => flushes.length === 3, "the leader asked a third time");
  flushes[2].end(new CairnError("E_CLOSED", "the database is closing"));
  await a.coordinator.close();
  await waitFor(() => flushes.length === 4, "the next leader asked");
  assert.equal(flushes[3].by, "b", "asked of b, now serving");
  flushes[3].end();
  await settled(across, "the flush answered by the next leader");

  // Closing the tab ends a flush still waiting.
  const waiting = assert.rejects(
    b.coordinator.flushLeader(),
    (err) => isCairnError(err, "E_CLOSED"),
  );
  await b.coordinator.close();
  await waiting;
  assert.deepEqual(fake.refused, []);
  await stored.db.close();
});

/**
 * Tab a leads and never acknowledges (its persisting never ends); tab b, whose storage opens
 * by `openPersister` once it leads, follows with a write of `title` not yet acknowledged; then
 * a's tab crashes. Resolves with b's flush of that write.
 */
async function leaderCrashesWithAWritePending(
  stored: Awaited<ReturnType<typeof openDatabase>>,
  openPersister: () => Promise<Persister>,
  title: string,
) {
  const fake = fakes();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, () => new Promise(() => {})));
  const b = await TabCoordinator.join(environment(fake, "b", { openPersister }));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  front.notes.create(Note, { title });
  const flushed = link.flush();
  await waitFor(() => link.unacknowledged === 1, "the write pushed, not acknowledged");
  fake.channels.drop("a");
  fake.locks.crash("a");
  const close = async () => {
    await b.coordinator.close();
    await a.coordinator.close();
    await Promise.all([stored.db.close(), front.db.close()]);
  };
  return { fake, flushed, close };
}

test("the leader's tab crashes with a write unacknowledged: the next tab opens the storage when it is free and gets the write", async () => {
  const stored = await openDatabase();
  let attempts = 0;
  const { flushed, close } = await leaderCrashesWithAWritePending(stored, () => {
    // The old leader's worker holds the files for a moment after its lock is gone.
    if (++attempts < 3) return Promise.reject(new CairnError("E_LOCKED", "still held"));
    return Promise.resolve(persisting(stored.db, () => stored.db.flush()));
  }, "written before the crash");
  // Acknowledged by this tab's own persister, once it could open the storage.
  await settled(flushed, "the write acknowledged by the next leader");
  assert.equal(attempts, 3);
  assert.ok(titles(stored).includes("written before the crash"));
  await close();
});

test("a tab granted the lead whose storage fails to open keeps trying, and serves once it opens", async () => {
  const stored = await openDatabase();
  let attempts = 0;
  const { fake, flushed, close } = await leaderCrashesWithAWritePending(stored, () => {
    if (++attempts < 4) return Promise.reject(new CairnError("E_IO", "the storage failed"));
    return Promise.resolve(persisting(stored.db, () => stored.db.flush()));
  }, "waits for a working leader");
  await settled(flushed, "the write acknowledged once the storage opened");
  assert.equal(attempts, 4);
  assert.ok(titles(stored).includes("waits for a working leader"));
  const failures = fake.refused.filter((err) => isCairnError(err, "E_IO"));
  assert.equal(failures.length, 1, "the same failure is reported once");
  await close();
});

test("a push that finds its repository closed by the leader's own page is stored once it is opened again", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  let persists = 0;
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, async () => {
    // The leading page closes the repository while the follower's push is being persisted.
    if (persists++ === 0) await stored.db.close(PATH);
    await stored.db.flush();
  }));
  const b = await TabCoordinator.join(environment(fake, "b"));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  front.notes.create(Note, { title: "while it closed" });
  await settled(link.flush(), "the write acknowledged once the repository was opened again");
  assert.equal(persists, 2);
  const reopened = await stored.db.open(PATH);
  const storedTitles = [...reopened.keys()].map((key) => reopened.get(key, Note)!.get("title"));
  assert.deepEqual(storedTitles, ["while it closed"]);
  await b.coordinator.close();
  await a.coordinator.close();
  await Promise.all([stored.db.close(), front.db.close()]);
});

test("two pushes being persisted when the leader's own page closes the repository are both stored and acknowledged", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  const gates: (() => void)[] = [];
  let persists = 0;
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, async () => {
    if (persists++ < 2) await new Promise<void>((resolve) => gates.push(resolve));
    await stored.db.flush();
  }));
  const b = await TabCoordinator.join(environment(fake, "b"));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  front.notes.create(Note, { title: "one" });
  await waitFor(() => gates.length === 1, "the first push being persisted");
  front.notes.create(Note, { title: "two" });
  await waitFor(() => gates.length === 2, "both pushes being persisted");
  const flushed = link.flush();
  await stored.db.close(PATH); // the leading page closes the repository
  for (const open of gates) open();
  await settled(flushed, "both writes acknowledged once the repository was opened again");
  const reopened = await stored.db.open(PATH);
  const storedTitles = [...reopened.keys()].map((key) => reopened.get(key, Note)!.get("title"));
  assert.deepEqual(storedTitles.sort(), ["one", "two"]);
  await b.coordinator.close();
  await a.coordinator.close();
  for (const { db } of [stored, front]) await db.close();
});

test("a tab that led since its open and loses the lead to a steal is told to close", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  let tookOver = false;
  const a = await TabCoordinator.join(environment(fake, "a", { tookOver: () => tookOver = true }));
  a.coordinator.lead(persisting(stored.db));
  const b = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => Promise.resolve(persisting(stored.db)),
  }));
  // A frozen leader: its heartbeats stop reaching anyone, but it keeps its locks.
  fake.channels.drop("a");
  await waitFor(() => tookOver, "the frozen leader told it was taken over");
  assert.equal(fake.locks.holder("cairn:leader:cairn/db"), "b");
  await b.coordinator.close();
  await a.coordinator.close();
  await stored.db.close();
});

test("a tab that finds the lead held by a page going away, before it answers, leads with the storage itself", async () => {
  const fake = fakes();
  // A page being unloaded: it still holds the lead, and never answers.
  const old = await TabCoordinator.join(environment(fake, "old"));
  const reloaded = TabCoordinator.join(environment(fake, "reloaded", {
    openPersister: () => Promise.reject(new Error("took over beside its own database")),
  }));
  fake.channels.drop("old");
  fake.locks.crash("old");
  const { coordinator, leads, storedSecret } = await settled(reloaded, "the reloaded page opens");
  assert.deepEqual([leads, storedSecret], [true, undefined]);
  assert.deepEqual(fake.refused, []);
  await coordinator.close();
  await old.coordinator.close();
});

test("a tab past the pool's size gets E_LOCKED and holds nothing", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  const tabs = [];
  for (let i = 0; i < MAX_TABS; i++) {
    const { coordinator, leads } = await TabCoordinator.join(environment(fake, `t${i}`));
    if (leads) coordinator.lead(persisting(stored.db));
    tabs.push(coordinator);
  }
  await assert.rejects(
    TabCoordinator.join(environment(fake, "one-too-many")),
    (err) => isCairnError(err) && err.code === "E_LOCKED",
  );
  assert.equal(fake.locks.holder(`cairn:session-key:cairn/db:${MAX_TABS}`), undefined);
  for (const tab of tabs) await tab.close();
  await stored.db.close();
});

test("hostile heartbeats and servings with huge terms: nothing throws, and the next tab still takes over", async () => {
  // A rejection nobody handles, or a throw from the heartbeat timer, fails the test.
  const fake = fakes();
  const stored = await openDatabase();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, () => new Promise(() => {})));
  const b = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => Promise.resolve(persisting(stored.db, () => stored.db.flush())),
  }));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  const evil = fake.channels.end("evil");
  for (const term of [Number.MAX_SAFE_INTEGER, 2 ** 60, 2 ** 52]) {
    evil.postRaw({ protocol: TAB_PROTOCOL, type: "heartbeat", leader: "evil", term });
    evil.postRaw({ protocol: TAB_PROTOCOL, type: "serving", leader: "evil", term });
  }
  front.notes.create(Note, { title: "after the hostile terms" });
  const flushed = link.flush();
  await waitFor(() => link.unacknowledged === 1, "the write pushed, not acknowledged");
  fake.channels.drop("a");
  fake.locks.crash("a");
  await settled(flushed, "the write acknowledged by the next leader");
  assert.ok(titles(stored).includes("after the hostile terms"));
  // A few heartbeats of the new leader, from its timer.
  await new Promise((resolve) => setTimeout(resolve, 2 * HEARTBEAT_MS + 100));
  await b.coordinator.close();
  await a.coordinator.close();
  await Promise.all([stored.db.close(), front.db.close()]);
});

test("the leader crashes before persisting its own write: the next leader persists it from its tab, and the tab taking the old leader's key continues its chain", async () => {
  const fake = fakes();
  const a = await openDatabase(); // the leading tab's database: the stored one
  const secret = a.db.exportSecretKey();
  const joinedA = await TabCoordinator.join(environment(fake, "a"));
  joinedA.coordinator.lead(persisting(a.db, () => new Promise(() => {}))); // never persists
  // What the storage holds after the crash: nothing of the write (a fresh database, same secret).
  const disk = await openDatabase(secret);
  const joinedB = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => Promise.resolve(persisting(disk.db, () => disk.db.flush())),
  }));
  const b = await openDatabase(await tabSecret(await cryptoSuite(), secret, 1));
  const linkB = await joinedB.coordinator.follow(b.repo);
  a.notes.create(Note, { title: "sealed by the leader" });
  await waitFor(() => titles(b).includes("sealed by the leader"), "the leader's block in tab b");
  // A write of b's own that the leader never acknowledges: acknowledged once b serves.
  b.notes.create(Note, { title: "b's pending write" });
  const flushedB = linkB.flush();
  await waitFor(() => linkB.unacknowledged === 1, "b's write pushed, not acknowledged");
  fake.channels.drop("a");
  fake.locks.crash("a");
  await waitFor(() => titles(disk).includes("sealed by the leader"), "b persists the block");
  await settled(flushedB, "b's write acknowledged by b itself");

  // A reload of the crashed tab takes its key (index 0: the stored key) and writes.
  const joinedC = await TabCoordinator.join(environment(fake, "c"));
  assert.equal(joinedC.coordinator.keyIndex, 0);
  const c = await openDatabase(secret);
  const link = await joinedC.coordinator.follow(c.repo);
  assert.deepEqual(titles(c), ["b's pending write", "sealed by the leader"]);
  c.notes.create(Note, { title: "after the reload" });
  await settled(link.flush(), "c's write acknowledged");
  const all = ["after the reload", "b's pending write", "sealed by the leader"];
  await waitFor(() => titles(b).length === 3, "c's write in tab b");
  assert.deepEqual([titles(b), titles(c), titles(disk)], [all, all, all]);
  assert.deepEqual(fake.refused, []);

  for (const joined of [joinedC, joinedB, joinedA]) await joined.coordinator.close();
  await Promise.all([a, b, c, disk].map(({ db }) => db.close()));
});

/**
 * A tab of another release of Cairn, standing for a page loaded before a deploy: it queues for
 * the lead and, once it holds it, posts its heartbeats in its version's form (version 0: without
 * `protocol`). Resolves with its leave() once it leads.
 */
async function foreignLeader(fake: ReturnType<typeof fakes>, protocol?: number) {
  const release = await new Promise<() => void>((granted) => {
    fake.locks.forTab("foreign").request(
      "cairn:leader:cairn/db",
      {},
      () => new Promise<void>((done) => granted(done)),
    );
  });
  const channel = fake.channels.end("foreign");
  const version = protocol === undefined ? {} : { protocol };
  const beat = () =>
    channel.postRaw({ ...version, type: "heartbeat", leader: "foreign", term: Date.now() });
  beat();
  const timer = setInterval(beat, HEARTBEAT_MS);
  return () => {
    clearInterval(timer);
    fake.channels.drop("foreign");
    release();
  };
}

test("a tab of another Cairn release leads: an open fails with E_UNSUPPORTED_VERSION and steals nothing", async () => {
  for (const protocol of [undefined, TAB_PROTOCOL + 1]) {
    const fake = fakes();
    const leave = await foreignLeader(fake, protocol);
    await assert.rejects(
      settled(TabCoordinator.join(environment(fake, "new")), "the open answered"),
      (err) =>
        isCairnError(err, "E_UNSUPPORTED_VERSION") &&
        err.message.includes(`tab protocol ${protocol ?? 0}`),
    );
    assert.equal(fake.locks.holder("cairn:leader:cairn/db"), "foreign");
    assert.equal(fake.locks.holder("cairn:session-key:cairn/db:0"), undefined, "key released");
    const reported = fake.refused.filter((err) => isCairnError(err, "E_UNSUPPORTED_VERSION"));
    assert.equal(reported.length, 1);
    leave();
  }
});

test("a follower whose next leader runs another release: its flushes fail, its write is kept for the next leader of its release", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db));
  // A page of another release queues for the lead before this release's follower.
  const foreign = foreignLeader(fake, TAB_PROTOCOL + 1);
  let persisterOpened = false;
  const b = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => {
      persisterOpened = true;
      return Promise.resolve(persisting(stored.db, () => stored.db.flush()));
    },
  }));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  await a.coordinator.close();
  const leave = await settled(foreign, "the other release's page leads");
  front.notes.create(Note, { title: "written under the other release" });
  const unsupported = (err: unknown) => isCairnError(err, "E_UNSUPPORTED_VERSION");
  await assert.rejects(settled(link.flush(), "the link's flush answered"), unsupported);
  await assert.rejects(settled(b.coordinator.flushLeader(), "the db flush answered"), unsupported);
  assert.equal(link.unacknowledged, 1, "the write kept");
  // Beyond the time a follower steals from a leader it does not hear.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  assert.equal(persisterOpened, false, "no steal from a leader heard");
  // The other release's page goes: this tab leads, and the write is stored.
  leave();
  await settled(link.flush(), "the write acknowledged by this release's next leader");
  assert.ok(titles(stored).includes("written under the other release"));
  await b.coordinator.close();
  await Promise.all([stored.db.close(), front.db.close()]);
});

test("a write sealed as this tab takes the lead, before its own link hears it serve, is acknowledged, not refused for the writes before it", async () => {
  const stored = await openDatabase();
  const fake = fakes();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, () => new Promise(() => {}))); // persists nothing
  let channels = 0;
  let asTheLeadMoves = () => {};
  // The storage as the crashed leader left it: without the write it never persisted.
  const storage = await openDatabase(stored.db.exportSecretKey());
  const b = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => Promise.resolve(persisting(storage.db, () => storage.db.flush())),
    openChannel: () => {
      const channel = fake.channels.end("b");
      if (++channels === 2) asTheLeadMoves(); // the promoted leader's channel, before it serves
      return channel;
    },
  }));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  front.notes.create(Note, { title: "left unacknowledged by the crashed leader" });
  await waitFor(() => link.unacknowledged === 1, "the write pushed, not acknowledged");
  let flushed: Promise<void> | undefined;
  asTheLeadMoves = () => {
    front.notes.create(Note, { title: "sealed as the lead moved" });
    flushed = link.flush();
  };
  fake.channels.drop("a");
  fake.locks.crash("a");
  await waitFor(() => flushed !== undefined, "the write sealed as the lead moved");
  // Refused before (E_IO: E_CHAIN_GAP), then stored all the same by the resend.
  await settled(flushed!, "the write acknowledged");
  assert.deepEqual(titles(storage), [
    "left unacknowledged by the crashed leader",
    "sealed as the lead moved",
  ]);
  await b.coordinator.close();
  await a.coordinator.close();
  await Promise.all([stored.db.close(), storage.db.close(), front.db.close()]);
});

/**
 * Tab a leads from database `a` (its log: every block a's repository holds, as `log`), and its
 * posts can be held back (`mute`: frozen, or crashed before it sent); b, next in line, opens
 * the storage from that log once `storageFree` resolves; d follows too (hidden).
 */
async function leaderWithALog(storageFree: Promise<void>, tookOver: () => void = () => {}) {
  const fake = fakes();
  const a = await openDatabase();
  const secret = a.db.exportSecretKey();
  const log: Uint8Array[] = [];
  a.repo.onBlock((block) => log.push(block.bytes()));
  let muted = false;
  const ja = await TabCoordinator.join(environment(fake, "a", {
    openChannel: () => {
      const end = fake.channels.end("a");
      return {
        ...end,
        post: (message) => {
          if (!muted) end.post(message);
        },
      };
    },
    tookOver,
  }));
  ja.coordinator.lead(persisting(a.db));
  let disk: Awaited<ReturnType<typeof openDatabase>> | undefined;
  const jb = await TabCoordinator.join(environment(fake, "b", {
    openPersister: async () => {
      await storageFree;
      disk = await openDatabase(secret);
      await disk.repo.importBlocks(log, "disk", { trustAuthors: true });
      return persisting(disk.db, () => disk!.db.flush());
    },
  }));
  // Hidden: it never steals, so the lead goes to b whatever the timers do.
  const jd = await TabCoordinator.join(environment(fake, "d", { visible: () => false }));
  const suite = await cryptoSuite();
  const b = await openDatabase(await tabSecret(suite, secret, jb.coordinator.keyIndex));
  const d = await openDatabase(await tabSecret(suite, secret, jd.coordinator.keyIndex));
  await jb.coordinator.follow(b.repo);
  await jd.coordinator.follow(d.repo);
  /** A reload of a's page: key 0 again, following b. */
  const reload = async () => {
    const jc = await TabCoordinator.join(environment(fake, "c"));
    assert.equal(jc.coordinator.keyIndex, 0);
    const c = await openDatabase(secret);
    const link = await jc.coordinator.follow(c.repo);
    return { jc, c, link };
  };
  const end = async (...more: { coordinator: TabCoordinator }[]) => {
    for (const j of [...more, jd, jb, ja]) await j.coordinator.close();
    for (const { db } of [a, b, d, disk!]) await db.close();
  };
  return {
    fake,
    a,
    ja,
    b,
    d,
    mute: (on: boolean) => muted = on,
    disk: () => disk,
    reload,
    end,
  };
}

test("a leader stolen from while frozen: what its close stores reaches every tab, which then take that session's later blocks", async () => {
  let thawed: () => void = () => {};
  let closed = () => {};
  const storageFree = new Promise<void>((resolve) => closed = resolve);
  const tabs = await leaderWithALog(storageFree, () => thawed());
  tabs.a.notes.create(Note, { title: "a 1" });
  await waitFor(() => titles(tabs.b).length === 1 && titles(tabs.d).length === 1, "a 1 in b, d");
  // Frozen: a's heartbeats reach nobody, b steals. On the thaw a writes once more and closes
  // (as Cairn.close does when told it was taken over); the files are free only after that.
  tabs.mute(true);
  let closing: Promise<void> | undefined;
  thawed = () => {
    tabs.mute(false);
    tabs.a.notes.create(Note, { title: "a's last" });
    closing = (async () => {
      tabs.ja.coordinator.stopServing();
      await tabs.a.db.close();
      await tabs.ja.coordinator.close();
    })();
  };
  await waitFor(() => closing !== undefined, "a told it was taken over");
  await closing;
  const both = ["a 1", "a's last"];
  await waitFor(
    () => titles(tabs.b).length === 2 && titles(tabs.d).length === 2,
    "a's last block in b and d, sent by a's close (before the next leader opened the storage)",
  );
  assert.deepEqual([titles(tabs.b), titles(tabs.d)], [both, both]);
  closed();
  // a's page reloaded: key 0, whose chain it continues; b and d take it.
  const { jc, c, link } = await tabs.reload();
  assert.deepEqual(titles(c), both);
  c.notes.create(Note, { title: "c" });
  await settled(link.flush(), "c's write acknowledged");
  await waitFor(() => titles(tabs.b).length === 3 && titles(tabs.d).length === 3, "c in b, d");
  assert.deepEqual(tabs.fake.refused, []);
  await tabs.end(jc);
  await c.db.close();
});

test("a leader that crashed between storing its block and sending it: the next leader sends it to every tab", async () => {
  const tabs = await leaderWithALog(Promise.resolve());
  tabs.a.notes.create(Note, { title: "a 1" });
  await waitFor(() => titles(tabs.b).length === 1 && titles(tabs.d).length === 1, "a 1 in b, d");
  tabs.mute(true); // its log holds the next block, then it crashes before sending it
  tabs.a.notes.create(Note, { title: "stored, never sent" });
  await tabs.a.notes.flush();
  tabs.fake.channels.drop("a");
  tabs.fake.locks.crash("a");
  const both = ["a 1", "stored, never sent"];
  await waitFor(
    () => titles(tabs.b).length === 2 && titles(tabs.d).length === 2,
    "the block in b and d, sent by b once it serves",
  );
  assert.deepEqual([titles(tabs.b), titles(tabs.d)], [both, both]);
  const { jc, c, link } = await tabs.reload();
  c.notes.create(Note, { title: "c" });
  await settled(link.flush(), "c's write acknowledged");
  await waitFor(() => titles(tabs.b).length === 3 && titles(tabs.d).length === 3, "c in b, d");
  assert.deepEqual(tabs.fake.refused, []);
  await tabs.end(jc);
  await c.db.close();
});

/** A script of the origin on the channel, answering what it hears with `answer`'s messages. */
function stray(fake: ReturnType<typeof fakes>, answer: (message: TabMessage) => unknown[]) {
  const end = fake.channels.end("stray");
  end.listen((value) => {
    for (const reply of answer(value as TabMessage)) end.postRaw(reply);
  });
  return end;
}

test("acknowledgements count only from the leader: another tab's persisted and flushed settle nothing", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  let release = () => {};
  const persisted = new Promise<void>((resolve) => release = resolve);
  let released = false;
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, () => persisted, () => persisted));
  const b = await TabCoordinator.join(environment(fake, "b"));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const link = await b.coordinator.follow(front.repo);
  let forged = 0;
  stray(fake, (message) => {
    const protocol = TAB_PROTOCOL;
    if (message.type === "push" && message.frames.length > 0) {
      forged++;
      const { from: to, repo, id } = message;
      return [{ protocol, type: "persisted", from: "stray", to, repo, id, error: null }];
    }
    if (message.type === "flush") {
      forged++;
      return [{
        protocol,
        type: "flushed",
        from: "stray",
        to: message.from,
        id: message.id,
        error: null,
      }];
    }
    return [];
  });
  front.notes.create(Note, { title: "b's write" });
  const flushed = link.flush().then(() => assert.ok(released, "acknowledged before persisted"));
  const flushedAll = b.coordinator.flushLeader().then(() =>
    assert.ok(released, "flushed before the leader flushed")
  );
  await waitFor(() => forged === 2, "the stray answered the push and the flush");
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0)); // delivered
  released = true;
  release();
  await settled(Promise.all([flushed, flushedAll]), "acknowledged by the leader");
  assert.deepEqual(titles(stored), ["b's write"]);
  await b.coordinator.close();
  await a.coordinator.close();
  await Promise.all([stored.db.close(), front.db.close()]);
});

test("a load answered by another tab than the leader (empty) is not taken: the follower loads the leader's blocks, and its next write continues its key's chain", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  // Made before the leader's ends: its answer arrives first.
  stray(fake, (message) =>
    message.type === "load"
      ? [{
        protocol: TAB_PROTOCOL,
        type: "loaded",
        from: "stray",
        to: message.from,
        repo: message.repo,
        id: message.id,
        frames: [],
        last: true,
      }]
      : []);
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, () => stored.db.flush()));
  const b = await TabCoordinator.join(environment(fake, "b"));
  const secret = await tabSecret(await cryptoSuite(), b.storedSecret!, 1);
  // Key 1 wrote before (a page of it closed since).
  const earlier = await openDatabase(secret);
  earlier.notes.create(Note, { title: "key 1, before" });
  await earlier.notes.flush();
  await stored.repo.importBlocks(await earlier.repo.exportBlocks(), "test", { trustAuthors: true });
  await earlier.db.close();
  const front = await openDatabase(secret);
  const link = await b.coordinator.follow(front.repo);
  assert.deepEqual(titles(front), ["key 1, before"]);
  front.notes.create(Note, { title: "key 1, after" });
  await settled(link.flush(), "the write acknowledged");
  assert.deepEqual(titles(stored), ["key 1, after", "key 1, before"]);
  assert.deepEqual(fake.refused, []);
  await b.coordinator.close();
  await a.coordinator.close();
  await Promise.all([stored.db.close(), front.db.close()]);
});

test("a tab taking the key of a page that just went loads that page's last push, still being imported, and continues the key's chain", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, () => stored.db.flush()));
  const b = await TabCoordinator.join(environment(fake, "b"));
  const secret = await tabSecret(await cryptoSuite(), b.storedSecret!, b.coordinator.keyIndex!);
  const tabB = await openDatabase(secret);
  const linkB = await b.coordinator.follow(tabB.repo);
  tabB.notes.create(Note, { title: "b first" });
  await settled(linkB.flush(), "B's first write acknowledged");
  // The leader is busy: its imports wait for the gate, so B's next push is still being
  // imported when the next tab on B's key loads.
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => openGate = resolve);
  const importBlocks = stored.repo.importBlocks.bind(stored.repo);
  stored.repo.importBlocks = async (...args: Parameters<typeof importBlocks>) => {
    await gate;
    return await importBlocks(...args);
  };
  tabB.notes.create(Note, { title: "b last" });
  const pushes = () =>
    fake.channels.posted.filter((m) => m.type === "push" && m.frames.length > 0).length;
  await waitFor(() => pushes() === 2, "B's second push posted");
  // B's page goes (a reload): its channel and its key's lock at once.
  fake.channels.drop("b");
  fake.locks.crash("b");
  const c = await TabCoordinator.join(environment(fake, "c"));
  assert.equal(c.coordinator.keyIndex, b.coordinator.keyIndex);
  const tabC = await openDatabase(secret);
  // C writes as soon as it is open, as an app does.
  const following = c.coordinator.follow(tabC.repo).then((link) => {
    tabC.notes.create(Note, { title: "c write" });
    return link;
  });
  await waitFor(
    () => fake.channels.posted.filter((m) => m.type === "load").length === 2,
    "C's load posted",
  );
  // The gate opens once C's load is answered (as it was, at once), or after 100 ms, since the
  // answer now waits for the import.
  const load = fake.channels.posted.filter((m) => m.type === "load")[1] as TabMessage & {
    type: "load";
  };
  const answered = () =>
    fake.channels.posted.some((m) => m.type === "loaded" && m.to === load.from && m.id === load.id);
  for (let waited = 0; waited < 10 && !answered(); waited++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  openGate();
  const linkC = await settled(following, "C's load answered");
  // Before, the load was answered at once without B's last block, C sealed its write where
  // that block stands in the key's chain, and the leader refused it as a fork (E_CHAIN_FORK).
  await settled(linkC.flush(), "C's write acknowledged");
  assert.deepEqual(titles(tabC), ["b first", "b last", "c write"]);
  assert.deepEqual(titles(stored), ["b first", "b last", "c write"]);
  assert.deepEqual(fake.refused, []);
  await c.coordinator.close();
  await b.coordinator.close(); // its timers: the page is gone, the object still here
  await a.coordinator.close();
  await Promise.all([stored.db.close(), tabB.db.close(), tabC.db.close()]);
});

test("old-release heartbeats posted while a leader of this release is heard fail nothing: flushes and opens are served", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db));
  const b = await TabCoordinator.join(environment(fake, "b"));
  // Every message it hears (the leader's heartbeats too) answered as an old release's leader.
  let strays = 0;
  stray(fake, () => {
    strays++;
    return [{ type: "heartbeat", leader: "old", term: 1 }];
  });
  await waitFor(() => strays > 5, "old-release heartbeats posted");
  await settled(b.coordinator.flushLeader(), "b's flush served");
  const c = await settled(TabCoordinator.join(environment(fake, "c")), "c's open served");
  assert.equal(c.leads, false);
  assert.equal(toBase64Url(c.storedSecret!), toBase64Url(stored.db.exportSecretKey()));
  await settled(c.coordinator.flushLeader(), "c's flush served");
  assert.deepEqual(fake.refused, []);
  for (const tab of [c, b, a]) await tab.coordinator.close();
  await stored.db.close();
});

test("a welcome that comes before its leader's first heartbeat is asked for again, and taken", async () => {
  const fake = fakes();
  const stored = await openDatabase();
  // The leader's heartbeats are held back until it has welcomed a tab.
  let held: TabMessage[] | undefined = [];
  const a = await TabCoordinator.join(environment(fake, "a", {
    openChannel: () => {
      const end = fake.channels.end("a");
      const post = (message: TabMessage) => {
        if (held && message.type === "heartbeat") return held.push(message);
        end.post(message);
        if (held && message.type === "welcome") {
          const late = held;
          held = undefined;
          setTimeout(() => late.forEach(post), 0);
        }
      };
      return { ...end, post };
    },
  }));
  a.coordinator.lead(persisting(stored.db));
  const b = await settled(TabCoordinator.join(environment(fake, "b")), "b's open served");
  assert.equal(toBase64Url(b.storedSecret!), toBase64Url(stored.db.exportSecretKey()));
  const joins = fake.channels.posted.filter((message) => message.type === "join");
  assert.equal(joins.length, 2, "asked again once the leader was heard");
  for (const tab of [b, a]) await tab.coordinator.close();
  await stored.db.close();
});
