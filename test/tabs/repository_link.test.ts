/**
 * Repository links between tabs, over a fake channel that delivers structured clones
 * asynchronously as a BroadcastChannel does: followers load from the leader, three tabs writing
 * at once converge, a follower's flush resolves only once the leader persisted its blocks, a new
 * leader receives every unacknowledged push (or, with none, hears of the repository and opens it),
 * hostile messages are dropped without harm, an acknowledgement settles only its own repository's
 * push (and only the push of the link that sent it), blocks sent while a follower loads are
 * imported after the loaded ones, a push the leader could not persist is sent again by the next
 * flush, a block over 1 MiB crosses, a repository the leader cannot open fails the follower's
 * load and flush with E_IO until it can, and a follower sent a block after one it never got loads
 * the repository again rather than refuse that session's blocks for good.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, watchRepositories } from "../../src/db/database.ts";
import type { RepositoryHandle } from "../../src/db/repository_handle.ts";
import { CairnError, isCairnError } from "../../src/core/errors.ts";
import type { Repository } from "../../src/repo/repository.ts";
import { FollowerRepositoryLink, LeaderRepositoryLink } from "../../src/tabs/repository_link.ts";
import { MAX_TAB_BLOCKS, TAB_PROTOCOL, type TabMessage } from "../../src/tabs/tab_messages.ts";
import { TabLeader } from "../../src/tabs/tab_leader.ts";
import { FakeBroadcast } from "../harness/fake_broadcast.ts";
import { Note, PATH } from "../harness/linked_client.ts";
import { snapshot } from "../harness/peers.ts";
import { settled } from "../harness/tab_fakes.ts";
import { waitFor } from "../harness/wait.ts";

interface Tab {
  name: string;
  db: Cairn;
  notes: RepositoryHandle;
  repo: Repository;
}

async function openTabs(names: string[]): Promise<Tab[]> {
  const tabs: Tab[] = [];
  for (const name of names) {
    const db = await Cairn.open({ schemas: [Note] });
    let repo: Repository | undefined;
    watchRepositories(db, { opened: (r) => repo ??= r, closed: () => {} });
    const notes = await db.open(PATH);
    tabs.push({ name, db, notes, repo: repo! });
  }
  for (const tab of tabs) {
    for (const other of tabs) if (other !== tab) await tab.db.trust(other.db.session.publicKey);
  }
  return tabs;
}

/** `leader` serving `others` over `channel` (`persist`: its log flush), every refusal kept. */
function linked(
  channel: FakeBroadcast,
  leader: Tab,
  others: readonly Tab[],
  persist: () => Promise<void>,
) {
  const refusals: unknown[] = [];
  const onRefused = (err: unknown) => refusals.push(err);
  const leading = new LeaderRepositoryLink(
    { tab: leader.name, channel: channel.end(leader.name), repo: leader.repo, onRefused },
    persist,
  );
  const followers = others.map((tab) =>
    new FollowerRepositoryLink({
      tab: tab.name,
      channel: channel.end(tab.name),
      repo: tab.repo,
      onRefused,
      isLeader: (from) => from === leader.name,
    })
  );
  return { leading, followers, refusals };
}

async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

function titles(tab: Tab): string[] {
  const { values } = snapshot(tab.notes, []);
  return Object.values(values).map((v) => (v as { title: string }).title).sort();
}

test("three tabs writing at once converge; followers load what the leader held", async () => {
  const channel = new FakeBroadcast();
  const [leader, b, c] = await openTabs(["leader", "b", "c"]);
  leader.notes.create(Note, { title: "before" });
  await leader.notes.flush();
  let persists = 0;
  const { leading, followers, refusals } = linked(channel, leader, [b, c], () => {
    persists++;
    return leader.notes.flush();
  });
  await Promise.all(followers.map((f) => f.load()));
  assert.deepEqual(titles(b), ["before"]);
  for (let i = 0; i < 10; i++) {
    for (const tab of [leader, b, c]) tab.notes.create(Note, { title: `${tab.name} ${i}` });
    await settle(1);
  }
  await Promise.all(followers.map((f) => f.flush()));
  await settle();
  const expected = titles(leader);
  assert.equal(expected.length, 31);
  assert.deepEqual(titles(b), expected);
  assert.deepEqual(titles(c), expected);
  assert.ok(persists > 0);
  assert.deepEqual(followers.map((f) => f.unacknowledged), [0, 0]);
  assert.deepEqual(refusals, []);
  leading.close();
  for (const f of followers) f.close();
  for (const tab of [leader, b, c]) await tab.db.close();
});

test("a repository of more blocks than one message may carry loads in several messages", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  for (let i = 0; i <= MAX_TAB_BLOCKS; i++) {
    leader.notes.create(Note, { title: `n${i}` });
    await leader.notes.flush(); // a block each
  }
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo },
    () => leader.notes.flush(),
  );
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
  });
  await follower.load();
  assert.equal(b.notes.count(), MAX_TAB_BLOCKS + 1);
  const loaded = channel.posted.filter((message): message is Extract<TabMessage, {
    type: "loaded";
  }> => message.type === "loaded");
  assert.deepEqual(loaded.map((message) => message.last), [false, true]);
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});

/** Tab b following (loaded) a leader whose persisting waits until `release()`. */
async function followingGatedLeader() {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo },
    () => gate,
  );
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
  });
  await follower.load();
  return { leader, b, release, leading, follower };
}

test("a follower's flush resolves only once the leader has persisted its blocks", async () => {
  const { leader, b, release, leading, follower } = await followingGatedLeader();
  b.notes.create(Note, { title: "from b" });
  let flushed = false;
  const flushing = follower.flush().then(() => flushed = true);
  await settle();
  assert.deepEqual(titles(leader), ["from b"], "the leader has applied it");
  assert.equal(flushed, false, "not acknowledged before it is persisted");
  assert.equal(follower.unacknowledged, 1);
  release();
  await flushing;
  assert.equal(follower.unacknowledged, 0);
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});

test("waits for acknowledgement made while the leader does not answer take memory per wait, not per wait and push, and all settle once it answers", async () => {
  const { leader, b, release, leading, follower } = await followingGatedLeader();
  // Where the heap can be read (Deno, Node; not a page).
  const heapUsed = (globalThis as { Deno?: { memoryUsage(): { heapUsed: number } } }).Deno
    ?.memoryUsage ??
    (globalThis as { process?: { memoryUsage(): { heapUsed: number } } }).process?.memoryUsage;
  const heapBefore = heapUsed?.().heapUsed;
  // A writer that commits each write without awaiting it: a wait per write.
  const WRITES = 1_500;
  let settledWaits = 0;
  const waits: Promise<void>[] = [];
  for (let i = 0; i < WRITES; i++) {
    b.notes.create(Note, { title: `w${i}` });
    await b.repo.flush(); // sealed and pushed; the leader persists nothing until the gate opens
    waits.push(follower.acknowledged().then(() => void settledWaits++));
  }
  assert.equal(follower.unacknowledged, WRITES);
  if (heapBefore !== undefined) {
    // Before, each wait waited on every push unanswered: 1,500 writes held ~1.1 million waiters
    // (275 MB at 1,200). Blocks and waits themselves take a few MB.
    const grownMb = (heapUsed!().heapUsed - heapBefore) / 1e6;
    assert.ok(grownMb < 60, `the heap grew by ${grownMb.toFixed(0)} MB`);
  }
  assert.equal(settledWaits, 0);
  release();
  await settled(Promise.all(waits), "every wait settled");
  assert.equal(settledWaits, WRITES);
  assert.equal(follower.unacknowledged, 0);
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});

test("a leader that refuses a push fails the follower's flush with a typed error", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo },
    () => Promise.reject(new Error("disk full")),
  );
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
  });
  b.notes.create(Note, { title: "x" });
  await assert.rejects(follower.flush(), (err) => isCairnError(err) && err.code === "E_IO");
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});

test("pushes the old leader never acknowledged are re-sent to the new leader", async () => {
  const channel = new FakeBroadcast();
  const [old, b, c] = await openTabs(["old", "b", "c"]);
  // The old leader is gone (crashed) before it saw b's writes.
  channel.end("old");
  channel.drop("old");
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "c",
  });
  b.notes.create(Note, { title: "b 1" });
  b.notes.create(Note, { title: "b 2" });
  await b.notes.flush();
  await settle();
  assert.equal(follower.unacknowledged, 1);
  // c takes over: its leader link receives the re-sent push, persists it and acknowledges.
  const leading = new LeaderRepositoryLink(
    { tab: "c", channel: channel.end("c"), repo: c.repo },
    () => c.notes.flush(),
  );
  const flushed = follower.flush();
  follower.resend();
  await flushed;
  assert.deepEqual(titles(c), ["b 1", "b 2"]);
  assert.equal(follower.unacknowledged, 0);
  leading.close();
  follower.close();
  for (const tab of [old, b, c]) await tab.db.close();
});

test("a new leader hears of a repository open in a follower with nothing unacknowledged, and opens it", async () => {
  const channel = new FakeBroadcast();
  const [b, c] = await openTabs(["b", "c"]);
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "c",
  });
  // c serves now; it opens a repository (and syncs it, when it syncs) once a tab names it.
  const opened: string[] = [];
  const leader = new TabLeader("c", channel.end("c"), {
    storedSecret: new Uint8Array(32),
    repository: (path) => {
      opened.push(path);
      return Promise.resolve({ repo: c.repo, persist: () => c.notes.flush() });
    },
    flush: () => c.db.flush(),
  }, (err) => assert.fail(String(err)));
  follower.resend();
  await settle();
  assert.deepEqual(opened, [PATH]);
  assert.equal(follower.unacknowledged, 0);
  leader.close();
  follower.close();
  for (const tab of [b, c]) await tab.db.close();
});

test("hostile messages are dropped and reported; forged blocks are refused by importBlocks", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  const refusals: unknown[] = [];
  const onRefused = (err: unknown) => refusals.push(err);
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo, onRefused },
    () => leader.notes.flush(),
  );
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
    onRefused,
  });
  const evil = channel.end("evil");
  const protocol = TAB_PROTOCOL;
  const garbage: unknown[] = [
    null,
    "push",
    { protocol, type: "push" },
    { protocol, type: "blocks", from: "evil", repo: PATH, frames: ["not bytes"] },
    { protocol, type: "persisted", from: "leader", to: "b", id: "1", error: null },
    {
      protocol,
      type: "loaded",
      from: "leader",
      to: "b",
      repo: "../etc",
      id: 1,
      frames: [],
      last: true,
    },
  ];
  for (const value of garbage) evil.postRaw(value);
  // Well-formed messages carrying forged blocks: decoded, then refused by verification.
  evil.post({ type: "blocks", from: "evil", repo: PATH, frames: [new Uint8Array([1, 2, 3])] });
  evil.post({ type: "push", from: "evil", repo: PATH, id: 1, frames: [new Uint8Array(40)] });
  await settle();
  const codes = refusals.map((err) => isCairnError(err) ? err.code : String(err));
  // Both tabs drop each malformed message; b reports the forged block importBlocks refused.
  assert.equal(codes.filter((code) => code === "E_PROTOCOL").length, garbage.length * 2);
  assert.equal(codes.length, garbage.length * 2 + 1, codes.join(", "));
  assert.deepEqual(titles(leader), []);
  assert.deepEqual(titles(b), []);
  const answer = channel.posted.find((m) => m.type === "persisted");
  assert.ok(answer && answer.type === "persisted" && answer.error !== null, "forged push refused");
  // The tabs still work.
  b.notes.create(Note, { title: "still fine" });
  await follower.flush();
  assert.deepEqual(titles(leader), ["still fine"]);
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});

/** A tab with a repository open at each of `paths`, and the Repository behind each. */
async function openRepositories(paths: string[]) {
  const db = await Cairn.open({ schemas: [Note] });
  const repos = new Map<string, Repository>();
  watchRepositories(db, { opened: (r) => repos.set(r.path, r), closed: () => {} });
  const handles = new Map<string, RepositoryHandle>();
  for (const path of paths) handles.set(path, await db.open(path));
  return { db, handles, repos };
}

test("each persisted reaches only its repository's link: another repository's reply settles nothing", async () => {
  const channel = new FakeBroadcast();
  const paths = ["/a", "/b"];
  const leader = await openRepositories(paths);
  const b = await openRepositories(paths);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  // The leader fails to persist /a and has not yet persisted /b.
  const persist: Record<string, () => Promise<void>> = {
    "/a": () => Promise.reject(new Error("disk full")),
    "/b": () => gate,
  };
  const leading = paths.map((path) =>
    new LeaderRepositoryLink(
      { tab: "leader", channel: channel.end("leader"), repo: leader.repos.get(path)! },
      persist[path],
    )
  );
  const followers = paths.map((path) =>
    new FollowerRepositoryLink({
      tab: "b",
      channel: channel.end("b"),
      repo: b.repos.get(path)!,
      isLeader: (tab) => tab === "leader",
    })
  );
  for (const path of paths) b.handles.get(path)!.create(Note, { title: path });
  const [flushA, flushB] = followers.map((f) => f.flush());
  let settledB = "pending";
  flushB.then(() => settledB = "resolved", () => settledB = "rejected");
  await assert.rejects(flushA, (err) => isCairnError(err) && err.code === "E_IO");
  await settle();
  assert.equal(settledB, "pending", "/a's reply does not settle /b's push of the same id");
  assert.equal(followers[1].unacknowledged, 1);
  release();
  await flushB;
  // /a's push, which the leader could not persist, waits to be sent again by the next flush.
  assert.deepEqual(followers.map((f) => f.unacknowledged), [1, 0]);
  for (const link of [...leading, ...followers]) link.close();
  for (const tab of [leader, b]) await tab.db.close();
});

test("blocks sent while a follower loads are imported after the loaded ones, in order", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  for (let i = 0; i < 3; i++) {
    leader.notes.create(Note, { title: `stored ${i}` });
    await leader.notes.flush(); // a block each
  }
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo },
    () => leader.notes.flush(),
  );
  // The load's import waits (as on crypto, block by block) until released.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const importBlocks = b.repo.importBlocks.bind(b.repo);
  let imports = 0;
  b.repo.importBlocks = async (...args) => {
    if (imports++ === 0) await gate;
    return await importBlocks(...args);
  };
  const refusals: unknown[] = [];
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
    onRefused: (err) => refusals.push(err),
  });
  const loading = follower.load();
  await settle();
  assert.equal(imports, 1, "the load's import is under way");
  // The leader's next block, sent to every tab while b's load is still importing.
  leader.notes.create(Note, { title: "live" });
  await leader.notes.flush();
  await settle();
  release();
  await loading;
  await settle();
  assert.deepEqual(titles(b), ["live", "stored 0", "stored 1", "stored 2"]);
  assert.deepEqual(refusals, []);
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});

test("a late answer to a push of a link the page closed since acknowledges no push of the link that replaced it", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  const flushes: (() => void)[] = [];
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo },
    () => new Promise<void>((resolve) => flushes.push(resolve)), // the log flush, in progress
  );
  // b's link loads, and a new leader's `serving` has it push nothing (it is open here).
  const first = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
  });
  await first.load();
  first.resend();
  await settle();
  assert.equal(flushes.length, 1, "the leader persists the empty push");
  // The page closes the repository and opens it again: a new link loads and pushes a write.
  first.close();
  const second = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
  });
  await second.load();
  b.notes.create(Note, { title: "not persisted yet" });
  let acknowledged = false;
  const flushed = second.flush().then(() => acknowledged = true);
  await settle();
  assert.equal(flushes.length, 2, "the leader persists the new push");
  flushes[0](); // the empty push's answer comes
  await settle();
  assert.equal(acknowledged, false, "the new push waits for its own answer");
  flushes[1]();
  await flushed;
  leading.close();
  second.close();
  for (const { db } of [leader, b]) await db.close();
});

test("a push the leader could not persist is kept: the follower's flush rejects, and the next flush sends it again and waits for it", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  let persists = 0;
  let diskFull = true;
  const leading = new LeaderRepositoryLink(
    { tab: "leader", channel: channel.end("leader"), repo: leader.repo },
    () => {
      persists++;
      return diskFull ? Promise.reject(new Error("the disk is full")) : Promise.resolve();
    },
  );
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
  });
  b.notes.create(Note, { title: "x" });
  await assert.rejects(follower.flush(), (err) => isCairnError(err, "E_IO"));
  assert.equal(follower.unacknowledged, 1, "the push waits on");
  // Still full: the retried flush fails again rather than resolving over a block not stored.
  await assert.rejects(follower.flush(), (err) => isCairnError(err, "E_IO"));
  diskFull = false;
  await follower.flush();
  assert.equal(persists, 3);
  assert.equal(follower.unacknowledged, 0);
  assert.deepEqual(titles(leader), ["x"]);
  leading.close();
  follower.close();
  for (const { db } of [leader, b]) await db.close();
});

test("a block over the sync protocol's 1 MiB frame crosses the tabs: loaded, pushed and acknowledged, sent on to every tab", async () => {
  const channel = new FakeBroadcast();
  const [leader, b, c] = await openTabs(["leader", "b", "c"]);
  const big = (name: string) => name + "x".repeat(3 << 19); // 1.5 MiB: one commit, one block
  leader.notes.create(Note, { title: big("leader") });
  await leader.notes.flush();
  const { leading, followers, refusals } = linked(
    channel,
    leader,
    [b, c],
    () => leader.notes.flush(),
  );
  await Promise.all(followers.map((f) => f.load()));
  b.notes.create(Note, { title: big("b") });
  await followers[0].flush();
  await settle();
  const expected = [big("b"), big("leader")];
  for (const tab of [leader, b, c]) assert.deepEqual(titles(tab), expected, tab.name);
  assert.deepEqual(refusals, []);
  leading.close();
  for (const f of followers) f.close();
  for (const tab of [leader, b, c]) await tab.db.close();
});

test("a repository the leader cannot open: the follower's open fails with E_IO, its flush too, and both work once the leader can", async () => {
  const channel = new FakeBroadcast();
  const [b, c] = await openTabs(["b", "c"]);
  let broken = true;
  const refusals: unknown[] = [];
  const leader = new TabLeader("c", channel.end("c"), {
    storedSecret: new Uint8Array(32),
    repository: () =>
      broken
        ? Promise.reject(new CairnError("E_IO", "the settings file is unreadable"))
        : Promise.resolve({ repo: c.repo, persist: () => c.notes.flush() }),
    flush: () => c.db.flush(),
  }, (err) => refusals.push(err));
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "c",
  });
  await assert.rejects(
    follower.load(),
    (err) => isCairnError(err, "E_IO") && err.message.includes("settings file is unreadable"),
  );
  b.notes.create(Note, { title: "written meanwhile" });
  await assert.rejects(follower.flush(), (err) => isCairnError(err, "E_IO"));
  assert.equal(follower.unacknowledged, 1, "kept to send again");
  broken = false;
  await follower.flush();
  await follower.load();
  assert.deepEqual(titles(c), ["written meanwhile"]);
  assert.equal(refusals.length, 2, "each failed open reported on the leader's side");
  leader.close();
  follower.close();
  for (const tab of [b, c]) await tab.db.close();
});

test("the leader imports one follower's pushes in the order they came, however long each import takes", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  // The first import is slow (its signature checks, say): the second must wait for it.
  const importBlocks = leader.repo.importBlocks.bind(leader.repo);
  let calls = 0;
  leader.repo.importBlocks = async (...args: Parameters<Repository["importBlocks"]>) => {
    if (calls++ === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    return await importBlocks(...args);
  };
  const { leading, followers: [follower], refusals } = linked(
    channel,
    leader,
    [b],
    () => leader.notes.flush(),
  );
  b.notes.create(Note, { title: "first" });
  await settle(1); // a tick later: a block of its own
  b.notes.create(Note, { title: "second" });
  await follower.flush();
  assert.deepEqual(titles(leader), ["first", "second"]);
  assert.deepEqual(refusals, []);
  leading.close();
  follower.close();
  for (const { db } of [leader, b]) await db.close();
});

test("a push the leader could not import is sent again with every push after it, which followed a block it lacked", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  // The first import fails (its storage, say): the leader lacks that block when the next comes.
  const importBlocks = leader.repo.importBlocks.bind(leader.repo);
  let calls = 0;
  leader.repo.importBlocks = (...args: Parameters<Repository["importBlocks"]>) => {
    if (calls++ === 0) return Promise.reject(new CairnError("E_IO", "could not import"));
    return importBlocks(...args);
  };
  const { leading, followers: [follower] } = linked(
    channel,
    leader,
    [b],
    () => leader.notes.flush(),
  );
  b.notes.create(Note, { title: "first" });
  await settle(1); // a tick later: a block of its own
  b.notes.create(Note, { title: "second" });
  await assert.rejects(follower.flush(), (err) => isCairnError(err, "E_IO"));
  assert.equal(follower.unacknowledged, 2, "both kept: the second left unanswered (a gap)");
  // Only the first sent again, the second would be waited for for good.
  await settled(follower.flush(), "both acknowledged");
  assert.deepEqual(titles(leader), ["first", "second"]);
  leading.close();
  follower.close();
  for (const { db } of [leader, b]) await db.close();
});

test("a follower sent a block after one it never got loads the repository again and takes both, and every later block", async () => {
  const channel = new FakeBroadcast();
  const [leader, b] = await openTabs(["leader", "b"]);
  const end = channel.end("leader");
  let lost = 0;
  const leading = new LeaderRepositoryLink({
    tab: "leader",
    // The first block it sends reaches no tab: it stands for one that a leader before this one
    // stored and never sent (it crashed in between).
    channel: {
      ...end,
      post: (message) => {
        if (message.type !== "blocks" || lost++ > 0) end.post(message);
      },
    },
    repo: leader.repo,
  }, () => leader.notes.flush());
  const refusals: unknown[] = [];
  const follower = new FollowerRepositoryLink({
    tab: "b",
    channel: channel.end("b"),
    repo: b.repo,
    isLeader: (tab) => tab === "leader",
    onRefused: (err) => refusals.push(err),
  });
  await follower.load();
  for (const title of ["never sent", "after the gap"]) {
    leader.notes.create(Note, { title });
    await leader.notes.flush(); // a block each
  }
  await waitFor(() => titles(b).length === 2, "both blocks in b");
  leader.notes.create(Note, { title: "later" });
  await leader.notes.flush();
  await waitFor(() => titles(b).length === 3, "the later block in b");
  assert.deepEqual(titles(b), ["after the gap", "later", "never sent"]);
  assert.deepEqual(refusals, []);
  leading.close();
  follower.close();
  for (const tab of [leader, b]) await tab.db.close();
});
