/**
 * `sync()` in the tabs of one stored database (src/sync/tab_sync.ts), on fake locks and a fake
 * channel, against a real sync server: only the tab that serves the others connects; a
 * follower's writes reach the server through it and the server's reach the follower; a
 * follower whose serving tab holds no connection to that server connects itself; a follower
 * promoted to serve connects from the storage it now serves from; a follower shows the serving
 * tab's status and errors (codes checked). The same in real pages of Chromium:
 * scripts/lib/browser_tabs_pages.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Cairn, TabSyncEnvironment } from "../../src/db/database.ts";
import { isCairnError } from "../../src/core/errors.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { sync } from "../../src/sync/client.ts";
import { EventedLink } from "../../src/sync/link_events.ts";
import { closedError, type SyncLink } from "../../src/sync/sync_link.ts";
import { TabSyncLink } from "../../src/sync/tab_sync.ts";
import { TabCoordinator } from "../../src/tabs/tab_coordinator.ts";
import { tabSecret } from "../../src/tabs/tab_keys.ts";
import type { TabMessage, TabSyncStatus } from "../../src/tabs/tab_messages.ts";
import { Note } from "../harness/linked_client.ts";
import type { SyncServer } from "../../src/server.ts";
import { withSyncServer } from "../harness/sync_server.ts";
import {
  environment,
  type Fakes,
  fakes,
  openDatabase,
  type Opened,
  persisting,
  settled,
  titles,
} from "../harness/tab_fakes.ts";
import { waitFor } from "../harness/wait.ts";

/** A tab's side of its sync links, whose serving database the test sets. */
interface TabSide extends TabSyncEnvironment {
  serveFrom(host: Cairn | undefined): void;
}

function tabSide(
  fake: Fakes,
  name: string,
  coordinator: TabCoordinator,
  own: Cairn,
  flush: () => Promise<void>,
): TabSide {
  const listeners = new Set<(host: Cairn | undefined) => void>();
  let host: Cairn | undefined;
  return {
    tab: coordinator.tab,
    openChannel: () => fake.channels.end(name),
    watchHost: (listener) => {
      listeners.add(listener);
      listener(host);
      return () => listeners.delete(listener);
    },
    answer: (url, responder) => coordinator.answerSync(url, responder),
    flush,
    own,
    isLeader: (tab) => coordinator.isLeader(tab),
    serveFrom(next) {
      host = next;
      for (const listener of [...listeners]) listener(next);
    },
  };
}

interface Tabs {
  fake: Fakes;
  /** The database tab A serves from, standing for the stored one. */
  stored: Opened;
  a: TabCoordinator;
  /** Tab B's own database, following A. */
  front: Opened;
  b: TabCoordinator;
  sideB: TabSide;
  close(): Promise<void>;
}

/** Tab A leads (serving from `stored`); tab B follows, its repository linked to A. */
async function twoTabs(): Promise<Tabs> {
  const fake = fakes();
  const stored = await openDatabase();
  const persist = () => stored.db.flush();
  const a = await TabCoordinator.join(environment(fake, "a"));
  a.coordinator.lead(persisting(stored.db, persist));
  // Set once B has joined; B's coordinator tells it when B starts serving.
  const late: { sideB?: TabSide } = {};
  const b = await TabCoordinator.join(environment(fake, "b", {
    openPersister: () => Promise.resolve(persisting(stored.db, persist)),
    servingFrom: (persister) => late.sideB!.serveFrom(persister && stored.db),
  }));
  const front = await openDatabase(await tabSecret(await cryptoSuite(), b.storedSecret!, 1));
  const followed = await b.coordinator.follow(front.repo);
  const sideB = late.sideB = tabSide(fake, "b", b.coordinator, front.db, () => followed.flush());
  return {
    fake,
    stored,
    a: a.coordinator,
    front,
    b: b.coordinator,
    sideB,
    async close() {
      await b.coordinator.close();
      await a.coordinator.close();
      await Promise.all([stored.db.close(), front.db.close()]);
    },
  };
}

/** The sessions connected to the server, sorted. */
function connected(server: SyncServer): string[] {
  return server.stats().connections.map((connection) => connection.session ?? "").sort();
}

function sessions(...dbs: Cairn[]): string[] {
  return dbs.map((db) => db.session.id).sort();
}

/** A plain client of the server, in a database of its own. */
async function observer(url: string) {
  const opened = await openDatabase();
  return { ...opened, link: sync(opened.db, url) };
}

const connect = (url: string) => (db: Cairn) => sync(db, url);

/** Tabs A and B, each with a sync link to the server, beside an observer client of it. */
async function linkedTabs(server: SyncServer) {
  const tabs = await twoTabs();
  const sideA = tabSide(tabs.fake, "a", tabs.a, tabs.stored.db, () => tabs.stored.db.flush());
  sideA.serveFrom(tabs.stored.db);
  const linkA = new TabSyncLink(server.url, sideA, connect(server.url));
  const linkB = new TabSyncLink(server.url, tabs.sideB, connect(server.url));
  const other = await observer(server.url);
  return {
    tabs,
    linkA,
    linkB,
    other,
    async close() {
      await Promise.all([linkB.close(), linkA.close(), other.link.close()]);
      await other.db.close();
      await tabs.close();
    },
  };
}

test("tabs sync through the serving tab's one connection, both ways", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const linked = await linkedTabs(server);
    const { tabs, linkB, other } = linked;
    try {
      await waitFor(() => linkB.status === "synced", "the follower shows the leader's status");
      assert.deepEqual(
        connected(server),
        sessions(tabs.stored.db, other.db),
        "the serving tab's connection and the observer's",
      );

      tabs.front.notes.create(Note, { title: "from the follower" });
      await settled(linkB.synced(), "the follower's synced()");
      await waitFor(
        () => titles(other).includes("from the follower"),
        "the follower's write reaches another client",
      );
      other.notes.create(Note, { title: "from the server" });
      await waitFor(
        () => titles(tabs.front).includes("from the server"),
        "another client's write reaches the follower",
      );
      assert.deepEqual(connected(server), sessions(tabs.stored.db, other.db), "still the same two");
      assert.equal(linkB.unacknowledged, 0);
      assert.deepEqual(tabs.fake.refused, []);
    } finally {
      await linked.close();
    }
    assert.equal(linkB.status, "closed");
  });
});

test("a follower whose serving tab holds no connection to that server connects itself, until it does", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const tabs = await twoTabs();
    const linkB = new TabSyncLink(server.url, tabs.sideB, connect(server.url));
    const other = await observer(server.url);
    let linkA: TabSyncLink | undefined;
    try {
      await waitFor(
        () => connected(server).join() === sessions(tabs.front.db, other.db).join(),
        "the follower connects from its own database",
      );
      tabs.front.notes.create(Note, { title: "sent by the follower itself" });
      await settled(linkB.synced(), "the follower's synced()");
      await waitFor(
        () => titles(other).includes("sent by the follower itself"),
        "the write reaches another client",
      );
      assert.equal(linkB.status, "synced");
      // The serving tab's page calls sync() after all: the follower follows it again.
      const sideA = tabSide(tabs.fake, "a", tabs.a, tabs.stored.db, () => tabs.stored.db.flush());
      sideA.serveFrom(tabs.stored.db);
      linkA = new TabSyncLink(server.url, sideA, connect(server.url));
      await waitFor(
        () => connected(server).join() === sessions(tabs.stored.db, other.db).join(),
        "the follower's own connection closes; the serving tab's opens",
      );
      tabs.front.notes.create(Note, { title: "through the serving tab" });
      await settled(linkB.synced(), "the follower's synced() through the serving tab");
      await waitFor(
        () => titles(other).includes("through the serving tab"),
        "the write reaches another client",
      );
    } finally {
      await Promise.all([linkB.close(), linkA?.close(), other.link.close()]);
      await other.db.close();
      await tabs.close();
    }
  });
});

test("a follower promoted to serve connects from the storage it serves from", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const linked = await linkedTabs(server);
    const { tabs, linkA, linkB, other } = linked;
    try {
      await waitFor(() => linkB.status === "synced", "the follower shows the leader's status");
      // Tab A closes: its link, then its part in the election; B takes the lead.
      await linkA.close();
      await waitFor(
        () => connected(server).join() === sessions(other.db).join(),
        "the server sees tab A's connection end",
      );
      await tabs.a.close();
      await waitFor(
        () =>
          connected(server).join() === sessions(tabs.stored.db, other.db).join() &&
          linkB.status === "synced",
        "the promoted tab connects from the storage it serves from",
      );
      tabs.front.notes.create(Note, { title: "after the promotion" });
      await settled(linkB.synced(), "synced() of the promoted tab");
      await waitFor(
        () => titles(other).includes("after the promotion"),
        "the write reaches another client",
      );
      assert.deepEqual(tabs.fake.refused, []);
    } finally {
      await linked.close();
    }
  });
});

test("a follower shows what the serving tab reports: its status, its count, its errors with their codes checked", async () => {
  const fake = fakes();
  const own = await openDatabase();
  const url = "ws://127.0.0.1:9";
  const side: TabSyncEnvironment = {
    tab: "b",
    openChannel: () => fake.channels.end("b"),
    watchHost: (listener) => {
      listener(undefined);
      return () => {};
    },
    answer: () => () => {},
    flush: () => Promise.resolve(),
    own: own.db,
    isLeader: (tab) => tab === "a",
  };
  const leader = fake.channels.end("a");
  const heard: TabMessage[] = [];
  leader.listen((value) => heard.push(value as TabMessage));
  const link = new TabSyncLink(url, side, () => assert.fail("a follower connected"));
  const errors: string[] = [];
  link.on("error", (error) => errors.push(error.code));
  await waitFor(() => heard.some((message) => message.type === "sync-ask"), "the follower asks");

  const status = (status: TabSyncStatus, unacknowledged: number, error: string | null) =>
    leader.post({ type: "sync-status", leader: "a", url, status, unacknowledged, error });
  status("offline", 3, "E_FORBIDDEN: may not write /notes");
  await waitFor(() => link.status === "offline", "the follower shows the status");
  assert.equal(link.unacknowledged, 3);
  assert.deepEqual(errors, ["E_FORBIDDEN"]);
  // The same error again is not reported again; a code that is not ours becomes E_PROTOCOL.
  status("catching-up", 1, "E_FORBIDDEN: may not write /notes");
  status("synced", 0, "E_MADE_UP: whatever");
  await waitFor(() => link.status === "synced", "the follower shows the next status");
  assert.deepEqual(errors, ["E_FORBIDDEN", "E_PROTOCOL"]);
  // A wait is answered for its own server only (one tab may sync with several).
  let done = false;
  const waited = link.synced().then(() => done = true);
  await waitFor(() => heard.some((message) => message.type === "sync-wait"), "the follower waits");
  const wait = heard.find((message) => message.type === "sync-wait") as { id: number };
  leader.post({ type: "sync-done", to: "b", url: "ws://elsewhere", id: wait.id, error: null });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(done, false);
  leader.post({ type: "sync-done", to: "b", url, id: wait.id, error: null });
  await settled(waited, "the follower's synced()");
  // Another server's status is not this link's.
  leader.post({
    type: "sync-status",
    leader: "a",
    url: "ws://elsewhere",
    status: "offline",
    unacknowledged: 9,
    error: null,
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(link.status, "synced");
  // A tab that is not the leader this tab knows (one that lost the lead while frozen, thawed and
  // not yet told) is not heard: before, its old connection's status and error were shown.
  fake.channels.end("z").post({
    type: "sync-status",
    leader: "z",
    url,
    status: "offline",
    unacknowledged: 5,
    error: "E_IO: the server went away",
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(link.status, "synced");
  assert.equal(link.unacknowledged, 0);
  assert.deepEqual(errors, ["E_FORBIDDEN", "E_PROTOCOL"]);
  // A second link of the page to the same server: each wait is settled by its own answer only
  // (before, both numbered their waits from 1, and one answer settled both).
  const second = new TabSyncLink(url, side, () => assert.fail("a follower connected"));
  const waitsPosted = () => heard.filter((message) => message.type === "sync-wait").length;
  const before = waitsPosted();
  const first = watch(link.synced());
  const other = watch(second.synced());
  await waitFor(() => waitsPosted() === before + 2, "both links wait");
  const [idA, idB] = heard.filter((message) => message.type === "sync-wait").slice(-2).map((
    message,
  ) => (message as { id: number }).id);
  assert.notEqual(idA, idB);
  leader.post({ type: "sync-done", to: "b", url, id: idA, error: null });
  await waitFor(() => first.outcome !== "pending", "the first wait settles");
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(other.outcome, "pending");
  leader.post({ type: "sync-done", to: "b", url, id: idB, error: null });
  await waitFor(() => other.outcome === "resolved", "the second wait settles");
  await second.close();
  await link.close();
  assert.equal(link.status, "closed");
  await own.db.close();
});

/** A connection whose synced() calls the test settles; close() rejects them as a client's does. */
class FakeConnection extends EventedLink implements SyncLink {
  readonly unacknowledged = 0;
  readonly waiting: { resolve(): void; reject(err: unknown): void }[] = [];

  synced(): Promise<void> {
    if (this.status === "closed") return Promise.reject(closedError());
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  close(): Promise<void> {
    this.events.setStatus("closed");
    for (const wait of this.waiting.splice(0)) wait.reject(closedError());
    return Promise.resolve();
  }

  settle(): void {
    for (const wait of this.waiting.splice(0)) wait.resolve();
  }
}

/** `promise`'s outcome so far, without waiting for it. */
function watch(promise: Promise<void>): { outcome: unknown } {
  const watched: { outcome: unknown } = { outcome: "pending" };
  promise.then(() => watched.outcome = "resolved", (err) => watched.outcome = err);
  return watched;
}

test("a pending synced() survives a hand-over: it waits on what serves the tab next, and rejects E_CLOSED only when the link closes", async () => {
  const fake = fakes();
  const own = await openDatabase();
  const url = "ws://127.0.0.1:9";
  const hostListeners = new Set<(host: Cairn | undefined) => void>();
  let host: Cairn | undefined = own.db;
  const serveFrom = (next: Cairn | undefined) => {
    host = next;
    for (const listener of [...hostListeners]) listener(next);
  };
  const side: TabSyncEnvironment = {
    tab: "b",
    openChannel: () => fake.channels.end("b"),
    watchHost: (listener) => {
      hostListeners.add(listener);
      listener(host);
      return () => hostListeners.delete(listener);
    },
    answer: () => () => {},
    flush: () => Promise.resolve(),
    own: own.db,
    isLeader: (tab) => tab === "a",
  };
  const leader = fake.channels.end("a");
  const heard: TabMessage[] = [];
  leader.listen((value) => heard.push(value as TabMessage));
  const connections: FakeConnection[] = [];
  const link = new TabSyncLink(url, side, () => {
    const connection = new FakeConnection();
    connections.push(connection);
    return connection;
  });
  const waitsHeard = () => heard.filter((message) => message.type === "sync-wait").length;
  /** The next sync-wait this tab posts to the serving tab, answered as done. */
  const answerNextWait = async (after: number, pending: { outcome: unknown }, what: string) => {
    await waitFor(() => waitsHeard() > after || pending.outcome !== "pending", what);
    assert.equal(pending.outcome, "pending", "synced() did not end with the connection");
    const wait = heard.filter((message) => message.type === "sync-wait").at(-1) as { id: number };
    leader.post({ type: "sync-done", to: "b", url, id: wait.id, error: null });
  };
  try {
    // Serving: the wait is the connection's; the tab stops serving, which closes it.
    const serving = watch(link.synced());
    await waitFor(() => connections[0]?.waiting.length === 1, "the serving tab's connection waits");
    let before = waitsHeard();
    serveFrom(undefined);
    assert.equal(connections[0].status, "closed");
    await answerNextWait(before, serving, "the wait goes to the serving tab");
    await waitFor(() => serving.outcome !== "pending", "synced() after the tab stopped serving");
    assert.equal(serving.outcome, "resolved");

    // Alone: the wait is this tab's own connection's, closed when the serving tab connects.
    leader.post({ type: "sync-absent", to: "b", url });
    await waitFor(() => connections.length === 2, "the tab connects itself");
    const alone = watch(link.synced());
    await waitFor(() => connections[1].waiting.length === 1, "its own connection waits");
    before = waitsHeard();
    leader.post({
      type: "sync-status",
      leader: "a",
      url,
      status: "synced",
      unacknowledged: 0,
      error: null,
    });
    await answerNextWait(before, alone, "the wait goes to the serving tab that connected");
    await waitFor(() => alone.outcome !== "pending", "synced() after the tab stopped being alone");
    assert.equal(alone.outcome, "resolved");

    // Following, then serving (the wait moves onto the connection), then following again.
    before = waitsHeard();
    const moved = watch(link.synced());
    await waitFor(() => waitsHeard() > before, "the follower waits on the serving tab");
    serveFrom(own.db);
    await waitFor(() => connections[2]?.waiting.length === 1, "the wait moves onto the connection");
    before = waitsHeard();
    serveFrom(undefined);
    await answerNextWait(before, moved, "the wait goes back to the serving tab");
    await waitFor(() => moved.outcome !== "pending", "synced() after serving a while");
    assert.equal(moved.outcome, "resolved");

    // Following, then serving: the new connection reports the writes synced.
    before = waitsHeard();
    const promoted = watch(link.synced());
    await waitFor(() => waitsHeard() > before, "the follower waits on the serving tab");
    serveFrom(own.db);
    await waitFor(() => connections[3]?.waiting.length === 1, "the wait moves onto the connection");
    assert.equal(promoted.outcome, "pending");
    connections[3].settle();
    await waitFor(() => promoted.outcome !== "pending", "synced() on the new connection");
    assert.equal(promoted.outcome, "resolved");

    // Closing the link itself rejects its waits with E_CLOSED: on a connection, and following.
    const onConnection = watch(link.synced());
    await waitFor(() => connections[3].waiting.length === 1, "the connection waits");
    serveFrom(undefined);
    await waitFor(() => waitsHeard() > before + 1, "the wait goes to the serving tab");
    before = waitsHeard();
    const following = watch(link.synced());
    await waitFor(() => waitsHeard() > before, "the follower waits on the serving tab");
    await link.close();
    await waitFor(
      () => onConnection.outcome !== "pending" && following.outcome !== "pending",
      "the waits end with the link",
    );
    assert.ok(isCairnError(onConnection.outcome, "E_CLOSED"), String(onConnection.outcome));
    assert.ok(isCairnError(following.outcome, "E_CLOSED"), String(following.outcome));
    await assert.rejects(link.synced(), (err) => isCairnError(err, "E_CLOSED"));
  } finally {
    await link.close();
    await own.db.close();
  }
});
