/**
 * The small synchronous SQL surface the SQLite sides of the workloads are written against, so the
 * same side runs on node:sqlite (Deno, Node) and on SQLite WASM (in memory, or on OPFS inside
 * the browser worker). Also the table every SQLite side uses and the statements on it.
 */
import { itemKey, itemValues, tagsJson } from "./items.ts";
import type { FreshReply, FreshTask } from "../fresh/protocol.ts";

export type SqlValue = string | number | null;
export type SqlRow = Record<string, SqlValue>;

export interface SqlStatement {
  run(...params: SqlValue[]): void;
  get(...params: SqlValue[]): SqlRow | undefined;
  /** Every result row, in an array: the quickest way to read many rows on each driver. */
  all(...params: SqlValue[]): SqlRow[];
  /**
   * Every result row as an array of its column values, in the SELECT's order: no object per row
   * (node:sqlite's `setReturnArrays(true)`, SQLite WASM's `get([])`). The quicker way to read
   * many rows on both drivers (about half the time of `all` on node:sqlite for W18's 100k ids);
   * the rows that read many rows use it (W10, W11, W18, the query rows).
   */
  values(...params: SqlValue[]): SqlValue[][];
  /**
   * Calls `fn` for each result row without building an array: only where not holding them all
   * is the point (a memory probe). On node:sqlite it is several times slower than `all`.
   */
  each(params: SqlValue[], fn: (row: SqlRow) => void): void;
  finalize(): void;
}

export interface SqlDatabase {
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  close(): void;
}

/** One SQLite contender: a driver plus a pragma profile plus a place for its files. */
export interface SqlEngine {
  readonly id: string;
  /** False for in-memory databases: nothing survives a close, so nothing can be reopened. */
  readonly persistent: boolean;
  /** The pragmas `open` applies, as documentation. */
  readonly pragmas: string;
  /** Opens (creating when missing) the database `name`, applying the profile's pragmas. */
  open(name: string): SqlDatabase;
  /** Deletes the database `name` and its journal files, if any. */
  remove(name: string): void;
  /** For SQLite WASM: the size of its WebAssembly memory (it only grows). */
  wasmMemoryBytes?(): number;
}

export interface SqlCtx {
  engine: SqlEngine;
  /**
   * Runs `task` on the database `name` of this engine in a fresh process of the runtime; absent
   * where there is none (the browser, SQLite WASM in memory).
   */
  inFreshProcess?(task: FreshTask, name: string): Promise<FreshReply>;
  /** Resident set size of the process, where the runtime can tell. */
  rssBytes(): number | undefined;
  gc(): void;
}

/** What Chromium's W01/W02 do after opening a database in a SQLite worker the page started. */
export interface OpenSteps {
  createTable?: boolean;
  prepareSelect?: boolean;
}

/** SQLite WASM in a worker the page started for one sample, its WebAssembly loaded. */
export interface WorkerSqlite {
  /** Installs the opfs-sahpool VFS on the pool `pool` (kept if it exists). */
  install(pool: string): Promise<void>;
  /** Opens (creating when missing) the database `name`, then the steps; it stays open. */
  open(name: string, steps: OpenSteps): Promise<void>;
  /** Closes what is open, removes `remove` if given, lets go of the pool and ends the worker. */
  stop(remove?: string): Promise<void>;
}

/** What a SQLite side run by the page itself gets (see `SqlWorkload.sqliteInPage`). */
export interface PageSqlCtx {
  /** A new worker that has loaded SQLite WASM. */
  startWorker(): Promise<WorkerSqlite>;
}

/** `open` of a WorkerSqlite, inside its worker. */
export function openWithSteps(engine: SqlEngine, name: string, steps: OpenSteps): SqlDatabase {
  const db = engine.open(name);
  if (steps.createTable) db.exec(CREATE_TABLE);
  if (steps.prepareSelect) db.prepare(SELECT_TITLE).finalize();
  return db;
}

export const CREATE_TABLE =
  "CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY, title TEXT NOT NULL, " +
  "count INTEGER NOT NULL, tags TEXT NOT NULL)";
export const CREATE_COUNT_INDEX = "CREATE INDEX IF NOT EXISTS items_count ON items (count)";
export const INSERT = "INSERT INTO items (id, title, count, tags) VALUES (?, ?, ?, ?)";
export const SELECT_TITLE = "SELECT title FROM items WHERE id = ?";
export const UPDATE_COUNT = "UPDATE items SET count = ? WHERE id = ?";

let nameCounter = 0;

/** A database name no other side of this run uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++nameCounter}`;
}

/** Inserts items [from, to) in one transaction through one prepared statement. */
export function fillItems(db: SqlDatabase, from: number, to: number): void {
  const insert = db.prepare(INSERT);
  db.exec("BEGIN");
  for (let i = from; i < to; i++) {
    insert.run(itemKey(i), itemValues(i).title, i, tagsJson(i));
  }
  db.exec("COMMIT");
  insert.finalize();
}

/** A new database holding `items` items (any old one of that name is removed first). */
export function freshDatabase(
  engine: SqlEngine,
  name: string,
  items: number,
  extra: readonly string[] = [],
): SqlDatabase {
  engine.remove(name);
  const db = engine.open(name);
  db.exec(CREATE_TABLE);
  for (const sql of extra) db.exec(sql);
  if (items > 0) fillItems(db, 0, items);
  return db;
}
