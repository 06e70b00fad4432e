/**
 * SQLite native through node:sqlite (Deno 2 and Node 24 both ship it), in four pragma profiles,
 * each on database files in its own temp dir.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { SqlDatabase, SqlEngine, SqlRow, SqlStatement, SqlValue } from "../lib/sql.ts";

const PROFILES: Record<string, string> = {
  "sqlite-full": "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;",
  "sqlite-wal": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
  "sqlite-wal-full": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
  "sqlite-off": "PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;",
};

export const NATIVE_IDS = Object.keys(PROFILES);

export function nativeEngine(id: string, dir: string): SqlEngine {
  const pragmas = PROFILES[id];
  if (!pragmas) throw new Error(`no SQLite profile ${id}`);
  return {
    id,
    persistent: true,
    pragmas,
    open(name) {
      const db = new DatabaseSync(join(dir, `${name}.sqlite3`));
      db.exec(pragmas);
      return wrapDatabase(db);
    },
    remove(name) {
      for (const suffix of ["", "-journal", "-wal", "-shm"]) {
        rmSync(join(dir, `${name}.sqlite3${suffix}`), { force: true });
      }
    },
  };
}

export function nativeSqliteVersion(): string {
  const db = new DatabaseSync(":memory:");
  const row = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
  db.close();
  return row.v;
}

function wrapDatabase(db: DatabaseSync): SqlDatabase {
  return {
    exec: (sql) => db.exec(sql),
    prepare: (sql) => wrapStatement(db.prepare(sql)),
    close: () => db.close(),
  };
}

function wrapStatement(statement: StatementSync): SqlStatement {
  return {
    run: (...params: SqlValue[]) => void statement.run(...params),
    get: (...params: SqlValue[]) => statement.get(...params) as never,
    all: (...params: SqlValue[]) => statement.all(...params) as SqlRow[],
    values(...params: SqlValue[]) {
      statement.setReturnArrays(true);
      try {
        return statement.all(...params) as unknown as SqlValue[][];
      } finally {
        statement.setReturnArrays(false);
      }
    },
    each(params, fn) {
      for (const row of statement.iterate(...params)) fn(row as never);
    },
    finalize() {},
  };
}
