/**
 * The file-system backend for Deno and Node, through node:fs (both runtimes implement it, so one
 * backend serves both). A database is a directory; its writer lock is an OS lock on `writer.lock`
 * (fs_lock.ts).
 *
 * node:fs and node:process are imported when a backend is opened, not at module load, and through
 * a variable: bundlers leave such an import alone, so an app bundling cairndb for the browser
 * (esbuild, Vite) neither fails to resolve them nor ships them. They only ever run on Deno and Node.
 */
import type * as NodeFs from "node:fs";
import { CairnError } from "../../core/errors.ts";
import type { AppendFile, FileRange, StorageBackend } from "../backend.ts";
import { type ProcessInfo, takeWriterLock, WRITER_LOCK_FILE, type WriterLock } from "./fs_lock.ts";

/**
 * Reads of up to this size are made with synchronous calls. A settings file or a new
 * repository's files are that small, and a synchronous read takes 7–8 µs where an asynchronous
 * one takes 80–90 µs (a round trip to the I/O threads; 0.3–1 ms for the first ones of a process),
 * which made most of opening a database. Larger reads (a log, a checkpoint) are asynchronous, so
 * they do not stall the event loop.
 */
const SMALL_FILE_BYTES = 64 * 1024;

/**
 * The most one read or write call asks for. node:fs refuses more than 2 GiB in one call (reading
 * a whole log of 3 GB failed that way), and calls of bounded size let the event loop run between
 * them. A file of any size is read as one buffer in such pieces.
 */
const IO_CALL_BYTES = 64 * 1024 * 1024;

/** Appends up to this size are written synchronously (see `append`). */
const SYNC_APPEND_BYTES = 64 * 1024;

export interface FsBackendOptions {
  /** For tests: the most one read or write call asks for (default 64 MiB). */
  readonly ioCallBytes?: number;
}

type FsPromises = typeof NodeFs.promises;
type ErrnoError = Error & { code?: string };

const NODE_FS = "node:fs";
const NODE_PROCESS = "node:process";

export async function openFsBackend(
  directory: string,
  options: FsBackendOptions = {},
): Promise<StorageBackend> {
  const callBytes = options.ioCallBytes ?? IO_CALL_BYTES;
  const nodeFs: typeof NodeFs = await import(NODE_FS);
  const { promises: fs } = nodeFs;
  const { default: process }: { default: ProcessInfo } = await import(NODE_PROCESS);
  try {
    nodeFs.mkdirSync(directory, { recursive: true });
  } catch (err) {
    // The path names a file, or passes through one: a wrong argument, not a failing disk.
    const code = (err as ErrnoError).code;
    if (code === "EEXIST" || code === "ENOTDIR") {
      throw new CairnError(
        "E_BAD_ARGUMENT",
        `${directory} cannot be a database directory: it, or a directory on its way, is a file`,
        { cause: err },
      );
    }
    throw ioError(`create ${directory}`, err);
  }
  let lock: WriterLock | undefined;
  const path = (name: string) => {
    // Opening and closing the lock file anywhere in this process would drop the lock.
    if (name === WRITER_LOCK_FILE) {
      throw new CairnError("E_BAD_ARGUMENT", `${name} is the writer lock, not a data file`);
    }
    return `${directory}/${name}`;
  };

  const backend: StorageBackend = {
    kind: "fs",
    async readFile(name) {
      return (await readRange(name, 0, Infinity))?.bytes;
    },
    readRange,
    openAppend(name) {
      try {
        // Opened synchronously (a few quick system calls); the appends themselves stay async.
        const created = !nodeFs.existsSync(path(name));
        const fd = nodeFs.openSync(path(name), "a+");
        const size = nodeFs.fstatSync(fd).size;
        // A new file's name is durable only once its directory is synced too.
        const syncName = created ? () => syncDirectory(fs, directory) : undefined;
        return Promise.resolve(fsAppendFile(nodeFs, name, fd, size, callBytes, syncName));
      } catch (err) {
        return Promise.reject(ioError(`open ${name}`, err));
      }
    },
    async writeFileAtomic(name, bytes) {
      const target = path(name);
      const temp = `${target}.tmp`;
      await io(`write ${name}`, async () => {
        try {
          const handle = await fs.open(temp, "w");
          try {
            await handle.writeFile(bytes);
            await handle.sync();
          } finally {
            await handle.close();
          }
          await fs.rename(temp, target);
        } catch (err) {
          // A part-written temporary file would hold on to space a full disk needs back.
          await fs.rm(temp, { force: true }).catch(() => {});
          throw err;
        }
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
      lock = await takeWriterLock(nodeFs, directory, process);
    },
    releaseLock,
    close: releaseLock,
  };
  return backend;

  /**
   * Bytes [offset, offset + length) of the file (fewer where it ends) in a buffer of their own,
   * with its size. Opened and sized with synchronous calls (two quick system calls), read in
   * calls of at most `callBytes`: synchronous ones for a small read, else asynchronous.
   */
  async function readRange(
    name: string,
    offset: number,
    length: number,
  ): Promise<FileRange | undefined> {
    let fd: number;
    try {
      fd = nodeFs.openSync(path(name), "r");
    } catch (err) {
      if ((err as ErrnoError).code === "ENOENT") return undefined;
      throw ioError(`read ${name}`, err);
    }
    try {
      const size = nodeFs.fstatSync(fd).size;
      // Plain Uint8Arrays (not Buffers), so callers get Uint8Array semantics (slice copies).
      const bytes = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
      const small = bytes.length <= SMALL_FILE_BYTES;
      let done = 0;
      while (done < bytes.length) {
        const count = Math.min(callBytes, bytes.length - done);
        const at = offset + done;
        const read = small
          ? nodeFs.readSync(fd, bytes, done, count, at)
          : await new Promise<number>((resolve, reject) => {
            nodeFs.read(fd, bytes, done, count, at, (err, n) => err ? reject(err) : resolve(n));
          });
        if (read === 0) break; // the file was cut meanwhile: what was read
        done += read;
      }
      return { bytes: done < bytes.length ? bytes.subarray(0, done) : bytes, size };
    } catch (err) {
      throw ioError(`read ${name}`, err);
    } finally {
      try {
        nodeFs.closeSync(fd);
      } catch { /* a read-only descriptor: nothing is lost */ }
    }
  }

  function releaseLock(): Promise<void> {
    const held = lock;
    lock = undefined;
    try {
      held?.release();
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(ioError("release the lock", err));
    }
  }
}

function fsAppendFile(
  fs: typeof NodeFs,
  name: string,
  fd: number,
  initialSize: number,
  callBytes: number,
  syncName: (() => Promise<void>) | undefined,
): AppendFile {
  let size = initialSize;
  let closed = false;
  const open = () => {
    if (closed) throw new CairnError("E_CLOSED", `log ${name} is closed`);
  };
  /** A callback-style node:fs call on the file, as a promise. */
  const call = <T>(what: string, start: (done: (err: unknown, result: T) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      start((err, result) => err ? reject(ioError(`${what} ${name}`, err)) : resolve(result));
    });
  return {
    get size() {
      return size;
    },
    async append(bytes) {
      open();
      let written = 0;
      if (bytes.length <= SYNC_APPEND_BYTES) {
        // Copying a small append into the page cache takes a few µs; the thread pool's round
        // trip of an asynchronous write costs more than that in waiting alone.
        try {
          while (written < bytes.length) {
            written += fs.writeSync(fd, bytes, written, bytes.length - written, null);
          }
        } catch (err) {
          throw ioError(`append to ${name}`, err);
        }
      }
      while (written < bytes.length) {
        written += await call<number>(
          "append to",
          (done) =>
            fs.write(fd, bytes, written, Math.min(callBytes, bytes.length - written), null, done),
        );
      }
      size += bytes.length;
    },
    async sync() {
      open();
      await call<void>("sync", (done) => fs.fsync(fd, done));
      if (syncName) {
        await syncName();
        syncName = undefined;
      }
    },
    async truncate(to) {
      open();
      await call<void>("truncate", (done) => fs.ftruncate(fd, to, done));
      size = to;
    },
    async close() {
      if (closed) return;
      closed = true;
      await call<void>("close", (done) => fs.close(fd, done));
    },
  };
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
