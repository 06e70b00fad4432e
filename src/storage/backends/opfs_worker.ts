/**
 * The dedicated worker behind the OPFS backend (opfs.ts). It owns the database directory's
 * handles: one FileSystemSyncAccessHandle per file open for appending (sync handles exist only in
 * dedicated workers) and the directory's Web Lock. Requests are handled strictly one at a time,
 * in arrival order, so the order of operations the main side sends is the order they happen.
 *
 * Built to its own file (opfs_worker.js) next to each browser bundle; see scripts/lib/bundles.ts.
 */
import type {
  Op,
  Request,
  RequestMessage,
  RequestOf,
  ResponseMessage,
  Results,
  WireError,
} from "./opfs_protocol.ts";
import type { CairnErrorCode } from "../../core/errors.ts";

// The TypeScript DOM library (used to check src/) lacks the worker-only OPFS types: the few
// members used here, as the WHATWG File System spec defines them.
interface SyncAccessHandle {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}
interface OpfsFileHandle extends FileSystemFileHandle {
  createSyncAccessHandle?(): Promise<SyncAccessHandle>;
  move?(destination: FileSystemDirectoryHandle, name: string): Promise<void>;
}
interface IterableDirectory {
  values(): AsyncIterable<FileSystemHandle>;
}
interface WorkerScope {
  onmessage: ((event: MessageEvent<RequestMessage>) => void) | null;
  postMessage(message: ResponseMessage, transfer: Transferable[]): void;
}

/** A refusal with a chosen code; any other error thrown here crosses as E_IO. */
class Refusal extends Error {
  readonly code: CairnErrorCode;
  constructor(code: CairnErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

interface OpenFile {
  name: string;
  handle: SyncAccessHandle;
  /** Kept here so an append needs no getSize() call. */
  size: number;
}

const scope = globalThis as unknown as WorkerScope;
let directory: FileSystemDirectoryHandle | undefined;
const openFiles = new Map<number, OpenFile>();
let nextFileId = 1;
/** Resolving it lets go of the Web Lock; set while the lock is held. */
let releaseHeldLock: (() => void) | undefined;
/** Files whose copy from their temporary file failed in this worker (see writeFileAtomic). */
const unfinishedCopies = new Set<string>();

function dir(): FileSystemDirectoryHandle {
  if (!directory) throw new Refusal("E_CLOSED", "the OPFS worker has no directory open");
  return directory;
}

function openFile(id: number): OpenFile {
  const file = openFiles.get(id);
  if (!file) throw new Refusal("E_CLOSED", "the file is closed");
  return file;
}

function openFileNamed(name: string): OpenFile | undefined {
  for (const file of openFiles.values()) if (file.name === name) return file;
  return undefined;
}

async function createSyncHandle(file: FileSystemFileHandle): Promise<SyncAccessHandle> {
  const create = (file as OpfsFileHandle).createSyncAccessHandle;
  if (typeof create !== "function") {
    throw new Refusal("E_IO", "FileSystemSyncAccessHandle is not available in this browser");
  }
  return await create.call(file);
}

function errorName(err: unknown): string {
  return err instanceof Error || err instanceof DOMException ? err.name : "";
}

/** `getFileHandle` without create, or undefined when the file does not exist. */
async function existingFile(name: string): Promise<FileSystemFileHandle | undefined> {
  try {
    return await dir().getFileHandle(name);
  } catch (err) {
    if (errorName(err) === "NotFoundError") return undefined;
    throw err;
  }
}

/** Bytes [offset, offset + length) of a file of `size` bytes, fewer where it ends. */
function readSpan(
  handle: SyncAccessHandle,
  size: number,
  offset: number,
  length: number,
): ArrayBuffer {
  const count = Math.max(0, Math.min(length, size - offset));
  const buffer = new ArrayBuffer(count);
  const view = new Uint8Array(buffer);
  let done = 0;
  while (done < count) {
    const n = handle.read(view.subarray(done), { at: offset + done });
    if (n <= 0) throw new Refusal("E_IO", `short read: ${done} of ${count} bytes`);
    done += n;
  }
  return buffer;
}

function readAll(handle: SyncAccessHandle, size: number): ArrayBuffer {
  return readSpan(handle, size, 0, size);
}

function writeAll(handle: SyncAccessHandle, bytes: Uint8Array, at: number): void {
  let done = 0;
  while (done < bytes.length) {
    const n = handle.write(bytes.subarray(done), { at: at + done });
    if (n <= 0) throw new Refusal("E_IO", `short write: ${done} of ${bytes.length} bytes`);
    done += n;
  }
}

async function readFile(name: string): Promise<ArrayBuffer | null> {
  return await readThrough(
    name,
    (handle, size) => readAll(handle, size),
    async (blob) => await blob.arrayBuffer(),
  );
}

/** A range of a file, and the file's size (see readThrough). */
async function readRange(
  name: string,
  offset: number,
  length: number,
): Promise<Results["readRange"]> {
  return await readThrough(
    name,
    (handle, size) => ({ bytes: readSpan(handle, size, offset, length), size }),
    async (blob) => ({
      bytes: await blob.slice(offset, offset + length).arrayBuffer(),
      size: blob.size,
    }),
  );
}

/**
 * Reads a file (null when it does not exist) through its open handle if it is open for
 * appending, else through a sync handle opened for this read, or — while another agent holds the
 * file's sync handle — through a Blob, which needs no exclusive access.
 */
async function readThrough<T>(
  name: string,
  read: (handle: SyncAccessHandle, size: number) => T,
  readBlob: (blob: Blob) => Promise<T>,
): Promise<T | null> {
  const open = openFileNamed(name);
  if (open) return read(open.handle, open.size);
  await finishCopyIfUnfinished(name);
  const file = await existingFile(name);
  if (!file) return null;
  let handle: SyncAccessHandle;
  try {
    handle = await createSyncHandle(file);
  } catch (err) {
    if (errorName(err) === "NoModificationAllowedError") {
      return await readBlob(await file.getFile());
    }
    throw err;
  }
  try {
    return read(handle, handle.getSize());
  } finally {
    handle.close();
  }
}

async function openAppend(name: string): Promise<Results["openAppend"]> {
  if (openFileNamed(name)) {
    throw new Refusal("E_BAD_ARGUMENT", `"${name}" is already open for appending`);
  }
  await finishCopyIfUnfinished(name);
  const file = await dir().getFileHandle(name, { create: true });
  const handle = await createSyncHandle(file);
  const id = nextFileId++;
  openFiles.set(id, { name, handle, size: handle.getSize() });
  return { file: id, size: openFiles.get(id)!.size };
}

function append(request: RequestOf<"append">): Results["append"] {
  const file = openFile(request.file);
  const start = file.size;
  try {
    writeAll(file.handle, new Uint8Array(request.bytes, 0, request.length), start);
  } catch (err) {
    // Leave no partial batch behind: the file keeps exactly the bytes already accepted.
    try {
      file.handle.truncate(start);
    } catch { /* the original error is the one to report */ }
    throw err;
  }
  file.size = start + request.length;
  return { size: file.size };
}

function closeFile(id: number): void {
  const file = openFiles.get(id);
  if (!file) return;
  openFiles.delete(id);
  file.handle.close();
}

/**
 * Replaces `name` with `bytes` so that a crash leaves the old content or the new. The bytes go to
 * `<name>.tmp` first, flushed and closed; then FileSystemFileHandle.move() puts that file over
 * the target in one step (Chromium, Firefox and Safari ship it for OPFS).
 *
 * Without move() the temporary file is copied over the target, which is not atomic, so the copy
 * is announced first: an empty marker file `<name>.cpy` exists exactly while the complete new
 * content sits in `<name>.tmp` and the target may be half-written. Whoever holds the directory's
 * lock next finishes that copy (finishUnfinishedCopies) before reading anything. A copy that
 * fails here (the disk full) keeps the marker and the temporary file for the same reason, and the
 * file is not used again in this worker until a later attempt finishes it.
 */
async function writeFileAtomic(name: string, bytes: Uint8Array): Promise<void> {
  await finishCopyIfUnfinished(name);
  const temp = await dir().getFileHandle(tempName(name), { create: true }) as OpfsFileHandle;
  try {
    await writeWhole(temp, bytes);
    if (typeof temp.move === "function") {
      await temp.move(dir(), name);
      return;
    }
    await dir().getFileHandle(copyMarkerName(name), { create: true });
  } catch (err) {
    await dir().removeEntry(tempName(name)).catch(() => {});
    throw err;
  }
  unfinishedCopies.add(name);
  await copyTempOver(name, bytes);
}

/** A temporary file's name, the longest a repository's files take (core/repository_path.ts). */
function tempName(name: string): string {
  return `${name}.tmp`;
}

/** The marker of an unfinished copy of `<name>.tmp` over `name` (as long as tempName's). */
function copyMarkerName(name: string): string {
  return `${name}.cpy`;
}

/** Truncates `file` and writes `bytes` into it, flushed, through a handle closed after. */
async function writeWhole(file: FileSystemFileHandle, bytes: Uint8Array): Promise<void> {
  const handle = await createSyncHandle(file);
  try {
    handle.truncate(0);
    writeAll(handle, bytes, 0);
    handle.flush();
  } finally {
    handle.close();
  }
}

/** The copying half of writeFileAtomic without move(): `bytes` are `<name>.tmp`'s content. */
async function copyTempOver(name: string, bytes: Uint8Array): Promise<void> {
  await writeWhole(await dir().getFileHandle(name, { create: true }), bytes);
  await dir().removeEntry(copyMarkerName(name));
  unfinishedCopies.delete(name);
  await dir().removeEntry(tempName(name));
}

/** Finishes this worker's failed copy of `name`, if there is one; throws if it fails again. */
async function finishCopyIfUnfinished(name: string): Promise<void> {
  if (!unfinishedCopies.has(name)) return;
  const temp = await dir().getFileHandle(tempName(name));
  await copyTempOver(name, new Uint8Array(await (await temp.getFile()).arrayBuffer()));
}

/**
 * Run once the directory's lock is won: finishes every copy a crash (or a failure) interrupted,
 * and removes temporary files without a marker, which a crash left before their copy began (their
 * target still holds its old, whole content) or after it ended.
 */
async function finishUnfinishedCopies(): Promise<void> {
  const names = new Set(await listFiles());
  for (const marker of names) {
    if (!marker.endsWith(".cpy")) continue;
    const name = marker.slice(0, -".cpy".length);
    if (names.has(tempName(name))) {
      unfinishedCopies.add(name);
      await finishCopyIfUnfinished(name).catch(() => {}); // tried again when the file is used
    } else {
      await dir().removeEntry(marker); // its temporary file was already removed: the copy ended
    }
  }
  for (const temp of names) {
    const name = temp.slice(0, -".tmp".length);
    if (temp.endsWith(".tmp") && !names.has(copyMarkerName(name))) await removeFile(temp);
  }
}

async function removeFile(name: string): Promise<void> {
  try {
    await dir().removeEntry(name);
  } catch (err) {
    if (errorName(err) !== "NotFoundError") throw err;
  }
}

async function listFiles(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of (dir() as unknown as IterableDirectory).values()) {
    if (entry.kind === "file") names.push(entry.name);
  }
  return names.sort();
}

/**
 * The lock is taken here, in the worker, so it lives exactly as long as the sync handles it
 * protects: both go away together if the worker is terminated or the tab dies, and on close the
 * handles are closed before the lock is let go, so no other tab can win the lock while one of
 * our handles is still open.
 */
async function acquireLock(lockName: string): Promise<void> {
  if (releaseHeldLock) return;
  const locks = (navigator as Navigator).locks;
  if (!locks) throw new Refusal("E_IO", "the Web Locks API is not available");
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const granted = await new Promise<boolean>((resolve, reject) => {
    locks.request(lockName, { ifAvailable: true }, (lock) => {
      resolve(lock !== null);
      return lock ? held : undefined;
    }).catch(reject);
  });
  if (!granted) {
    throw new Refusal(
      "E_LOCKED",
      `the database directory is in use by another tab or worker (Web Lock "${lockName}")`,
    );
  }
  releaseHeldLock = release;
  await finishUnfinishedCopies();
}

function releaseLock(): void {
  releaseHeldLock?.();
  releaseHeldLock = undefined;
}

/**
 * Takes the Web Lock `name` and never lets it go: the browser releases it when this worker ends,
 * however it ends (closed, terminated, killed with its process), and the main side, waiting for
 * the same lock, then fails what it still waits for (opfs.ts, WorkerClient).
 */
async function holdForLife(name: string): Promise<void> {
  const locks = (navigator as Navigator).locks;
  if (!locks) return; // acquireLock refuses to go on without Web Locks
  await new Promise<void>((granted, refused) => {
    locks.request(name, () => {
      granted();
      return new Promise<never>(() => {});
    }).catch(refused);
  });
}

async function init(path: string, lifeLock: string): Promise<void> {
  await holdForLife(lifeLock);
  let handle = await navigator.storage.getDirectory();
  for (const part of path.split("/")) {
    if (part) handle = await handle.getDirectoryHandle(part, { create: true });
  }
  directory = handle;
}

function closeAll(): void {
  let first: unknown;
  for (const id of [...openFiles.keys()]) {
    try {
      closeFile(id);
    } catch (err) {
      first ??= err;
    }
  }
  releaseLock();
  directory = undefined;
  unfinishedCopies.clear();
  if (first) throw first;
}

async function handle(request: Request): Promise<unknown> {
  switch (request.op) {
    case "init":
      await init(request.directory, request.lifeLock);
      return null;
    case "readFile":
      return await readFile(request.name);
    case "readRange":
      return await readRange(request.name, request.offset, request.length);
    case "openAppend":
      return await openAppend(request.name);
    case "append":
      return append(request);
    case "sync":
      openFile(request.file).handle.flush();
      return null;
    case "truncate": {
      const file = openFile(request.file);
      file.handle.truncate(request.size);
      file.size = request.size;
      return { size: file.size };
    }
    case "closeFile":
      closeFile(request.file);
      return null;
    case "writeFileAtomic":
      await writeFileAtomic(request.name, new Uint8Array(request.bytes));
      return null;
    case "removeFile":
      await removeFile(request.name);
      return null;
    case "listFiles":
      return await listFiles();
    case "acquireLock":
      await acquireLock(request.lockName);
      return null;
    case "releaseLock":
      releaseLock();
      return null;
    case "close":
      closeAll();
      return null;
    default:
      throw new Refusal("E_BAD_ARGUMENT", `unknown request ${(request as { op: Op }).op}`);
  }
}

function toWire(err: unknown): WireError {
  if (err instanceof Refusal) return { code: err.code, name: "CairnError", message: err.message };
  const name = errorName(err) || "Error";
  const message = err instanceof Error || err instanceof DOMException ? err.message : String(err);
  return { code: "E_IO", name, message };
}

let queue: Promise<void> = Promise.resolve();

scope.onmessage = (event) => {
  const { id, request } = event.data;
  queue = queue.then(async () => {
    let response: ResponseMessage;
    const transfer: Transferable[] = [];
    try {
      const value = await handle(request);
      if (value instanceof ArrayBuffer) transfer.push(value);
      else if (request.op === "readRange" && value !== null) {
        transfer.push((value as Results["readRange"])!.bytes);
      }
      response = { id, ok: true, value };
    } catch (err) {
      response = { id, ok: false, error: toWire(err) };
    }
    scope.postMessage(response, transfer);
  });
};
