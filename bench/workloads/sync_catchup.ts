/**
 * S03–S04: what a client costs the server and the wire when it (re)joins a big repository.
 * S03: a new client catches up on 100k items (time, and bytes against the repository's log),
 * beside importing the same blocks from a local file. S04: a client that was synced reconnects
 * after one change, in a repository written by 10 and by 1,000 sessions (bytes, server CPU):
 * neither may grow with the items or the sessions.
 */
import type { TextCtx } from "../contenders/text.ts";
import { Cairn } from "../../src/mod.ts";
import { ItemSchema, REPO_PATH } from "../contenders/cairn.ts";
import { countLabel } from "../lib/format.ts";
import { now } from "../lib/timer.ts";
import { side, type TextWorkload, type Variant } from "../lib/types.ts";
import type { BlockFile, SyncHost } from "../sync/host.ts";
import { type Observer, openObserver } from "../sync/observer.ts";
import { type BenchWorkload, big, itemsLabel } from "./common.ts";
import { type ServerAndPeer, serverAndPeer, SYNC_ROW, syncHost } from "./sync_common.ts";
import { kB } from "./text_common.ts";

// ── Seeded repositories, written once per process and shared by the rows that read them ─────

/** How a repository was written: one bulk write, one write per item, or by many sessions. */
type Seeding = "bulk" | "separate" | "sessions";

interface Seed {
  seeding: Seeding;
  items: number;
  sessions: number;
}

/** A server holding a seeded repository, and the client process that wrote it. */
interface Seeded {
  processes: ServerAndPeer;
  /** The public key of the client process's session (the writer of a bulk or separate seed). */
  writer: string;
}

const seeded = new Map<string, Promise<Seeded>>();

/**
 * A server holding `seed`'s repository, and a client process that wrote it (by many sessions:
 * one more session, opened on it afterwards, which S04 writes its one change with). Kept for
 * the process's life: the processes end with it.
 */
function seededServer(host: SyncHost, seed: Seed): Promise<Seeded> {
  const key = `${seed.seeding}|${seed.items}|${seed.sessions}`;
  let made = seeded.get(key);
  if (!made) {
    made = (async () => {
      const processes = await serverAndPeer(host, "cairn");
      const { peer, url } = processes;
      const n = seed.items;
      const open = { op: "open", url, transport: "cairn" };
      if (seed.seeding === "sessions") {
        await peer.request({ op: "sessions", url, from: 0, n, sessions: seed.sessions });
        return { processes, writer: await peer.request<string>(open) };
      }
      const writer = await peer.request<string>(open);
      await peer.request({ op: seed.seeding, from: 0, n });
      return { processes, writer };
    })();
    seeded.set(key, made);
    made.catch(() => seeded.delete(key));
  }
  return made;
}

function seedOf(variant: Variant): Seed {
  return {
    seeding: variant.seeding as Seeding,
    items: variant.items,
    sessions: (variant.sessions as number | undefined) ?? 1,
  };
}

/** A new observer, from opening its database until it is synced and holds every item. */
export async function caughtUp(url: string, items: number, path?: string): Promise<Observer> {
  const observer = await openObserver(url, path);
  await observer.link.synced();
  await observer.holds(items);
  return observer;
}

function bytesOf(frames: readonly Uint8Array[]): number {
  return frames.reduce((sum, f) => sum + f.byteLength, 0);
}

// ── S03: catch-up of a new client ────────────────────────────────────────────────────────────

/** Each seeding, from the server; with `withFile`, each also from a local file. */
function catchUpVariants(withFile: boolean) {
  return (quick: boolean): Variant[] => {
    const n = big(quick);
    const seedings = [
      { label: `${itemsLabel(n)}, 1 bulk write`, items: n, seeding: "bulk" },
      { label: `${itemsLabel(n)}, ${countLabel(n)} writes`, items: n, seeding: "separate" },
    ];
    return [
      ...seedings.map((s) => ({ ...s, source: "server" })),
      ...(withFile
        ? seedings.map((s) => ({ ...s, label: `${s.label}, from a file`, source: "file" }))
        : []),
    ];
  };
}

interface CatchUp {
  url: string;
  items: number;
  /** Where the new client keeps its database (SyncHost.catchUpLocation); none: in memory. */
  location?(): string | undefined;
  /** For the file variant: the blocks a caught-up client exported, and their writer. */
  file?: { blocks: BlockFile; writer: string };
}

/** Opens a database trusting the writer (at `path`, or in memory), imports the file's blocks. */
async function importFromFile(
  file: BlockFile,
  writer: string,
  items: number,
  path?: string,
): Promise<number> {
  const start = now();
  const db = await Cairn.open({ schemas: [ItemSchema], trust: [writer], path });
  const repo = await db.open(REPO_PATH);
  await repo.importBlocks(await file.load());
  const ms = now() - start;
  const count = repo.count();
  await db.close();
  if (count !== items) throw new Error(`imported ${count} items of ${items}`);
  return ms;
}

const S03: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S03.v1",
  title: "Catch-up of a new client",
  unit: "ms",
  better: "lower",
  scale: "long",
  variants: catchUpVariants(true),
  timed: "From opening a new in-memory database (signed) in the bench process and linking it " +
    "to the server process until `link.synced()` resolves and the repository holds every item: " +
    "handshake, subscribe, the server reading its store and sending `blocks` frames under the " +
    "client's credit, the client verifying and importing each. The repository was written by a " +
    "client process before the row, either as one bulk write (one tick, sealed in blocks capped " +
    "at 256 KiB) or as one write per item (a block each). From a file: the same blocks as " +
    "`exportBlocks` gave them, read from a local file and given to `importBlocks` in the bench " +
    "process (opening the database included), no server.",
  fairness: "The file variant does the client's part of catch-up (verify and import every " +
    "block) without the network and the server: the difference is what syncing adds.",
  runtimeNotes: {
    browser: "S03 in Chromium: the new client is the bench page, its database on OPFS (a new " +
      "directory each sample, relaxed durability), as an app would keep it (on Deno and Node: " +
      "in memory); the from-a-file variant reads its file from OPFS and imports into a " +
      "database on OPFS as well. The repository was written by a Deno client process.",
  },
  targets: [{ contender: "cairn", atMost: 1_000 }],
  context: "issue #16 targets ≤ 1 s for the bulk-written repository on loopback (the target " +
    "is shown on every size; it applies to that one). Written one item at a time, the " +
    "repository is one block per item, and catch-up costs per block, not per byte: importing " +
    "20k such blocks from memory took about 58 µs a block on the bench machine (about 25 µs " +
    "in trusted mode, without signature checks), against 7 blocks for the same items written " +
    "at once. The from-a-file sizes show the client's share of each.",
  text: side({
    async setup(ctx: TextCtx, variant: Variant): Promise<CatchUp> {
      const host = syncHost(ctx);
      const { processes: { url }, writer } = await seededServer(host, seedOf(variant));
      const location = () => host.catchUpLocation?.();
      if (variant.source !== "file") return { url, items: variant.items, location };
      const observer = await caughtUp(url, variant.items);
      const frames = await observer.repo.exportBlocks();
      await observer.close();
      const blocks = await host.saveBlocks(frames);
      return { url, items: variant.items, location, file: { blocks, writer } };
    },
    async sample(state: CatchUp): Promise<number> {
      const path = state.location?.();
      if (state.file) {
        return await importFromFile(state.file.blocks, state.file.writer, state.items, path);
      }
      const start = now();
      const observer = await caughtUp(state.url, state.items, path);
      const ms = now() - start;
      await observer.close();
      return ms;
    },
    teardown: (state: CatchUp) => state.file?.blocks.remove(),
  }),
};

const S03_BYTES: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S03b.v1",
  title: "Catch-up of a new client, bytes on the wire",
  unit: "% of log",
  better: "lower",
  scale: "size",
  variants: catchUpVariants(false),
  timed: "A new client catches up as in S03; its WebSocket payload bytes, every message both " +
    "ways (handshake, subscribe, credit, members, blocks, synced), counted at the client, as a " +
    "percentage of the repository's log: the bytes of every block as `exportBlocks` gives them.",
  fairness: "Both figures count the same blocks; the wire adds frame headers and the protocol's " +
    "own messages.",
  runtimeNotes: {
    browser: "S03b in Chromium: the new client is the bench page (in memory); its bytes are " +
      "counted at the page's WebSocket.",
  },
  targets: [{ contender: "cairn", atMost: 120 }],
  context: "issue #16: bytes ≤ 1.2× the log.",
  text: side({
    async setup(ctx: TextCtx, variant: Variant): Promise<CatchUp> {
      const { processes: { url } } = await seededServer(syncHost(ctx), seedOf(variant));
      return { url, items: variant.items };
    },
    async sample(state: CatchUp): Promise<number> {
      const observer = await caughtUp(state.url, state.items);
      const { sent, received } = observer.sockets.count;
      const log = bytesOf(await observer.repo.exportBlocks());
      await observer.close();
      return (100 * (sent + received)) / log;
    },
  }),
};

// ── S04: reconnect after one change ──────────────────────────────────────────────────────────

function reconnectVariants(quick: boolean): Variant[] {
  const n = big(quick);
  return [10, quick ? 100 : 1_000].map((sessions) => ({
    label: `${itemsLabel(n)}, ${countLabel(sessions)} sessions`,
    items: n,
    seeding: "sessions",
    sessions,
  }));
}

interface Reconnect {
  processes: ServerAndPeer;
  observer: Observer;
  /** Items the repository holds. */
  items: number;
}

interface ReconnectCost {
  bytes: number;
  serverCpuUs: number;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/**
 * Takes the observer offline, has the writer process write one item (acknowledged by the
 * server), then lets the observer reconnect: the bytes of the new connection and the server's
 * CPU time from just before it until the observer holds the item and is synced.
 */
async function reconnectAfterOneChange(state: Reconnect): Promise<ReconnectCost> {
  const { observer, processes } = state;
  observer.sockets.offline = true;
  observer.sockets.dropAll();
  await until(() => observer.link.status !== "synced");
  processes.peer.post({ op: "write", i: state.items });
  await processes.peer.request({ op: "synced" });
  state.items++;
  const cpuBefore = await processes.server.request<number>({ op: "cpu" });
  observer.sockets.reset();
  observer.sockets.offline = false;
  await observer.holds(state.items);
  await observer.link.synced();
  const cpuAfter = await processes.server.request<number>({ op: "cpu" });
  const { sent, received } = observer.sockets.count;
  return { bytes: sent + received, serverCpuUs: cpuAfter - cpuBefore };
}

const RECONNECT = {
  ...SYNC_ROW,
  better: "lower",
  scale: "ms",
  variants: reconnectVariants,
} as const;

const RECONNECT_FAIRNESS = "Both variants hold the same items; only the number of sessions " +
  "that wrote them differs, so a figure that grew with the sessions would show between the " +
  "two. The writer of the change is one more session, known to the client after the warm-up.";

function reconnectSide(measure: (cost: ReconnectCost) => number) {
  return side({
    async setup(ctx: TextCtx, variant: Variant): Promise<Reconnect> {
      const { processes } = await seededServer(syncHost(ctx), seedOf(variant));
      const observer = await caughtUp(processes.url, variant.items);
      return { processes, observer, items: observer.repo.count() };
    },
    sample: async (state: Reconnect) => measure(await reconnectAfterOneChange(state)),
    teardown: (state: Reconnect) => state.observer.close(),
  });
}

const S04: TextWorkload<TextCtx> = {
  ...RECONNECT,
  id: "S04.v1",
  title: "Reconnect after one change, bytes on the wire",
  unit: "kB",
  timed: "A synced client in the bench process is cut off (its socket closed, new ones refused); " +
    "a client process writes one item and the server acknowledges it; the client is let back " +
    "and reconnects with the cursor it holds. Counted: the new connection's WebSocket payload " +
    "bytes, both ways, at the client (handshake, subscribe, members, the one block, synced).",
  fairness: RECONNECT_FAIRNESS,
  runtimeNotes: {
    browser: "S04 in Chromium: the reconnecting client is the bench page (in memory), its bytes " +
      "counted at the page's WebSocket; the writer of the change is a Deno client process.",
  },
  text: reconnectSide((cost) => kB(cost.bytes)),
};

const S04_CPU: TextWorkload<TextCtx> = {
  ...RECONNECT,
  id: "S04b.v1",
  title: "Reconnect after one change, server CPU",
  unit: "ms",
  timed: "As S04; measured: the server process's user + system CPU time " +
    "(`process.cpuUsage()`, asked over its control channel just before the client is let back " +
    "and again once it is synced), the two control requests included.",
  fairness: RECONNECT_FAIRNESS,
  runtimeNotes: {
    browser: "S04b in Chromium: the reconnecting client is the bench page; the page asks the " +
      "server for its CPU time through the runner (one more hop each way, outside the server).",
  },
  text: reconnectSide((cost) => cost.serverCpuUs / 1000),
};

export const SYNC_CATCHUP: readonly BenchWorkload[] = [S03, S03_BYTES, S04, S04_CPU];
