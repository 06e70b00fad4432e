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
import type { AppendFile, StorageBackend } from "../backend.ts";
import { type ProcessInfo, takeWriterLock, WRITER_LOCK_FILE, type WriterLock } from "./fs_lock.ts";

/**
 * Files up to this size are read with one synchronous call. A settings file or a new
 * repository's files are that small, and `readFileSync` takes 7–8 µs where the promise API takes
 * 80–90 µs (a round trip to the I/O threads; 0.3–1 ms for the first ones of a process), which
 * made most of opening a database. Larger files (a log, a checkpoint) are read asynchronously, so
 * a large read does not stall the event loop.
 */
const SMALL_FILE_BYTES = 64 * 1024;

type FsPromises = typeof NodeFs.promises;
type ErrnoError = Error & { code?: string };

const NODE_FS = "node:fs";
const NODE_PROCESS = "node:process";

export async function openFsBackend(directory: string): Promise<StorageBackend> {
  const nodeFs: typeof NodeFs = await import(NODE_FS);
  const { promises: fs } = nodeFs;
  const { default: process }: { default: ProcessInfo } = await import(NODE_PROCESS);
  ioSync(`create ${directory}`, () => nodeFs.mkdirSync(directory, { recursive: true }));
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
      try {
        const { size } = nodeFs.statSync(path(name));
        const bytes = size <= SMALL_FILE_BYTES
          ? nodeFs.readFileSync(path(name))
          : await fs.readFile(path(name));
        // A plain Uint8Array over the Buffer's bytes (no copy: a copy of a large log or
        // checkpoint cost ~8 ms on open), so callers get Uint8Array semantics (slice copies).
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } catch (err) {
        if ((err as ErrnoError).code === "ENOENT") return undefined;
        throw ioError(`read ${name}`, err);
      }
    },
    openAppend(name) {
      try {
        // Opened synchronously (two quick system calls); the appends themselves stay async.
        const fd = nodeFs.openSync(path(name), "a+");
        return Promise.resolve(fsAppendFile(nodeFs, name, fd, nodeFs.fstatSync(fd).size));
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
      while (written < bytes.length) {
        written += await call<number>(
          "append to",
          (done) => fs.write(fd, bytes, written, bytes.length - written, null, done),
        );
      }
      size += bytes.length;
    },
    async sync() {
      open();
      await call<void>("sync", (done) => fs.fsync(fd, done));
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

function ioSync<T>(what: string, operation: () => T): T {
  try {
    return operation();
  } catch (err) {
    throw ioError(what, err);
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
