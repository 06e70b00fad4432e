/**
 * SQLite WASM (@sqlite.org/sqlite-wasm, oo1 API) behind the bench's SQL surface: in memory on
 * Deno and Node, on the opfs-sahpool VFS inside the browser worker (web/bench/sqlite_worker.ts).
 */
import sqlite3InitModule from "@sqlite.org/sqlite-wasm";
import type { SqlDatabase, SqlEngine, SqlRow, SqlStatement, SqlValue } from "../lib/sql.ts";

type Sqlite3 = Awaited<ReturnType<typeof sqlite3InitModule>>;
type Oo1Db = InstanceType<Sqlite3["oo1"]["DB"]>;
type Oo1Stmt = ReturnType<Oo1Db["prepare"]>;

let loaded: Promise<Sqlite3> | undefined;

/** The WASM module, loaded once per process (or worker). */
export function loadSqliteWasm(): Promise<Sqlite3> {
  loaded ??= sqlite3InitModule();
  return loaded;
}

/** ':memory:' databases: each open is a new, empty database (nothing can be reopened). */
export async function wasmMemoryEngine(): Promise<SqlEngine> {
  const sqlite3 = await loadSqliteWasm();
  return {
    id: "sqlite-wasm-mem",
    persistent: false,
    pragmas: "(defaults; in memory)",
    open: () => wrapDatabase(new sqlite3.oo1.DB(":memory:", "c")),
    remove() {},
    wasmMemoryBytes: () => sqlite3.wasm.heap8u().byteLength,
  };
}

/**
 * As the Deno and Node baseline (sqlite-wal): a write-ahead log synced at checkpoints, not at each
 * commit, against Cairn's relaxed default (written, not flushed). WAL needs no shared memory under
 * exclusive locking, set first. (Until 2026-11-27: the defaults, a rollback journal synced at every
 * commit, which made Cairn's browser write rows look 1.5–2× better than like for like.)
 */
const OPFS_PRAGMAS =
  "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;";

/**
 * The OPFS profiles, by contender id: the baseline, and WAL synced at every commit (as
 * sqlite-wal-full on Deno and Node), which Cairn durable is compared with.
 */
export const OPFS_PROFILES: Record<string, string> = {
  "sqlite-wasm-opfs": OPFS_PRAGMAS,
  "sqlite-wasm-opfs-full":
    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
};

/** The bench worker's pool of OPFS files, emptied when the worker starts. */
export const BENCH_POOL = "cairn-bench";

type PoolUtil = Awaited<ReturnType<Sqlite3["installOpfsSAHPoolVfs"]>>;

/** The pools this worker has installed: once each, whichever profile asks first. */
const pools = new Map<string, Promise<PoolUtil>>();

/**
 * Databases on OPFS through the opfs-sahpool VFS (worker only), in the pool `pool`: the bench
 * worker's own, emptied first, or one kept from an earlier worker (Chromium's W01/W02 start a
 * worker per sample on a pool prepared before the clock); with the pragmas of the profile `id`.
 */
export async function wasmOpfsEngine(
  pool = BENCH_POOL,
  id = "sqlite-wasm-opfs",
): Promise<SqlEngine & { stop(): void }> {
  const pragmas = OPFS_PROFILES[id];
  if (!pragmas) throw new Error(`no SQLite OPFS profile ${id}`);
  const sqlite3 = await loadSqliteWasm();
  let installing = pools.get(pool);
  if (!installing) {
    installing = sqlite3.installOpfsSAHPoolVfs({
      name: pool,
      clearOnInit: pool === BENCH_POOL,
      initialCapacity: 16,
    });
    pools.set(pool, installing);
  }
  const vfs = await installing;
  const file = (name: string) => `/${name}.sqlite3`;
  return {
    id,
    persistent: true,
    pragmas,
    open(name) {
      const db = new sqlite3.oo1.DB({ filename: file(name), flags: "c", vfs: vfs.vfsName });
      db.exec(pragmas);
      return wrapDatabase(db);
    },
    remove(name) {
      vfs.unlink(file(name));
      vfs.unlink(`${file(name)}-journal`);
      vfs.unlink(`${file(name)}-wal`);
    },
    wasmMemoryBytes: () => sqlite3.wasm.heap8u().byteLength,
    /** Lets go of the pool's files, so that another worker can install it. */
    stop: () => void vfs.pauseVfs(),
  };
}

export async function wasmSqliteVersion(): Promise<string> {
  return (await loadSqliteWasm()).version.libVersion;
}

function wrapDatabase(db: Oo1Db): SqlDatabase {
  return {
    exec: (sql) => void db.exec(sql),
    prepare: (sql) => wrapStatement(db.prepare(sql)),
    close: () => db.close(),
  };
}

function wrapStatement(statement: Oo1Stmt): SqlStatement {
  const bind = (params: SqlValue[]) => {
    if (params.length > 0) statement.bind(params);
  };
  return {
    run(...params) {
      bind(params);
      statement.step();
      statement.reset();
    },
    get(...params) {
      bind(params);
      const row = statement.step() ? statement.get({}) as SqlRow : undefined;
      statement.reset();
      return row;
    },
    all(...params) {
      const rows: SqlRow[] = [];
      this.each(params, (row) => rows.push(row));
      return rows;
    },
    values(...params) {
      const rows: SqlValue[][] = [];
      bind(params);
      while (statement.step()) rows.push(statement.get([]) as SqlValue[]);
      statement.reset();
      return rows;
    },
    each(params, fn) {
      bind(params);
      while (statement.step()) fn(statement.get({}) as SqlRow);
      statement.reset();
    },
    finalize: () => void statement.finalize(),
  };
}
