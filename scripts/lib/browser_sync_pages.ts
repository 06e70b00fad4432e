/**
 * Chromium clients of a sync server (issue #16): two browser profiles (separate OPFS, separate
 * sessions) and a Deno client in this process converge through a Deno server (in this process),
 * through a Node server (a child process on the built package), and through three Deno servers
 * on one throwaway PostgreSQL cluster, each client on a server of its own (issue #17). Each
 * profile runs test/web/sync-profiles/ and must end with everyone's notes, stored: reopened
 * without sync, the database still holds them.
 */
import { join } from "node:path";
import { Cairn, defineSchema, sync } from "../../src/mod.ts";
import { createSyncServer, postgresStore, type SyncServer } from "../../src/server.ts";
import { launchChromium, type LaunchedBrowser } from "./chromium.ts";
import { startPostgres } from "./postgres.ts";
import { loadPhase, openTab, type StoragePageCheck, uniqueName } from "./browser_storage_pages.ts";

const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: { title: { type: "string", required: true }, body: { type: "text" } },
});
/** As test/web/sync-profiles/profiles.js. */
const NOTES = 3;
const REPOSITORY = "/data/profiles";
const PROFILES = ["A", "B"];
const RUNNER = "deno";
const WAIT_MS = 20_000;

/** One server, or several sharing a store: client i connects to urls[i % urls.length]. */
interface RunningServers {
  readonly urls: readonly string[];
  stop(): Promise<void>;
}

async function denoServer(dir: string): Promise<RunningServers> {
  const server = await createSyncServer({ dir, port: 0, open: true });
  return { urls: [server.url], stop: () => server.close() };
}

/** One server per client (both profiles and the Deno client), on one PostgreSQL cluster. */
async function postgresServers(): Promise<RunningServers> {
  const cluster = await startPostgres();
  const servers: SyncServer[] = [];
  const stop = async () => {
    for (const server of servers) await server.close().catch(() => {});
    await cluster.dispose();
  };
  try {
    for (let i = 0; i <= PROFILES.length; i++) {
      servers.push(
        await createSyncServer({ store: postgresStore(cluster.url), port: 0, open: true }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls: servers.map((server) => server.url), stop };
}

/** test/fixtures/sync_server.mjs on Node: it prints its URL, and stops on SIGTERM. */
async function nodeServer(dir: string): Promise<RunningServers> {
  const child = new Deno.Command("./node_modules/.bin/node", {
    args: ["test/fixtures/sync_server.mjs", dir],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  while (!output.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the Node sync server exited before listening: ${output}`);
    output += value;
  }
  const url = /^listening (\S+)/.exec(output)?.[1];
  if (!url) throw new Error(`the Node sync server printed ${output}`);
  return {
    urls: [url],
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      lines.releaseLock();
    },
  };
}

/** A Deno client writing its notes and waiting for the profiles' ones. */
async function runnerClient(url: string): Promise<string[]> {
  const db = await Cairn.open({ schemas: [Note] });
  try {
    const link = sync(db, url, { backoff: { initialMs: 10, maxMs: 200 } });
    const notes = await db.open(REPOSITORY);
    for (let i = 0; i < NOTES; i++) notes.create(Note, { title: `${RUNNER} ${i}`, body: RUNNER });
    await link.synced();
    const deadline = Date.now() + WAIT_MS;
    while (notes.count() < NOTES * (PROFILES.length + 1) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await link.close();
    return [...notes.keys()].map((key) => notes.get(key, Note)!.get("title")).sort();
  } finally {
    await db.close();
  }
}

async function checkProfiles(origin: string, servers: RunningServers): Promise<void> {
  const urlOf = (client: number) => servers.urls[client % servers.urls.length];
  const expected = [...PROFILES, RUNNER].flatMap((name) =>
    Array.from({ length: NOTES }, (_, i) => `${name} ${i}`)
  ).sort();
  const browsers: LaunchedBrowser[] = [];
  try {
    for (const _ of PROFILES) browsers.push(await launchChromium());
    const tabs = await Promise.all(browsers.map(({ context }) => openTab(context)));
    const dbs = PROFILES.map((name) => uniqueName(`sync-${name}`));
    const url = (phase: string, i: number) =>
      `${origin}/test/web/sync-profiles/index.html?phase=${phase}&server=${
        encodeURIComponent(urlOf(i))
      }&name=${PROFILES[i]}&db=${dbs[i]}&expect=${[...PROFILES, RUNNER].join(",")}`;
    const [runner, ...pages] = await Promise.all([
      runnerClient(urlOf(PROFILES.length)),
      ...tabs.map((tab, i) => loadPhase(tab, url("write", i), `profile ${PROFILES[i]} syncs`)),
    ]);
    compare(runner, expected, "the Deno client");
    pages.forEach((text, i) => compare(JSON.parse(text), expected, `profile ${PROFILES[i]}`));
    const stored = await loadPhase(tabs[0], url("reopen", 0), "profile A reopens without sync");
    compare(JSON.parse(stored), expected, "profile A's stored database");
  } finally {
    for (const browser of browsers) await browser.close();
  }
}

function compare(actual: string[], expected: string[], who: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${who} holds ${JSON.stringify(actual)}, not ${JSON.stringify(expected)}`);
  }
}

/** One check per kind of server; each starts its servers in a scratch directory and stops them. */
function profilesThrough(
  servers: string,
  start: (dir: string) => Promise<RunningServers>,
): StoragePageCheck {
  return {
    name: `two browser profiles and a Deno client converge through ${servers}`,
    async run(_context, origin) {
      const dir = await Deno.makeTempDir({ prefix: "cairn-sync-pages-" });
      try {
        const running = await start(join(dir, "server"));
        try {
          await checkProfiles(origin, running);
        } finally {
          await running.stop();
        }
      } finally {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

export const SYNC_PAGE_CHECKS: readonly StoragePageCheck[] = [
  profilesThrough("a Deno sync server", denoServer),
  profilesThrough("a Node sync server", nodeServer),
  profilesThrough("three Deno sync servers on one PostgreSQL, one each", postgresServers),
];
