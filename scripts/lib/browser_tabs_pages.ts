/**
 * The tabs of one database, in real pages of one persistent profile.
 *
 * - test/web/tabs-election/: three pages join the election of one directory, the leader's page is
 *   closed, and another page must take the lead.
 * - test/web/storage-tabs/: one stored database open in several pages at once (docs/browser.md,
 *   "Many tabs"). Three tabs open a new database at the same moment, write at once and converge,
 *   and a fresh tab reads it all back from storage; the leader's page is closed and writes the
 *   other tabs make then are acknowledged by the tab that takes over, nothing acknowledged before
 *   is lost; a follower reloaded again and again signs as a session of the pool, not a new one
 *   each time.
 * - Sync through the leader: only the leading tab connects to a sync server, and the next leader
 *   connects when it closes; two tabs that open a new database and call sync() at the same moment
 *   end with one connection, and every write meets.
 *
 * Waits are bounded polls; how long a takeover took is printed, never asserted.
 *
 * - The leader's page crashed (DevTools `Page.crash`): the browser frees its locks, the next tab
 *   leads, acknowledges writes, and nothing acknowledged before is lost.
 * - The leader's page frozen: its JavaScript is paused in the DevTools debugger, so it sends no
 *   heartbeat and handles no message while its locks stay held, as a frozen page's do. A visible
 *   follower steals the lead; writes made meanwhile are acknowledged once the frozen page thaws
 *   and lets go of the files, and the thawed page's database is closed. (Unlike a real freeze, the
 *   page's worker keeps running; `Page.setWebLifecycleState` "frozen" did not stop this headless
 *   Chromium's timers, so it cannot stand in.)
 */
import type { BrowserContext, Page } from "playwright-core";
import { Cairn, defineSchema, sync } from "../../src/mod.ts";
import { createSyncServer } from "../../src/server.ts";
import { launchChromium } from "./chromium.ts";
import {
  callStep,
  loadPhase,
  openTab,
  type StoragePageCheck,
  type Tab,
  uniqueName,
} from "./browser_storage_pages.ts";

export const TAB_PAGE_CHECKS: readonly StoragePageCheck[] = [
  { name: "tabs: the leader's page closed, another page takes the lead", run: takeover },
  {
    name:
      "tabs: three tabs open a new database at once, write at once and converge; a new tab reads it all",
    run: threeTabsConverge,
  },
  {
    name: "tabs: the leader's page closed, the next leader acknowledges writes; nothing is lost",
    run: leaderClosed,
  },
  {
    name: "tabs: the leader's page crashed, the next leader acknowledges writes; nothing is lost",
    run: leaderCrashed,
  },
  {
    name:
      "tabs: the leader's page frozen, a follower steals the lead; writes are acknowledged after the thaw",
    run: leaderFrozen,
  },
  {
    name: "tabs: a follower reloaded again and again signs as a session of the pool",
    run: reloadsReuseKeys,
  },
  {
    name:
      "tabs: only the leading tab connects to the sync server; a follower's writes reach it both ways; the next leader connects",
    run: syncThroughLeader,
  },
  {
    name:
      "tabs: two tabs open a new database and call sync() at once; one connection serves both, and all writes meet",
    run: simultaneousSync,
  },
  {
    name:
      "tabs: a page in the back/forward cache comes back with its database open; a tab opening it meanwhile ends the cached page",
    run: backForwardCache,
  },
];

const WAIT_MS = 15_000;

async function role(page: Page): Promise<string> {
  return await page.evaluate(() =>
    (globalThis as unknown as { cairnElection: { role(): string } }).cairnElection.role()
  );
}

/** The pages (among `tabs`) that say they lead, once exactly one does. */
async function soleLeader(tabs: Tab[], what: string): Promise<Tab> {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const roles = await Promise.all(tabs.map((tab) => role(tab.page)));
    const leaders = tabs.filter((_, i) => roles[i] === "leader");
    if (leaders.length === 1) return leaders[0];
    if (Date.now() > end) {
      const seen = await Promise.all(
        tabs.map((tab) =>
          tab.page.evaluate(() =>
            `${document.visibilityState}, heard ${
              (globalThis as unknown as { cairnElection: { heard(): number } }).cairnElection
                .heard()
            }`
          ).catch((err) => String(err))
        ),
      );
      throw new Error(`${what}: roles are ${roles.join(", ")} (pages ${seen.join(", ")})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function takeover(context: BrowserContext, origin: string): Promise<void> {
  const url = `${origin}/test/web/tabs-election/index.html?dir=${uniqueName("election")}`;
  const tabs: Tab[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const tab = await openTab(context);
      tabs.push(tab);
      await loadPhase(tab, url, `page ${i} joins the election`);
    }
    const leader = await soleLeader(tabs, "one leader among three pages");
    const started = Date.now();
    await leader.page.close();
    await soleLeader(tabs.filter((tab) => tab !== leader), "a new leader after the leader closed");
    console.log(`       (a new leader ${Date.now() - started} ms after the close)`);
  } finally {
    for (const tab of tabs) await tab.page.close().catch(() => {});
  }
}

/**
 * A page of test/web/storage-tabs/ as tab `name` of database `db`, opened (its phase passed);
 * syncing with the server at `server` when given.
 */
async function openDatabaseTab(
  context: BrowserContext,
  origin: string,
  db: string,
  name: string,
  server?: string,
): Promise<Tab> {
  const tab = await openTab(context);
  const syncing = server ? `&sync=${encodeURIComponent(server)}` : "";
  await loadPhase(
    tab,
    `${origin}/test/web/storage-tabs/index.html?db=${db}&name=${name}${syncing}`,
    `tab ${name} opens the database`,
  );
  return tab;
}

async function titles(tab: Tab, name: string): Promise<string[]> {
  return JSON.parse(await callStep(tab, "titles", `tab ${name} reads its titles`));
}

/** Waits until every tab sees exactly `expected` (sorted titles). */
async function converged(tabs: Map<string, Tab>, expected: string[], what: string): Promise<void> {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const seen = await Promise.all([...tabs].map(([name, tab]) => titles(tab, name)));
    if (seen.every((list) => JSON.stringify(list) === JSON.stringify(expected))) return;
    if (Date.now() > end) {
      const counts = [...tabs.keys()].map((name, i) => `${name}: ${seen[i].length}`).join(", ");
      throw new Error(`${what}: tabs see ${counts} of ${expected.length} notes`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function notes(name: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${name} ${from + i}`);
}

/** Opens a new tab on `db`, checks it reads `expected` from storage, and removes the database. */
async function readBack(
  context: BrowserContext,
  origin: string,
  db: string,
  expected: string[],
): Promise<void> {
  const fresh = await openDatabaseTab(context, origin, db, "Z");
  try {
    const stored = await titles(fresh, "Z");
    if (JSON.stringify(stored) !== JSON.stringify(expected)) {
      throw new Error(`a new tab reads ${stored.length} notes, not the ${expected.length} written`);
    }
    await callStep(fresh, "close", "the new tab closes the database");
    await callStep(fresh, "remove", "the new tab removes the database");
  } finally {
    await fresh.page.close();
  }
}

async function threeTabsConverge(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("three-tabs");
  const tabs = new Map<string, Tab>();
  try {
    // Opened at the same moment, on a database that does not exist yet: one creates it and
    // leads, the others follow.
    const names = ["A", "B", "C"];
    const opened = await Promise.allSettled(
      names.map((name) => openDatabaseTab(context, origin, db, name)),
    );
    opened.forEach((result, i) => {
      if (result.status === "fulfilled") tabs.set(names[i], result.value);
    });
    const failed = opened.find((result) => result.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    await Promise.all(
      [...tabs].map(([name, tab]) => callStep(tab, "write", `tab ${name} writes`, 20)),
    );
    const expected = [...tabs.keys()].flatMap((name) => notes(name, 0, 20)).sort();
    // db.flush() in every tab: the followers' through the tab that leads.
    await Promise.all(
      [...tabs].map(([name, tab]) => callStep(tab, "flushAll", `tab ${name} flushes`)),
    );
    await converged(tabs, expected, "three tabs converge");
    for (const name of ["C", "B", "A"]) {
      await callStep(tabs.get(name)!, "close", `tab ${name} closes the database`);
    }
    await readBack(context, origin, db, expected);
  } finally {
    for (const tab of tabs.values()) await tab.page.close().catch(() => {});
  }
}

/** Opens tabs A (which leads), B and C on a new database; each writes 10 notes, acknowledged. */
async function threeTabsWritten(
  context: BrowserContext,
  origin: string,
  db: string,
): Promise<Map<string, Tab>> {
  const tabs = new Map<string, Tab>();
  try {
    for (const name of ["A", "B", "C"]) {
      tabs.set(name, await openDatabaseTab(context, origin, db, name));
    }
    await Promise.all(
      [...tabs].map(([name, tab]) => callStep(tab, "write", `tab ${name} writes`, 10)),
    );
    return tabs;
  } catch (err) {
    for (const tab of tabs.values()) await tab.page.close().catch(() => {});
    throw err;
  }
}

/**
 * After leader A is gone: B and C write 10 more notes each, acknowledged by the next leader; they
 * converge on everything acknowledged so far, close, and a new tab reads it all from storage.
 */
async function followersCarryOn(
  context: BrowserContext,
  origin: string,
  db: string,
  followers: Map<string, Tab>,
  gone: string,
  started: number,
): Promise<void> {
  await Promise.all(
    [...followers].map(([name, tab]) =>
      callStep(tab, "write", `tab ${name} writes after A ${gone}`, 10)
    ),
  );
  console.log(
    `       (writes acknowledged by the next leader ${Date.now() - started} ms after A ${gone})`,
  );
  await Promise.all(
    [...followers].map(([name, tab]) =>
      callStep(tab, "flushAll", `tab ${name} flushes after A ${gone}`)
    ),
  );
  await followersConverge(context, origin, db, followers, `after the leader ${gone}`);
}

async function followersConverge(
  context: BrowserContext,
  origin: string,
  db: string,
  followers: Map<string, Tab>,
  what: string,
): Promise<void> {
  const expected = [...notes("A", 0, 10), ...notes("B", 0, 20), ...notes("C", 0, 20)].sort();
  await converged(followers, expected, `B and C converge ${what}`);
  for (const [name, tab] of followers) {
    await callStep(tab, "close", `tab ${name} closes the database`);
  }
  await readBack(context, origin, db, expected);
}

async function leaderClosed(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("leader-closed");
  const tabs = await threeTabsWritten(context, origin, db);
  try {
    const leader = tabs.get("A")!;
    tabs.delete("A");
    const started = Date.now();
    await leader.page.close();
    // Acknowledged only once a new leader has persisted them.
    await followersCarryOn(context, origin, db, tabs, "closed", started);
  } finally {
    for (const tab of tabs.values()) await tab.page.close().catch(() => {});
  }
}

async function leaderCrashed(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("leader-crashed");
  const tabs = await threeTabsWritten(context, origin, db);
  const leader = tabs.get("A")!;
  tabs.delete("A");
  try {
    const devtools = await context.newCDPSession(leader.page);
    const started = Date.now();
    // The page dies before it can answer.
    void devtools.send("Page.crash").catch(() => {});
    await followersCarryOn(context, origin, db, tabs, "crashed", started);
  } finally {
    await leader.page.close().catch(() => {});
    for (const tab of tabs.values()) await tab.page.close().catch(() => {});
  }
}

/** The browser's id of the page that holds the database's leader lock, as tab B sees it. */
async function leaderHolder(tabs: Map<string, Tab>): Promise<string> {
  return await callStep(tabs.get("B")!, "leaderLock", "tab B asks who holds the leader lock");
}

async function leaderFrozen(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("leader-frozen");
  const tabs = await threeTabsWritten(context, origin, db);
  const leader = tabs.get("A")!;
  tabs.delete("A");
  try {
    const frozenHolder = await leaderHolder(tabs);
    if (!frozenHolder) throw new Error("before the freeze no page holds the leader lock");
    const devtools = await context.newCDPSession(leader.page);
    await devtools.send("Debugger.enable");
    const started = Date.now();
    await devtools.send("Debugger.pause");
    // A keeps its lock until a follower that hears no heartbeat steals it.
    const end = started + WAIT_MS;
    while ((await leaderHolder(tabs)) === frozenHolder) {
      if (Date.now() > end) throw new Error("no follower stole the lead of the frozen leader");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    console.log(`       (the lead stolen ${Date.now() - started} ms after A froze)`);
    // The frozen page's worker still holds the files: these wait for the thaw, nothing is lost.
    const writes = Promise.all(
      [...tabs].map(([name, tab]) =>
        callStep(tab, "write", `tab ${name} writes while A is frozen`, 10)
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const thawed = Date.now();
    await devtools.send("Debugger.resume");
    await writes;
    console.log(`       (writes acknowledged ${Date.now() - thawed} ms after A thawed)`);
    const refused = await leader.page.evaluate(async () => {
      const steps = (globalThis as unknown as {
        cairnTabs: Record<string, (arg?: number) => Promise<string>>;
      }).cairnTabs;
      return await steps.write(1).then(() => "accepted", (err) => String(err?.code));
    });
    if (refused !== "E_CLOSED") {
      throw new Error(`the thawed leader's write ended ${refused}, not E_CLOSED`);
    }
    await followersConverge(context, origin, db, tabs, "after the leader froze");
  } finally {
    await leader.page.close().catch(() => {});
    for (const tab of tabs.values()) await tab.page.close().catch(() => {});
  }
}

async function reloadsReuseKeys(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("reloads");
  const RELOADS = 5;
  const leader = await openDatabaseTab(context, origin, db, "A");
  const follower = await openDatabaseTab(context, origin, db, "B");
  try {
    const sessions = new Set([
      await callStep(leader, "session", "tab A's session"),
      await callStep(follower, "session", "tab B's session"),
    ]);
    for (let i = 0; i < RELOADS; i++) {
      await loadPhase(
        follower,
        `${origin}/test/web/storage-tabs/index.html?db=${db}&name=B`,
        `tab B reloaded (${i + 1})`,
      );
      sessions.add(await callStep(follower, "session", "tab B's session"));
    }
    // Two tabs at once; the old page's key lock may still be held for a moment as the new page
    // claims one, so a third key can be taken, never one per reload.
    if (sessions.size > 3) {
      throw new Error(`${RELOADS} reloads of one of two tabs signed as ${sessions.size} sessions`);
    }
    await callStep(follower, "close", "tab B closes the database");
    await callStep(leader, "close", "tab A closes the database");
    await callStep(leader, "remove", "tab A removes the database");
  } finally {
    await follower.page.close();
    await leader.page.close();
  }
}

/** As test/web/storage-tabs/tabs.js. */
const TabNote = defineSchema({
  ns: "tabs-note",
  version: 1,
  fields: { title: { type: "string", required: true } },
});

async function waitUntil(
  condition: () => Promise<boolean> | boolean,
  what: string | (() => string),
): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > end) {
      throw new Error(`${typeof what === "string" ? what : what()}: not within ${WAIT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Tabs A (leading) and B of one database both call `sync()` with one server, beside a Deno client
 * of it: the server sees one connection from the tabs, A's; B's writes reach the Deno client and
 * the Deno client's reach B; once A's page closes, B leads and connects from the storage (the
 * stored session's key, which A signed its handshake with too), and its writes still get there.
 */
/** A sync server that records who subscribes to read, and a Deno client syncing /notes with it. */
interface SyncRig {
  readonly server: Awaited<ReturnType<typeof createSyncServer>>;
  /** The session of every subscription that asked to read, in order: who connected. */
  readonly readers: string[];
  readonly observer: Cairn;
  readonly observed: Awaited<ReturnType<Cairn["open"]>>;
}

async function withSyncRig(run: (rig: SyncRig) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cairn-tabs-sync-" });
  try {
    const readers: string[] = [];
    const server = await createSyncServer({
      dir,
      port: 0,
      authorize: ({ session, right }) => {
        if (right === "read") readers.push(session);
        return true;
      },
    });
    const observer = await Cairn.open({ schemas: [TabNote] });
    const observed = await observer.open("/notes");
    const link = sync(observer, server.url);
    try {
      await run({ server, readers, observer, observed });
    } finally {
      await link.close();
      await observer.close();
      await server.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The sessions connected to the rig's server, sorted and joined. */
function sessionsOn(rig: SyncRig): string {
  return rig.server.stats().connections.map((connection) => connection.session ?? "").sort().join();
}

function observedTitles(rig: SyncRig): string[] {
  return [...rig.observed.keys()].map((key) =>
    rig.observed.get(key, TabNote)!.get("title") as string
  );
}

async function syncThroughLeader(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("tabs-sync");
  await withSyncRig(async (rig) => {
    const { server, readers, observer, observed } = rig;
    const tabs = new Map<string, Tab>();
    const connectionsOf = (session: string) => readers.filter((s) => s === session).length;
    try {
      for (const name of ["A", "B"]) {
        tabs.set(name, await openDatabaseTab(context, origin, db, name, server.url));
      }
      const [a, b] = [tabs.get("A")!, tabs.get("B")!];
      const leaderSession = await callStep(a, "session", "tab A's session");
      const followerSession = await callStep(b, "session", "tab B's session");
      const onlyLeader = [leaderSession, observer.session.id].sort().join();
      await waitUntil(
        async () => (await callStep(b, "syncStatus", "tab B's sync status")) === "synced",
        "tab B shows the leader's connection synced",
      );
      if (sessionsOn(rig) !== onlyLeader) {
        throw new Error(`the server sees sessions ${sessionsOn(rig)}, not A's and the client's`);
      }
      await callStep(b, "write", "tab B writes", 5);
      await callStep(b, "synced", "tab B waits for the server");
      const fromB = notes("B", 0, 5);
      await waitUntil(
        () => fromB.every((title) => observedTitles(rig).includes(title)),
        "tab B's writes reach the Deno client",
      );
      observed.create(TabNote, { title: "Z from the server" });
      await waitUntil(
        async () => (await titles(b, "B")).includes("Z from the server"),
        "the Deno client's write reaches tab B",
      );
      if (sessionsOn(rig) !== onlyLeader || connectionsOf(leaderSession) !== 1) {
        throw new Error(`the server saw ${readers.join(", ")}; it sees ${sessionsOn(rig)}`);
      }

      const started = Date.now();
      await a.page.close();
      tabs.delete("A");
      // A led with the stored session's key (the first tab takes key 0), so B, serving from the
      // storage, connects as that session again.
      await waitUntil(
        async () =>
          connectionsOf(leaderSession) === 2 && sessionsOn(rig) === onlyLeader &&
          (await callStep(b, "syncStatus", "tab B's sync status")) === "synced",
        () =>
          `tab B leads and connects from the storage (the server saw ${readers.join(", ")}; ` +
          `it sees ${sessionsOn(rig)}) ${b.errors.join(" | ")}`,
      );
      console.log(`       (the next leader connected ${Date.now() - started} ms after A closed)`);
      await callStep(b, "write", "tab B writes after A closed", 5);
      await callStep(b, "synced", "tab B waits for the server again");
      const later = notes("B", 5, 5);
      await waitUntil(
        () => later.every((title) => observedTitles(rig).includes(title)),
        "tab B's later writes reach the Deno client",
      );
      if (connectionsOf(followerSession) !== 0) {
        throw new Error(`tab B connected as its own session: the server saw ${readers.join(", ")}`);
      }
      await callStep(b, "close", "tab B closes");
      await callStep(b, "remove", "tab B removes the database");
    } finally {
      for (const tab of tabs.values()) await tab.page.close().catch(() => {});
    }
  });
}

/**
 * Two pages open a database that does not exist yet and call sync() at the same moment: whichever
 * leads, the tabs end with one connection between them, and both tabs' writes reach the server,
 * the other tab and a Deno client.
 */
async function simultaneousSync(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("tabs-sync-race");
  await withSyncRig(async (rig) => {
    const tabs = new Map<string, Tab>();
    try {
      const names = ["A", "B"];
      const opened = await Promise.allSettled(
        names.map((name) => openDatabaseTab(context, origin, db, name, rig.server.url)),
      );
      opened.forEach((result, i) => {
        if (result.status === "fulfilled") tabs.set(names[i], result.value);
      });
      const failed = opened.find((result) => result.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
      await Promise.all(
        [...tabs].map(([name, tab]) => callStep(tab, "write", `tab ${name} writes`, 10)),
      );
      await Promise.all(
        [...tabs].map(([name, tab]) => callStep(tab, "synced", `tab ${name} waits for the server`)),
      );
      const expected = names.flatMap((name) => notes(name, 0, 10)).sort();
      await waitUntil(
        () => expected.every((title) => observedTitles(rig).includes(title)),
        "both tabs' writes reach the Deno client",
      );
      await converged(tabs, expected, "the two tabs converge");
      const tabSessions = await Promise.all(
        [...tabs].map(([name, tab]) => callStep(tab, "session", `tab ${name}'s session`)),
      );
      // A tab whose leader had not connected yet may have connected itself for a moment; once
      // the leader's connection is up, it follows again and closes its own.
      await waitUntil(
        () => {
          const connected = sessionsOn(rig).split(",");
          return connected.length === 2 && connected.includes(rig.observer.session.id) &&
            connected.some((session) => tabSessions.includes(session));
        },
        () => `one connection for the two tabs: the server sees ${sessionsOn(rig)}`,
      );
      const fromTabs = rig.readers.filter((session) => tabSessions.includes(session));
      console.log(
        `       (the tabs subscribed ${fromTabs.length} times, as ${
          new Set(fromTabs).size
        } session(s))`,
      );
      for (const name of ["B", "A"]) await callStep(tabs.get(name)!, "close", `tab ${name} closes`);
      await callStep(tabs.get("A")!, "remove", "tab A removes the database");
    } finally {
      for (const tab of tabs.values()) await tab.page.close().catch(() => {});
    }
  });
}

/** Leaves `tab`'s page for another one of the origin, then goes back. */
async function awayAndBack(tab: Tab, origin: string, meanwhile: () => Promise<void>) {
  await tab.page.goto(`${origin}/test/web/plain/index.html`);
  await meanwhile();
  // A page restored from the cache fires no load event: wait for the commit, then for the page.
  await tab.page.goBack({ waitUntil: "commit" });
  await tab.page.waitForFunction(() => document.body?.dataset.status !== undefined);
}

/** Whether the page is the same document as before (its marker survived), not a new load. */
async function markedBefore(tab: Tab): Promise<boolean> {
  return await tab.page.evaluate(() => "cairnMarker" in globalThis);
}

/**
 * The back/forward cache keeps a page whole (its database open, its locks held) when the user
 * navigates away, and gives it back on a back navigation. Chromium does so for a page with an open
 * database (playwright turns the cache off; this check launches a browser of its own with it on):
 * - with no other tab, the page comes back as it was, and its database works;
 * - a tab that opens the database while the page is cached asks for its locks, and the browser
 *   ends the cached page (as it would a closed one): the new tab leads and stores its writes, and
 *   going back loads the page again, which reads everything.
 */
async function backForwardCache(_context: BrowserContext, origin: string): Promise<void> {
  const browser = await launchChromium({ backForwardCache: true });
  const db = uniqueName("bfcache");
  try {
    const a = await openDatabaseTab(browser.context, origin, db, "A");
    await callStep(a, "write", "tab A writes", 2);
    await a.page.evaluate(() => Object.assign(globalThis, { cairnMarker: true }));
    await awayAndBack(a, origin, () => Promise.resolve());
    if (!(await markedBefore(a))) {
      throw new Error("the page was loaded again, not restored from the back/forward cache");
    }
    await callStep(a, "write", "tab A writes after its restore", 1);

    let b: Tab | undefined;
    await awayAndBack(a, origin, async () => {
      b = await openDatabaseTab(browser.context, origin, db, "B");
      await callStep(b, "write", "tab B writes while A is cached", 2);
    });
    if (await markedBefore(a)) {
      throw new Error("the cached page came back as it was after another tab took its locks");
    }
    const expected = [...notes("A", 0, 3), ...notes("B", 0, 2)].sort();
    const tabs = new Map([["A", a], ["B", b!]]);
    await converged(tabs, expected, "the reloaded page and the new tab");
    for (const [name, tab] of tabs) await callStep(tab, "close", `tab ${name} closes`);
    await callStep(b!, "remove", "tab B removes the database");
  } finally {
    await browser.close();
  }
}
