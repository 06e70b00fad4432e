/**
 * The file-system backend for Deno and Node, through node:fs (both runtimes implement it, so one
 * backend serves both). A database is a directory; the writer lock is a `lock` file holding the
 * owner's pid, taken with an exclusive create.
 *
 * node:fs and node:process are imported when a backend is opened, not at module load, and through
 * a variable: bundlers leave such an import alone, so an app bundling cairndb for the browser
 * (esbuild, Vite) neither fails to resolve them nor ships them. They only ever run on Deno and Node.
 */
import type * as NodeFs from "node:fs";
import { CairnError } from "../../core/errors.ts";
import type { AppendFile, StorageBackend } from "../backend.ts";

const LOCK_FILE = "lock";

type FsPromises = typeof NodeFs.promises;
type FileHandle = NodeFs.promises.FileHandle;
type ErrnoError = Error & { code?: string };

const NODE_FS = "node:fs";
const NODE_PROCESS = "node:process";

export async function openFsBackend(directory: string): Promise<StorageBackend> {
  const { promises: fs, constants }: typeof NodeFs = await import(NODE_FS);
  const { default: process }: { default: ProcessInfo } = await import(NODE_PROCESS);
  await io(`create ${directory}`, () => fs.mkdir(directory, { recursive: true }));
  let lockHeld = false;
  const path = (name: string) => `${directory}/${name}`;

  const backend: StorageBackend = {
    kind: "fs",
    async readFile(name) {
      try {
        // A plain Uint8Array over the Buffer's bytes (no copy: a copy of a large log or
        // checkpoint cost ~8 ms on open), so callers get Uint8Array semantics (slice copies).
        const bytes = await fs.readFile(path(name));
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } catch (err) {
        if ((err as ErrnoError).code === "ENOENT") return undefined;
        throw ioError(`read ${name}`, err);
      }
    },
    async openAppend(name) {
      const handle = await io(`open ${name}`, () => fs.open(path(name), "a+"));
      const { size } = await io(`stat ${name}`, () => handle.stat());
      return fsAppendFile(name, handle, size);
    },
    async writeFileAtomic(name, bytes) {
      const temp = path(`${name}.tmp`);
      await io(`write ${name}`, async () => {
        const handle = await fs.open(temp, "w");
        try {
          await handle.writeFile(bytes);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await fs.rename(temp, path(name));
      });
      await syncDirectory(fs, directory);
    },
    async removeFile(name) {
      await io(`remove ${name}`, () => fs.rm(path(name), { force: true }));
    },
    async listFiles() {
      return await io(`list ${directory}`, () => fs.readdir(directory));
    },
    async acquireLock() {
      await takeLock(
        fs,
        constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
        path(LOCK_FILE),
        process,
      );
      lockHeld = true;
    },
    releaseLock,
    close: releaseLock,
  };
  return backend;

  async function releaseLock(): Promise<void> {
    if (!lockHeld) return;
    lockHeld = false;
    await fs.rm(path(LOCK_FILE), { force: true });
  }
}

function fsAppendFile(name: string, handle: FileHandle, initialSize: number): AppendFile {
  let size = initialSize;
  let closed = false;
  const open = () => {
    if (closed) throw new CairnError("E_CLOSED", `log ${name} is closed`);
  };
  return {
    get size() {
      return size;
    },
    async append(bytes) {
      open();
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await io(
          `append to ${name}`,
          () => handle.write(bytes, written, bytes.length - written, null),
        );
        written += bytesWritten;
      }
      size += bytes.length;
    },
    async sync() {
      open();
      await io(`sync ${name}`, () => handle.sync());
    },
    async truncate(to) {
      open();
      await io(`truncate ${name}`, () => handle.truncate(to));
      size = to;
    },
    async close() {
      if (closed) return;
      closed = true;
      await handle.close();
    },
  };
}

interface ProcessInfo {
  readonly pid: number;
  kill(pid: number, signal: number): unknown;
}

/** Exclusive create; a lock left by a process that no longer runs is taken over. */
async function takeLock(
  fs: FsPromises,
  exclusive: number,
  file: string,
  process: ProcessInfo,
): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await fs.open(file, exclusive);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return;
    } catch (err) {
      if ((err as ErrnoError).code !== "EEXIST") throw ioError("take the lock", err);
    }
    const owner = Number(await fs.readFile(file, "utf8").catch(() => ""));
    if (Number.isInteger(owner) && owner > 0 && isRunning(process, owner)) {
      throw new CairnError("E_LOCKED", `the database is open for writing in process ${owner}`);
    }
    await fs.rm(file, { force: true }); // stale: its owner is gone
  }
  throw new CairnError("E_LOCKED", "could not take the database lock");
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

/** Makes a rename durable: the directory entry itself must reach the disk. */
async function syncDirectory(fs: FsPromises, directory: string): Promise<void> {
  try {
    const handle = await fs.open(directory, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms cannot open or fsync a directory; the rename is still atomic there.
  }
}

async function io<T>(what: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw ioError(what, err);
  }
}

function ioError(what: string, err: unknown): CairnError {
  if (err instanceof CairnError) return err;
  return new CairnError("E_IO", `could not ${what}: ${(err as Error).message}`, { cause: err });
}
