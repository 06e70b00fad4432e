/**
 * Every contender, as data: what it is, where it runs, what it needs. The runner, the console
 * tables, the page and docs/benchmarks.md all read this list; the code that drives each family
 * lives next to it (cairn.ts, sqlite_native.ts, sqlite_wasm.ts; text_*.ts for the text rows).
 */
import type { Feature, RuntimeName } from "../lib/types.ts";

export interface ContenderInfo {
  id: string;
  /** Short column header. */
  short: string;
  label: string;
  /**
   * Cairn; SQLite, which the other rows compare it with; a CRDT library, for the text rows; a
   * bare transport, the floor of the sync rows.
   */
  family: "cairn" | "sqlite" | "crdt" | "transport";
  runtimes: readonly RuntimeName[];
  /** Cairn features the contender needs before any of its rows can run. */
  requires: readonly Feature[];
  description: string;
}

const ALL: readonly RuntimeName[] = ["deno", "node", "browser"];
const SERVER: readonly RuntimeName[] = ["deno", "node"];

export const CONTENDERS: readonly ContenderInfo[] = [
  {
    id: "cairn",
    short: "Cairn",
    label: "Cairn default",
    family: "cairn",
    runtimes: ALL,
    requires: [],
    description:
      "Signed (one Ed25519 signature per block), relaxed durability (resolves on append). " +
      "On disk once storage (#4) lands; until then in memory.",
  },
  {
    id: "cairn-trusted",
    short: "trusted",
    label: "Cairn trusted",
    family: "cairn",
    runtimes: ALL,
    requires: [],
    description: "Trusted mode: no signing, no verification; relaxed durability. On disk once " +
      "storage (#4) lands; until then in memory.",
  },
  {
    id: "cairn-durable",
    short: "durable",
    label: "Cairn durable",
    family: "cairn",
    runtimes: ALL,
    requires: ["storage"],
    description: "Signed, durable mode: a flush resolves after fsync (OPFS flush in the browser).",
  },
  {
    id: "cairn-jsonl",
    short: "JSONL",
    label: "Cairn JSONL",
    family: "cairn",
    runtimes: ALL,
    requires: ["storage"],
    description: "Signed, relaxed, with the JSONL log format instead of binary.",
  },
  {
    id: "sqlite-full",
    short: "SQL FULL",
    label: "SQLite native, synchronous=FULL",
    family: "sqlite",
    runtimes: SERVER,
    requires: [],
    description: "node:sqlite (DatabaseSync) on a file in a temp dir; journal_mode=DELETE, " +
      "synchronous=FULL (SQLite's default: fsync on every commit).",
  },
  {
    id: "sqlite-wal",
    short: "SQL WAL",
    label: "SQLite native, WAL + synchronous=NORMAL",
    family: "sqlite",
    runtimes: SERVER,
    requires: [],
    description: "node:sqlite on a file; journal_mode=WAL, synchronous=NORMAL (the usual " +
      "performance setting: no fsync per commit, durable at checkpoints).",
  },
  {
    id: "sqlite-wal-full",
    short: "SQL WAL FULL",
    label: "SQLite native, WAL + synchronous=FULL",
    family: "sqlite",
    runtimes: SERVER,
    requires: [],
    description: "node:sqlite on a file; journal_mode=WAL, synchronous=FULL (an fsync of the WAL " +
      "at every commit, as Cairn durable's flush waits for one): the profile Cairn durable is " +
      "compared with.",
  },
  {
    id: "sqlite-off",
    short: "SQL OFF",
    label: "SQLite native, synchronous=OFF",
    family: "sqlite",
    runtimes: SERVER,
    requires: [],
    description: "node:sqlite on a file; journal_mode=DELETE, synchronous=OFF (no fsync at all).",
  },
  {
    id: "sqlite-wasm-mem",
    short: "WASM mem",
    label: "SQLite WASM, in memory",
    family: "sqlite",
    runtimes: SERVER,
    requires: [],
    description: "@sqlite.org/sqlite-wasm (oo1 API) on ':memory:', opened with flags \"c\".",
  },
  {
    id: "sqlite-wasm-opfs",
    short: "WASM OPFS",
    label: "SQLite WASM on OPFS (opfs-sahpool)",
    family: "sqlite",
    runtimes: ["browser"],
    requires: [],
    description: "@sqlite.org/sqlite-wasm in a dedicated worker on the opfs-sahpool VFS, " +
      'flags "c", PRAGMA locking_mode=EXCLUSIVE, journal_mode=WAL, synchronous=NORMAL (as the ' +
      "Deno and Node baseline; the defaults until 2026-11-27, a rollback journal synced at every " +
      "commit). The page sends one message per workload; the worker times it.",
  },
  {
    id: "sqlite-wasm-opfs-full",
    short: "OPFS FULL",
    label: "SQLite WASM on OPFS, WAL + synchronous=FULL",
    family: "sqlite",
    runtimes: ["browser"],
    requires: [],
    description: "As `sqlite-wasm-opfs`, with synchronous=FULL: the WAL is synced at every " +
      "commit, as Cairn durable's flush waits for its OPFS flush; the profile Cairn durable is " +
      "compared with in Chromium.",
  },
  {
    id: "yjs",
    short: "Yjs",
    label: "Yjs",
    family: "crdt",
    runtimes: ALL,
    requires: [],
    description: "yjs 13.6 (the exact version is in package-lock.json), in the same process: a " +
      "Y.Doc per replica with one Y.Text; each transaction's update is produced (an `update` " +
      "listener counts its bytes) and nothing is stored. Text rows only.",
  },
  {
    id: "automerge",
    short: "Automerge",
    label: "Automerge",
    family: "crdt",
    runtimes: ALL,
    requires: [],
    description: "@automerge/automerge 3.5 (WebAssembly; the exact version is in " +
      "package-lock.json), in the same process: a document per replica with one text; each " +
      "change's bytes are taken (`getLastLocalChange`) and nothing is stored. Text rows only.",
  },
  {
    id: "websocket",
    short: "WebSocket",
    label: "Raw WebSocket relay",
    family: "transport",
    runtimes: ALL,
    requires: [],
    description: "The floor of the sync rows: the runtime's own WebSocket client (in Chromium, " +
      "the page's), sending one binary message of the size Cairn's live frame has, through a relay on the same Deno " +
      "server (`Deno.serve`, `Deno.upgradeWebSocket`) that forwards it to the other sockets. " +
      "No database, no signing, no storage. Sync rows only.",
  },
];

/** The SQLite profile each runtime's Cairn rows are compared with. */
export const BASELINE: Record<RuntimeName, string> = {
  deno: "sqlite-wal",
  node: "sqlite-wal",
  browser: "sqlite-wasm-opfs",
};

/**
 * Cairn contenders compared with another SQLite profile than their runtime's BASELINE: the one
 * that waits for the disk as they do. Where a row has no figure of it (runs before 2026-11-29),
 * they are compared with the BASELINE.
 */
export const OWN_BASELINE: Readonly<Record<string, Partial<Record<RuntimeName, string>>>> = {
  "cairn-durable": {
    deno: "sqlite-wal-full",
    node: "sqlite-wal-full",
    browser: "sqlite-wasm-opfs-full",
  },
};

/**
 * SQLite profiles of one driver on the same kind of file, which differ only in how commits reach
 * the disk: on a row whose SQLite side only reads, they do the same work.
 */
export const SAME_READS: readonly (readonly string[])[] = [
  ["sqlite-full", "sqlite-wal", "sqlite-wal-full", "sqlite-off"],
  ["sqlite-wasm-opfs", "sqlite-wasm-opfs-full"],
];

/** The SQLite profile `contender`'s rows on `runtime` are compared with. */
export function baselineOf(contender: string, runtime: RuntimeName): string {
  return OWN_BASELINE[contender]?.[runtime] ?? BASELINE[runtime];
}

export function contenderInfo(id: string): ContenderInfo {
  const info = CONTENDERS.find((c) => c.id === id);
  if (!info) throw new Error(`unknown contender ${id}`);
  return info;
}

export function contendersFor(runtime: RuntimeName): ContenderInfo[] {
  return CONTENDERS.filter((c) => c.runtimes.includes(runtime));
}
