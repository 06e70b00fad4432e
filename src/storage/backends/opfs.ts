/**
 * The browser storage backend: a database directory in the origin private file system (OPFS).
 * Runs on the main thread or in any worker; the file work happens in ONE dedicated worker per
 * backend (opfs_worker.ts), because OPFS sync access handles, the fast way to append, exist only
 * in dedicated workers. Every method is a request/response message pair with an id.
 *
 * Appends issued in the same tick, and those issued while an earlier batch of the same file is
 * still being written, are coalesced into one buffer that is transferred (not copied) to the
 * worker and written with one call: a sync-handle write costs ~40 µs whatever its size.
 */
import { CairnError } from "../../core/errors.ts";
import type { AppendFile, FileRange, StorageBackend } from "../backend.ts";
import { opfsDirectory } from "./opfs_directory.ts";
import { opfsWorkerUrl } from "./opfs_worker_url.ts";
import type {
  Op,
  RequestMessage,
  RequestOf,
  ResponseMessage,
  Results,
  WireError,
} from "./opfs_protocol.ts";

export interface OpfsBackendOptions {
  /**
   * Where the worker script is. By default the worker travels inside Cairn's own bundle and
   * starts from a Blob URL, which works with any bundler; a Content-Security-Policy without
   * `worker-src blob:` forbids that, and then the app serves cairndb's
   * `dist/browser/opfs_worker.js` itself and names its URL here.
   */
  workerUrl?: string | URL;
  /** How long the worker has to answer its first request (START_TIMEOUT_MS; shorter in tests). */
  startTimeoutMs?: number;
}

/**
 * A script that loads but is not the OPFS worker (the app's own bundle named as `workerUrl`, an
 * empty file, an HTML page served as JavaScript) fires no error: without a bound, opening would
 * wait for its answer for good. The real worker answers in milliseconds; this leaves room for a
 * slow network fetching it.
 */
const START_TIMEOUT_MS = 15_000;

/** A StorageBackend with the one extra method the browser needs: ending its worker. */
export interface OpfsBackend extends StorageBackend {
  readonly kind: "opfs";
  /** The directory path inside OPFS, normalized ("a/b"). */
  readonly directory: string;
  /**
   * Closes every open AppendFile (pending appends are written first), releases the lock and
   * terminates the worker. Every later call fails with E_CLOSED. Idempotent.
   */
  close(): Promise<void>;
}

/** The smallest append batch buffer: appends fill it before any is sent. */
const MIN_BATCH_BYTES = 64 * 1024;

/**
 * Opens (creating if missing) the OPFS directory `directory` ("cairn/mydb": nested directories
 * split on "/") and starts the worker that owns it. Fails with E_IO when the browser has no OPFS
 * or the worker cannot start.
 */
export async function openOpfsBackend(
  directory: string,
  options: OpfsBackendOptions = {},
): Promise<OpfsBackend> {
  const normalized = opfsDirectory(directory);
  if (typeof Worker === "undefined") {
    throw new CairnError("E_IO", "the OPFS backend needs Web Workers, which this runtime lacks");
  }
  const url = options.workerUrl ?? opfsWorkerUrl();
  let worker: Worker;
  try {
    worker = new Worker(url, { type: "module" });
  } catch (err) {
    // A malformed URL, or one the page's Content-Security-Policy forbids.
    throw workerLoadError(url, err instanceof Error ? err.message : String(err));
  }
  const client = new WorkerClient(worker, url);
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const unanswered = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const waited = `no answer in ${
        startTimeoutMs / 1000
      } s: it loaded, but is not the OPFS worker`;
      reject(workerLoadError(url, waited, true));
    }, startTimeoutMs);
  });
  const lifeLock = `cairn:opfs-worker:${crypto.randomUUID()}`;
  try {
    const init = client.request({ op: "init", directory: normalized, lifeLock });
    await Promise.race([init, unanswered]);
    client.watchLife(lifeLock);
  } catch (err) {
    client.terminate();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return new Backend(client, normalized);
}

function checkFileName(name: string): void {
  if (
    typeof name !== "string" || name === "" || name === "." || name === ".." ||
    /[/\\]/.test(name)
  ) {
    throw new CairnError("E_BAD_ARGUMENT", `not a flat file name: ${JSON.stringify(name)}`);
  }
}

/**
 * A worker that never started, or (`loaded`) started and never answered: the URL it came from,
 * and what to do about it.
 */
function workerLoadError(url: string | URL, detail: string, loaded = false): CairnError {
  const where = String(url);
  const fix = loaded
    ? "name cairndb's dist/browser/opfs_worker.js, served from your app, as Cairn.open({ workerUrl })"
    : where.startsWith("blob:")
    ? "the page's Content-Security-Policy probably forbids blob: workers: allow " +
      '"worker-src blob:", or serve cairndb/dist/browser/opfs_worker.js from your app and pass ' +
      "its URL as Cairn.open({ workerUrl })"
    : "serve cairndb/dist/browser/opfs_worker.js (as JavaScript) at that URL, or pass its URL " +
      "as Cairn.open({ workerUrl })";
  return new CairnError(
    "E_IO",
    `the OPFS worker could not load from ${where}${detail ? ` (${detail})` : ""}: ${fix}`,
  );
}

function closedError(what: string): CairnError {
  return new CairnError("E_CLOSED", `the OPFS ${what} is closed`);
}

/** Copies bytes into a fresh ArrayBuffer of their exact size, ready to transfer. */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  const buffer = new ArrayBuffer(bytes.length);
  new Uint8Array(buffer).set(bytes);
  return buffer;
}

function describe(request: RequestMessage["request"]): string {
  return "name" in request ? `${request.op} "${request.name}"` : request.op;
}

function fromWire(error: WireError, request: RequestMessage["request"]): CairnError {
  if (error.code === "E_IO") {
    return new CairnError(
      "E_IO",
      `OPFS ${describe(request)} failed: ${error.name}: ${error.message}`,
      { cause: error },
    );
  }
  return new CairnError(error.code, error.message);
}

interface Pending {
  request: RequestMessage["request"];
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Request/response over postMessage, matched by id. */
class WorkerClient {
  #worker: Worker;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #dead: CairnError | undefined;
  /** Set by the worker's first message: an error before it means the script never loaded. */
  #started = false;
  /** Withdraws watchLife's wait when the worker is ended from here. */
  #stopWatching = new AbortController();
  /** Told once, when the worker can do nothing more (see lost). */
  readonly #lostListeners: ((error: CairnError) => void)[] = [];

  constructor(worker: Worker, url: string | URL) {
    this.#worker = worker;
    worker.onmessage = (event: MessageEvent<ResponseMessage>) => {
      this.#started = true;
      const response = event.data;
      const pending = this.#pending.get(response.id);
      if (!pending) return;
      this.#pending.delete(response.id);
      if (response.ok) pending.resolve(response.value);
      else pending.reject(fromWire(response.error, pending.request));
    };
    // A worker that fails to load (wrong URL, CSP) or crashes fails every waiting request.
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#fail(
        this.#started
          ? new CairnError("E_IO", `the OPFS worker failed: ${event.message || "it stopped"}`)
          : workerLoadError(url, event.message),
      );
    };
    worker.onmessageerror = () => {
      this.#fail(new CairnError("E_IO", "the OPFS worker sent a message that could not be read"));
    };
  }

  request<O extends Op>(request: RequestOf<O>, transfer: Transferable[] = []): Promise<Results[O]> {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    return new Promise<Results[O]>((resolve, reject) => {
      this.#pending.set(id, { request, resolve: resolve as (v: unknown) => void, reject });
      const message: RequestMessage = { id, request };
      this.#worker.postMessage(message, transfer);
    });
  }

  /**
   * Fails every waiting and later request with E_IO once the worker ends without an error event
   * (it closed itself, or the browser ended it): the worker holds the Web Lock `lifeLock` for its
   * life, and this waits for it. Without this, those requests (a write's, a close's) waited for
   * good.
   */
  watchLife(lifeLock: string): void {
    const locks = typeof navigator === "undefined" ? undefined : navigator.locks;
    if (!locks) return;
    locks.request(lifeLock, { signal: this.#stopWatching.signal }, () => {
      this.#fail(
        new CairnError(
          "E_IO",
          "the OPFS worker ended: what it had not answered may not be stored, and it stores " +
            "nothing more (open the database again)",
        ),
      );
    }).catch(() => {}); // aborted: terminate() ended the worker itself
  }

  /** Why the worker can do nothing more (it ended, or failed), unless ended from here. */
  get lost(): CairnError | undefined {
    return this.#dead?.code === "E_IO" ? this.#dead : undefined;
  }

  onLost(listener: (error: CairnError) => void): void {
    this.#lostListeners.push(listener);
  }

  terminate(): void {
    this.#stopWatching.abort();
    this.#worker.terminate();
    this.#fail(closedError("backend"));
  }

  #fail(err: CairnError): void {
    const first = this.#dead === undefined;
    this.#dead ??= err;
    for (const pending of this.#pending.values()) pending.reject(err);
    this.#pending.clear();
    const lost = this.lost;
    if (!first || !lost) return;
    for (const listener of this.#lostListeners.splice(0)) listener(lost);
  }
}

class Backend implements OpfsBackend {
  readonly kind = "opfs" as const;
  readonly directory: string;
  #client: WorkerClient;
  #files = new Set<OpfsAppendFile>();
  #closed = false;

  constructor(client: WorkerClient, directory: string) {
    this.#client = client;
    this.directory = directory;
  }

  get lost(): CairnError | undefined {
    return this.#client.lost;
  }

  onLost(listener: (error: Error) => void): void {
    this.#client.onLost(listener);
  }

  #live(): WorkerClient {
    if (this.#closed) throw closedError("backend");
    return this.#client;
  }

  async readFile(name: string): Promise<Uint8Array | undefined> {
    checkFileName(name);
    const client = this.#live();
    // Appends to this file not yet sent go first, so a read sees every append issued before it.
    for (const file of this.#files) if (file.name === name) file.sendPending();
    const buffer = await client.request({ op: "readFile", name });
    return buffer === null ? undefined : new Uint8Array(buffer);
  }

  async readRange(name: string, offset: number, length: number): Promise<FileRange | undefined> {
    checkFileName(name);
    for (const [what, value] of [["offset", offset], ["length", length]] as const) {
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new CairnError("E_BAD_ARGUMENT", `not a read ${what}: ${value}`);
      }
    }
    const client = this.#live();
    for (const file of this.#files) if (file.name === name) file.sendPending();
    const range = await client.request({ op: "readRange", name, offset, length });
    return range === null ? undefined : { bytes: new Uint8Array(range.bytes), size: range.size };
  }

  async openAppend(name: string): Promise<AppendFile> {
    checkFileName(name);
    const { file, size } = await this.#live().request({ op: "openAppend", name });
    const appendFile = new OpfsAppendFile(this.#client, name, file, size, () => {
      this.#files.delete(appendFile);
    });
    this.#files.add(appendFile);
    return appendFile;
  }

  async writeFileAtomic(name: string, bytes: Uint8Array): Promise<void> {
    checkFileName(name);
    const buffer = ownBuffer(bytes);
    await this.#live().request({ op: "writeFileAtomic", name, bytes: buffer }, [buffer]);
  }

  async removeFile(name: string): Promise<void> {
    checkFileName(name);
    await this.#live().request({ op: "removeFile", name });
  }

  async listFiles(): Promise<string[]> {
    return await this.#live().request({ op: "listFiles" });
  }

  async acquireLock(): Promise<void> {
    await this.#live().request({ op: "acquireLock", lockName: lockName(this.directory) });
  }

  async releaseLock(): Promise<void> {
    await this.#live().request({ op: "releaseLock" });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let first: unknown;
    for (const file of [...this.#files]) {
      await file.close().catch((err) => (first ??= err));
    }
    await this.#client.request({ op: "close" }).catch((err) => (first ??= err));
    this.#client.terminate();
    if (first) throw first;
  }
}

/** One name per OPFS directory, shared by every tab and worker of the origin. */
function lockName(directory: string): string {
  return `cairn:opfs:${directory}`;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

class OpfsAppendFile implements AppendFile {
  readonly name: string;
  #client: WorkerClient;
  #file: number;
  #onClose: () => void;
  #closed = false;
  /** Size as last reported by the worker. */
  #written: number;
  /** Bytes accepted by append() whose write has not been confirmed yet. */
  #unconfirmed = 0;
  /** The batch being filled: its first #batchLength bytes, and who waits for them. */
  #batch: Uint8Array | undefined;
  #batchLength = 0;
  #waiters: Waiter[] = [];
  #sendScheduled = false;
  #appendsInFlight = 0;

  constructor(
    client: WorkerClient,
    name: string,
    file: number,
    size: number,
    onClose: () => void,
  ) {
    this.#client = client;
    this.name = name;
    this.#file = file;
    this.#written = size;
    this.#onClose = onClose;
  }

  get size(): number {
    return this.#written + this.#unconfirmed;
  }

  append(bytes: Uint8Array): Promise<void> {
    if (this.#closed) return Promise.reject(closedError("file"));
    if (bytes.length === 0) return Promise.resolve();
    this.#stage(bytes);
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    // Send at the end of this tick, unless a batch is being written: then this one keeps
    // filling and goes when that write is confirmed.
    if (this.#appendsInFlight === 0 && !this.#sendScheduled) {
      this.#sendScheduled = true;
      queueMicrotask(() => {
        this.#sendScheduled = false;
        if (this.#appendsInFlight === 0) this.sendPending();
      });
    }
    return done;
  }

  async sync(): Promise<void> {
    if (this.#closed) throw closedError("file");
    this.sendPending();
    await this.#client.request({ op: "sync", file: this.#file });
  }

  async truncate(size: number): Promise<void> {
    if (this.#closed) throw closedError("file");
    if (!Number.isSafeInteger(size) || size < 0) {
      throw new CairnError("E_BAD_ARGUMENT", `not a file size: ${size}`);
    }
    this.sendPending();
    const result = await this.#client.request({ op: "truncate", file: this.#file, size });
    this.#written = result.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.sendPending();
    try {
      await this.#client.request({ op: "closeFile", file: this.#file });
    } finally {
      this.#onClose();
    }
  }

  /** Copies the bytes into the batch now, so the caller may reuse its buffer at once. */
  #stage(bytes: Uint8Array): void {
    const needed = this.#batchLength + bytes.length;
    if (!this.#batch || this.#batch.length < needed) {
      let capacity = Math.max(MIN_BATCH_BYTES, this.#batch?.length ?? 0);
      while (capacity < needed) capacity *= 2;
      const grown = new Uint8Array(capacity);
      if (this.#batch) grown.set(this.#batch.subarray(0, this.#batchLength));
      this.#batch = grown;
    }
    this.#batch.set(bytes, this.#batchLength);
    this.#batchLength = needed;
    this.#unconfirmed += bytes.length;
  }

  /** Sends the batch being filled, if any, as one append request. */
  sendPending(): void {
    if (!this.#batch || this.#batchLength === 0) return;
    const buffer = this.#batch.buffer as ArrayBuffer;
    const length = this.#batchLength;
    const waiters = this.#waiters;
    this.#batch = undefined;
    this.#batchLength = 0;
    this.#waiters = [];
    this.#appendsInFlight++;
    this.#client.request({ op: "append", file: this.#file, bytes: buffer, length }, [buffer]).then(
      (result) => {
        this.#unconfirmed -= length;
        this.#written = result.size;
        for (const waiter of waiters) waiter.resolve();
      },
      (err) => {
        this.#unconfirmed -= length;
        for (const waiter of waiters) waiter.reject(err);
      },
    ).finally(() => {
      this.#appendsInFlight--;
      if (this.#appendsInFlight === 0 && !this.#sendScheduled) this.sendPending();
    });
  }
}
