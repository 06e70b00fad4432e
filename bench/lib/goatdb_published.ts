/**
 * GoatDB's published benchmark figures (its docs page at one commit), what its harness times in
 * each row (read from its benchmark code), and the Cairn workload that does the nearest work.
 * Figures only: facts with their source, no text or code of GoatDB's. GoatDB cannot be run here
 * (JSR is out of reach and it is not on npm), so these are never measured by this bench.
 * Pure data and one helper: runs unchanged on Deno, Node and in Chromium (workloads import it).
 */
import { num } from "./format.ts";
import type { RuntimeName } from "./types.ts";

export const GOATDB_SOURCE = {
  repository: "goatplatform/goatdb",
  path: "docs/docs/benchmarks.md",
  commit: "f0f8fcfde0f11bc91e4f3919454321c37dea31a9",
  /**
   * The harness read for what each row times: benchmarks/goatdb.bench.ts, sqlite.bench.ts,
   * sqlite-browser.bench.ts, sqlite-worker.ts, mod.ts and shared/runner.ts at this commit, the
   * nearest stored one whose suites (GoatDB, GoatDB Trusted, GoatDB Fast, SQLite) and sample
   * counts match the page; its successor 14e3b674 times the same things.
   */
  harnessCommit: "b5e5e50e4c0963465c29ce9fd86c3819e2d89bef",
};

/** Where GoatDB's figures were taken, as its page states. */
export const GOATDB_SYSTEM: Record<RuntimeName, string> = {
  deno: "Deno 2.4.3, Apple M4 Pro, 24 GB, NVMe, macOS",
  node: "Node 24.4.1, Apple M4 Pro, 24 GB, NVMe, macOS",
  browser: "Chrome 139 on OPFS, Apple M4 Pro, 24 GB, macOS",
};

/** One runtime's published averages of a row, µs. */
export interface GoatFigures {
  /** GoatDB's default column. */
  goat: number;
  /** GoatDB-Trusted column (Deno and Node only). */
  trusted?: number;
  /** The SQLite column of the same run. */
  sqlite: number;
}

export interface GoatRow {
  /** The row's name on GoatDB's page. */
  name: string;
  /** The Cairn workload doing the nearest work: the id without its version, and its size. */
  workload: string;
  variant: string;
  /** Samples per figure on the page (Deno and Node; Chromium's are not published). */
  samples: { goat: number; sqlite: number };
  figures: Record<RuntimeName, GoatFigures>;
  /** What GoatDB's harness times in this row, GoatDB's side then its SQLite's. */
  goatTimed: string;
  /** How the work differs from the Cairn workload's. */
  differs: string;
  /**
   * Runtimes where the two ratios do not compare like with like, and why; such rows are shown
   * without a verdict.
   */
  notCompared?: Partial<Record<RuntimeName, string>>;
}

const ALL: RuntimeName[] = ["deno", "node", "browser"];
const SERVER: RuntimeName[] = ["deno", "node"];

function each(runtimes: readonly RuntimeName[], why: string): Partial<Record<RuntimeName, string>> {
  return Object.fromEntries(runtimes.map((r) => [r, why]));
}

/**
 * In sqlite.bench.ts (server) these rows call no ctx.start()/ctx.end(), and the runner then
 * times the whole benchmark function.
 */
const SQLITE_WHOLE_FUNCTION = "GoatDB's SQLite figure on Deno and Node times its whole " +
  "benchmark function (the row marks no start and end, so the runner clocks all of it): " +
  "importing node:sqlite, opening a new database file, CREATE TABLE and the inserts of its " +
  "setup, then the operation; its ratio is GoatDB's operation against SQLite's setup";

export const GOATDB_ROWS: readonly GoatRow[] = [
  {
    name: "Create instance",
    workload: "W01",
    variant: "new",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 1_300, trusted: 1_200, sqlite: 88.6 },
      node: { goat: 1_000, trusted: 1_200, sqlite: 112.2 },
      browser: { goat: 16_900, sqlite: 3_600 },
    },
    goatTimed: "GoatDB: making its directory, `new GoatDB({ path, trusted: true })` and waiting " +
      "until it is ready (it opens its sessions and users repositories). SQLite: " +
      "`new DatabaseSync(path)` on a new file, no pragmas (Chromium: opening a database on the " +
      "OPFS VFS in a worker already running, its pragmas and CREATE TABLE, a message each)",
    differs: "Close on Deno and Node: each side creates an empty store; Cairn's clock includes a " +
      "new Ed25519 session key pair. In Chromium Cairn's clock starts its storage worker and " +
      "our SQLite's installs its OPFS pool in a new worker",
    notCompared: {
      browser: "our SQLite side in Chromium installs its OPFS pool in a new worker inside the " +
        "clock (most of its 35 ms), where GoatDB's SQLite opened a database in a worker already " +
        "running (3.6 ms): our ratio would look far better for work GoatDB's SQLite did not do",
    },
  },
  {
    name: "Open database (empty)",
    workload: "W02",
    variant: "empty",
    samples: { goat: 3, sqlite: 10 },
    figures: {
      deno: { goat: 522.6, trusted: 381.2, sqlite: 277.3 },
      node: { goat: 422.4, trusted: 379.0, sqlite: 280.3 },
      browser: { goat: 911.7, sqlite: 2.5 },
    },
    goatTimed: "GoatDB: `db.open()` of a new repository on an instance made before the clock. " +
      "SQLite: the row GoatDB's table puts here is `Create table` (CREATE TABLE on an open " +
      "connection; in Chromium nothing: the table was made when the database opened)",
    differs: "Cairn's W02 times creating the instance and opening an existing empty repository; " +
      "its SQLite side opens a connection and prepares a statement",
    notCompared: each(
      ALL,
      "neither side does the same work as ours: GoatDB's figure leaves out creating the " +
        "instance, and its SQLite figure is CREATE TABLE (in Chromium, no work at all)",
    ),
  },
  {
    name: "Open database (100k items)",
    workload: "W03",
    variant: "100k items, a block per item",
    samples: { goat: 3, sqlite: 3 },
    figures: {
      deno: { goat: 377_600, trusted: 361_300, sqlite: 79.7 },
      node: { goat: 1_100, trusted: 840.9, sqlite: 77.7 },
      browser: { goat: 289_300, sqlite: 1_700 },
    },
    goatTimed: "GoatDB: `db.open()` of a repository of 100k items (written before by one " +
      "`db.load` each, so 100k commits in its log) on an instance made before the clock. " +
      "SQLite: `new DatabaseSync(path)` on a file of 100k rows, which reads no row (Chromium: " +
      "open, pragmas and CREATE TABLE IF NOT EXISTS in its worker)",
    differs: "Cairn's clock also creates the instance and reads one item's title, and its " +
      "SQLite side also prepares and runs that read. Both repositories were written item by " +
      "item: GoatDB's as 100k commits, Cairn's (the W03 variant compared here) as 100k blocks " +
      "of one commit each, then checkpointed at close",
    notCompared: {
      node: "GoatDB's 1.1 ms on Node cannot be a load of 100k items (the same code took " +
        "377.6 ms on Deno, and GoatDB's own read of 100k items in memory 110 ms on Node); its " +
        "harness checks nothing after the open, so what it opened is not known",
    },
  },
  {
    name: "Create item",
    workload: "W04",
    variant: "one at a time",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 484.2, trusted: 383.4, sqlite: 376.5 },
      node: { goat: 383.8, trusted: 363.2, sqlite: 229.9 },
      browser: { goat: 1_000, sqlite: 4_100 },
    },
    goatTimed: "GoatDB: one `await db.load()` on a new instance, which first opens the " +
      "repository; the append to its log is not awaited. SQLite: preparing the INSERT and one " +
      "autocommit INSERT into a new table (Chromium: one message to its worker)",
    differs: "Cairn's W04 writes 200 items per sample into a repository already open, each " +
      "sealed and appended before the next (`await repo.flush()`)",
    notCompared: each(
      ALL,
      "GoatDB's figure is mostly opening the repository (its Open (empty) row alone is " +
        "379–912 µs), which Cairn's clock does not include",
    ),
  },
  {
    name: "Read item by ID",
    workload: "W05",
    variant: "100k items",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 1.6, trusted: 1.2, sqlite: 14.0 },
      node: { goat: 0.9, trusted: 0.8, sqlite: 12.4 },
      browser: { goat: 0.5, sqlite: 566.5 },
    },
    goatTimed: "GoatDB: one `db.item(path)` in a repository of one item, timed alone (it hands " +
      "back the item handle it holds; no field is read). SQLite: preparing " +
      "`SELECT * ... WHERE id = ?` and one get (Chromium: one message to its worker)",
    differs: 'Cairn\'s W05 reads one field (`get("title")`) of random items of 100k, in a loop ' +
      "of ≥ 10 ms, per read; its SQLite side reuses one prepared statement and, in Chromium, " +
      "runs the loop inside its worker: GoatDB's SQLite paid a prepare (and in Chromium a " +
      "worker round trip) per read, which makes its ratio look better",
  },
  {
    name: "Update item",
    workload: "W06",
    variant: "100k items",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 137.7, trusted: 82.2, sqlite: 1_000 },
      node: { goat: 122.2, trusted: 90.4, sqlite: 1_200 },
      browser: { goat: 101.5, sqlite: 3_100 },
    },
    goatTimed: "GoatDB: three `item.set()` and `await item.commit()`; the append to its log is " +
      "not awaited. SQLite (Chromium): one UPDATE, a message to its worker",
    differs: "Cairn's W06 sets one field and awaits `repo.flush()` (the block sealed and " +
      "appended; in Chromium that is a message to its storage worker) per update, in a " +
      "repository of 100k items; GoatDB's clock stops before anything reaches its log",
    notCompared: each(SERVER, SQLITE_WHOLE_FUNCTION),
  },
  {
    name: "Bulk create 100 items",
    workload: "W07",
    variant: "100 items",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 13_700, trusted: 2_200, sqlite: 1_000 },
      node: { goat: 6_800, trusted: 1_800, sqlite: 674.6 },
      browser: { goat: 21_400, sqlite: 6_800 },
    },
    goatTimed: "GoatDB: 100 `db.load()` at once on a new instance (opening the repository " +
      "first), then, in the default column only, `db.flushAll()` (an fsync on Deno). SQLite " +
      "(Chromium): BEGIN, 100 INSERTs, COMMIT, a message each (102 round trips)",
    differs: "Cairn's W07 creates 100 items in a repository already open and awaits one " +
      "`repo.flush()`; our SQLite side runs its transaction inside its worker in one message, " +
      "where GoatDB's made 102 round trips (which makes GoatDB's ratio look better), and " +
      "GoatDB's clock includes opening the repository (which makes it look worse)",
    notCompared: each(SERVER, SQLITE_WHOLE_FUNCTION),
  },
  {
    name: "Bulk read 100 items",
    workload: "W08",
    variant: "100k items",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 228.3, trusted: 208.8, sqlite: 430.8 },
      node: { goat: 193.9, trusted: 147.2, sqlite: 416.4 },
      browser: { goat: 140.0, sqlite: 44_000 },
    },
    goatTimed: "GoatDB: 100 `db.item(path)` in a repository of 100 items (handles; no field " +
      "read). SQLite: preparing `SELECT * ... WHERE id = ?` and 100 gets in autocommit " +
      "(Chromium: 100 messages to its worker)",
    differs: "Cairn's W08 reads one field of 100 random items of 100k; its SQLite side runs " +
      "its 100 SELECTs in one read transaction (in Chromium, inside its worker in one message): " +
      "GoatDB's SQLite paid a worker round trip per read in Chromium, which makes its ratio " +
      "there look far better",
  },
  {
    name: "Read 100k items",
    workload: "W11",
    variant: "100k items",
    samples: { goat: 3, sqlite: 3 },
    figures: {
      deno: { goat: 119_700, trusted: 368_500, sqlite: 53_400 },
      node: { goat: 110_300, trusted: 417_300, sqlite: 36_200 },
      browser: { goat: 84_500, sqlite: 358_200 },
    },
    goatTimed: "GoatDB: every key's value of an open repository of 100k items (default: " +
      "`repo.valueForKey`, no field read; trusted: `db.item(path)` for each key). SQLite: " +
      "`SELECT *` on a connection opened before the clock, an object per row " +
      "(Chromium: one message to its worker)",
    differs: "Cairn's W11 reads every item's title; its SQLite side reads id and title (in " +
      "the version before 2026-11-29, an object per row, as GoatDB's SQLite did; from v3, rows " +
      "as arrays)",
  },
  {
    name: "Simple query",
    workload: "W12",
    variant: "100 → 50",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 321.3, trusted: 145.6, sqlite: 1_200 },
      node: { goat: 377.6, trusted: 193.3, sqlite: 752.1 },
      browser: { goat: 826.0, sqlite: 668.0 },
    },
    goatTimed: "GoatDB: `db.query()` with a predicate function (count > 50) over 100 items, " +
      "until loaded (49 results; the same query each sample, its data kept between samples). " +
      "SQLite (Chromium): `SELECT * ... WHERE count > 50`, no index on count, one message",
    differs: "Cairn's W12 filters on count through an index on count (50 results; 51 in v2), " +
      "with an index on count on its SQLite side too, and reads each result's key, title and " +
      "count",
    notCompared: each(SERVER, SQLITE_WHOLE_FUNCTION),
  },
  {
    name: "Complex query with sort",
    workload: "W14",
    variant: "100 → 50",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 96.9, trusted: 96.9, sqlite: 1_300 },
      node: { goat: 114.5, trusted: 137.1, sqlite: 742.4 },
      browser: { goat: 697.0, sqlite: 538.5 },
    },
    goatTimed: "GoatDB: `db.query()` over 100 items, 30 < count < 70 and a tag test, sorted by " +
      "count (1 result). SQLite (Chromium): the same filter with `tags LIKE`, ORDER BY count, " +
      "one message",
    differs: "Cairn's W14 returns 50 results (count < 50, sorted by title, through an index on " +
      "count), where GoatDB's returns one",
    notCompared: each(SERVER, SQLITE_WHOLE_FUNCTION),
  },
  {
    name: "Count operation",
    workload: "W17",
    variant: "100k items",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 1.8, trusted: 1.5, sqlite: 1_500 },
      node: { goat: 3.1, trusted: 1.4, sqlite: 676.4 },
      browser: { goat: 2.0, sqlite: 522.5 },
    },
    goatTimed: "GoatDB: `db.count()` of a repository of 10 items, timed alone. SQLite " +
      "(Chromium): `SELECT COUNT(*)` of 10 rows, one message",
    differs: "Cairn's W17 counts 100k items, in a loop, per call",
    notCompared: {
      ...each(SERVER, SQLITE_WHOLE_FUNCTION),
      browser: "GoatDB's SQLite figure is one worker round trip counting 10 rows; ours " +
        "counts 100k rows inside the worker",
    },
  },
  {
    name: "Keys operation",
    workload: "W18",
    variant: "100k items",
    samples: { goat: 10, sqlite: 10 },
    figures: {
      deno: { goat: 3.2, trusted: 2.0, sqlite: 1_600 },
      node: { goat: 3.3, trusted: 2.7, sqlite: 647.9 },
      browser: { goat: 3.0, sqlite: 512.5 },
    },
    goatTimed: "GoatDB: `Array.from(db.keys())` of 10 items. SQLite (Chromium): `SELECT id` of " +
      "10 rows, one message",
    differs: "Cairn's W18 takes the keys of 100k items",
    notCompared: {
      ...each(SERVER, SQLITE_WHOLE_FUNCTION),
      browser: "10 keys against 100k: GoatDB's SQLite figure is one worker round trip's fixed " +
        "cost, ours a scan of 100k rows",
    },
  },
];

/** Rows GoatDB publishes that no Cairn row is set beside, and why. */
export const GOATDB_LEFT_OUT: readonly string[] = [
  "Fast mode (Deno and Node, against SQLite with synchronous = OFF): its create and update " +
  "rows stop the clock before any commit (`db.create()`, `item.set()` only) and its read rows " +
  "run the trusted rows' code",
  "Synchronization (700–1,000 ms end to end): measured by hand, without a harness to read",
];

/** The row GoatDB publishes for a Cairn workload (the id without its version), if any. */
export function goatdbRowFor(workload: string): GoatRow | undefined {
  return GOATDB_ROWS.find((r) => r.workload === workload);
}

/** "1.0–1.3 ms", "379–523 µs", "841 µs–378 ms", "12.4 µs". */
function range(low: number, high: number): string {
  const unit = (us: number) => (us >= 1000 ? "ms" : "µs");
  const value = (us: number) => num(us >= 1000 ? us / 1000 : us);
  if (low === high) return `${value(low)} ${unit(low)}`;
  if (unit(low) === unit(high)) return `${value(low)}–${value(high)} ${unit(high)}`;
  return `${value(low)} ${unit(low)}–${value(high)} ${unit(high)}`;
}

/**
 * The short `context` of a workload GoatDB publishes a row for: its name and figures, pointing
 * at the section that sets them beside ours.
 */
export function goatdbContext(workload: string): string {
  const row = goatdbRowFor(workload);
  if (!row) throw new Error(`GoatDB publishes no row for ${workload}`);
  const { deno, node, browser } = row.figures;
  const server = [deno.goat, deno.trusted ?? deno.goat, node.goat, node.trusted ?? node.goat];
  const sqlite = [deno.sqlite, node.sqlite];
  return `GoatDB publishes "${row.name}": ${
    range(Math.min(...server), Math.max(...server))
  } on Deno and Node (its SQLite: ${range(Math.min(...sqlite), Math.max(...sqlite))}), ${
    range(browser.goat, browser.goat)
  } in Chrome (its SQLite: ${range(browser.sqlite, browser.sqlite)}), averages on an Apple M4 ` +
    'Pro; "GoatDB\'s published figures" sets them beside ours and says how the work differs.';
}
