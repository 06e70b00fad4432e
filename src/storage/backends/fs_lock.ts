/**
 * The writer lock of a database directory on Deno and Node: at most one process has it open.
 *
 * It is an OS lock, not a file whose existence is the lock. The kernel drops it when its process
 * exits or is killed, so there is no stale lock to recognize and take over — the pid file this
 * replaces let two processes in when they opened a directory at the same moment, or took over a
 * dead owner's lock together (issue #15). node:fs has no file-locking call, so the lock is taken
 * through node:sqlite (built into Node ≥ 22.13 and Deno 2): an exclusive transaction held open on
 * an empty SQLite file, `writer.lock`, which SQLite holds with POSIX fcntl locks. Nothing is ever
 * written to that file, and it is never deleted: a process that opened the old file while it was
 * being replaced would lock a file nobody else sees.
 *
 * fcntl locks belong to the process, and closing *any* descriptor of the file in that process
 * drops them, so nothing but the lock's own connection may open `writer.lock` (fs.ts refuses the
 * name). SQLite shares one descriptor between its connections in a process, so a second open in
 * the same process is refused without dropping the first one's lock.
 *
 * node:sqlite is imported through a variable, like node:fs in fs.ts, so browser bundles skip it.
 */
import type * as NodeFs from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { CairnError } from "../../core/errors.ts";

export const WRITER_LOCK_FILE = "writer.lock";
/** The holder's pid, written after it won, for the E_LOCKED message only: never for the decision. */
const OWNER_FILE = "writer.pid";
/** The pid file that older Cairn versions used as their lock. */
const LEGACY_LOCK_FILE = "lock";

/** Takes the lock, and keeps it until the connection closes: no journal file, nothing written. */
const LOCK_SQL = "PRAGMA journal_mode=MEMORY; BEGIN EXCLUSIVE;";

/**
 * Tries before E_LOCKED, with a random pause of up to `MAX_PAUSE_MS` before each next one.
 * SQLite climbs to its exclusive lock through a shared one, and two processes trying at the same
 * moment can refuse each other's climb, so that both fail: with a single try, 85 of 3,000 rounds
 * of the trials in test/server/writer_lock.test.ts ended without a winner. A busy timeout would
 * make every refusal by a live holder wait out the whole timeout, and timers cannot wait less
 * than 1–2 ms; a short blocking pause is enough, because a lock attempt takes ~20 µs. A holder
 * refuses every try; a contender only tries that overlap its own. Over 50,000 rounds of two
 * processes trying at once (Node and Deno), 0.8% of winners needed a second try, 3 a third and
 * none a fourth; five tries leave a round without a winner far less than once in 10⁹, and a
 * refusal by a live holder (E_LOCKED) takes ~1.2 ms.
 */
const ATTEMPTS = 5;
const MAX_PAUSE_MS = 0.25;

const NODE_SQLITE = "node:sqlite";
/** SQLITE_BUSY. Deno's node:sqlite sets no errcode; both say "database is locked". */
const SQLITE_BUSY = 5;

export interface ProcessInfo {
  readonly pid: number;
  kill(pid: number, signal: number): unknown;
}

export interface WriterLock {
  /** Lets the lock go. Idempotent. */
  release(): void;
}

type FsSync = Pick<typeof NodeFs, "readFileSync" | "writeFileSync" | "renameSync" | "rmSync">;
type SqliteModule = { DatabaseSync: typeof DatabaseSync };
type ErrnoError = Error & { code?: string; errcode?: number };

/** Takes the directory's writer lock, or fails with E_LOCKED naming the holder's pid if known. */
export async function takeWriterLock(
  fs: FsSync,
  directory: string,
  process: ProcessInfo,
): Promise<WriterLock> {
  const { DatabaseSync } = await loadSqlite();
  const file = `${directory}/${WRITER_LOCK_FILE}`;
  let connection = tryLock(DatabaseSync, file);
  for (let attempt = 1; !connection; attempt++) {
    if (attempt === ATTEMPTS) throw lockedError(directory, describeOwner(fs, directory, process));
    pause(Math.random() * MAX_PAUSE_MS);
    connection = tryLock(DatabaseSync, file);
  }
  const held = connection;
  try {
    clearLegacyLock(fs, directory, process);
  } catch (err) {
    held.close();
    throw err;
  }
  writeOwner(fs, directory, process.pid);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // While still holding the lock: afterwards the file may already be the next holder's.
      try {
        fs.rmSync(`${directory}/${OWNER_FILE}`, { force: true });
      } finally {
        held.close();
      }
    },
  };
}

async function loadSqlite(): Promise<SqliteModule> {
  try {
    return await import(NODE_SQLITE);
  } catch (err) {
    throw new CairnError(
      "E_IO",
      `the writer lock needs node:sqlite (Node 22.13 or later, Deno 2): ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** The locked connection, or undefined when another connection holds (or is taking) the lock. */
function tryLock(Database: typeof DatabaseSync, file: string): DatabaseSync | undefined {
  let connection: DatabaseSync | undefined;
  try {
    connection = new Database(file);
    connection.exec(LOCK_SQL);
    return connection;
  } catch (err) {
    connection?.close();
    const { errcode, message } = err as ErrnoError;
    if (errcode === SQLITE_BUSY || /database is locked/.test(message)) return undefined;
    throw new CairnError("E_IO", `could not take the writer lock ${file}: ${message}`, {
      cause: err,
    });
  }
}

/**
 * A `lock` file of an older Cairn version: it has the directory open if the pid in it runs
 * (that version does not know the OS lock); otherwise it is what a dead process left behind.
 * Called with the OS lock held, so one process at a time looks at it.
 */
function clearLegacyLock(fs: FsSync, directory: string, process: ProcessInfo): void {
  const file = `${directory}/${LEGACY_LOCK_FILE}`;
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as ErrnoError).code === "ENOENT") return;
    throw new CairnError("E_IO", `could not read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const owner = Number(text);
  if (Number.isInteger(owner) && owner > 0 && isRunning(process, owner)) {
    throw lockedError(directory, `process ${owner} (an older Cairn version's lock file)`);
  }
  fs.rmSync(file, { force: true });
}

/** Best effort: a failure here costs only the pid in another process's E_LOCKED message. */
function writeOwner(fs: FsSync, directory: string, pid: number): void {
  const file = `${directory}/${OWNER_FILE}`;
  try {
    // Renamed into place, so a reader never sees half a number.
    fs.writeFileSync(`${file}.tmp`, String(pid));
    fs.renameSync(`${file}.tmp`, file);
  } catch {
    // Informational only.
  }
}

/** "process 1234" when the owner file names a running process, else "another process". */
function describeOwner(fs: FsSync, directory: string, process: ProcessInfo): string {
  let owner = NaN;
  try {
    owner = Number(fs.readFileSync(`${directory}/${OWNER_FILE}`, "utf8"));
  } catch {
    // Not written yet, or removed meanwhile.
  }
  // The file may be a dead holder's, or the previous one's while the new holder has yet to write.
  if (!Number.isInteger(owner) || owner <= 0 || !isRunning(process, owner)) {
    return "another process";
  }
  return owner === process.pid ? `this process (${owner})` : `process ${owner}`;
}

function lockedError(directory: string, owner: string): CairnError {
  return new CairnError("E_LOCKED", `the database ${directory} is open for writing in ${owner}`);
}

function isRunning(process: ProcessInfo, pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as ErrnoError).code === "EPERM";
  }
}

/** Sleeps, blocking: timers cannot wait less than 1–2 ms, far longer than a lock attempt. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
