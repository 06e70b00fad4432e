/**
 * One repository's log file: read and recovered on open, then appended to with group commit —
 * blocks that arrive while an append is in flight go out together in the next single write.
 */
import type { SealedBlock } from "../core/block.ts";
import type { CryptoSuite } from "../core/signing.ts";
import type { AppendFile, StorageBackend } from "./backend.ts";
import type { LogFormat, LogScan } from "./log_format.ts";

export type Durability = "relaxed" | "durable";

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class RepositoryLog {
  readonly #file: AppendFile;
  readonly #format: LogFormat;
  readonly #durability: Durability;
  #queue: SealedBlock[] = [];
  #waiters: Waiter[] = [];
  #draining: Promise<void> | undefined;
  #failure: unknown;

  private constructor(file: AppendFile, format: LogFormat, durability: Durability) {
    this.#file = file;
    this.#format = format;
    this.#durability = durability;
  }

  /**
   * Opens (creating if new) a repository's log and reads what it holds. A torn tail (a record cut
   * by a crash) is truncated so appends continue after the last intact record; damaged records
   * in the middle stay in the file and are reported in the scan.
   */
  static async open(
    backend: StorageBackend,
    name: string,
    format: LogFormat,
    durability: Durability,
    suite: CryptoSuite,
  ): Promise<{ log: RepositoryLog; scan: LogScan }> {
    const bytes = await backend.readFile(name);
    // Scanned before the file is opened for writing: a file that is not a log (or is a newer
    // version) fails here and is left untouched.
    const scan = await format.scan(bytes ?? new Uint8Array(), suite);
    const file = await backend.openAppend(name);
    // The writer sequence of docs/storage.md: cut to the last intact record, (re)write the header
    // if there is none, then whatever the scan says must precede the next record.
    if (scan.validEnd < file.size) await file.truncate(scan.validEnd);
    const prefix = scan.validEnd === 0
      ? concat(format.header(), scan.appendFirst)
      : scan.appendFirst;
    if (prefix.length > 0) await file.append(prefix);
    if (scan.validEnd < (bytes?.length ?? 0) || prefix.length > 0) await file.sync();
    return { log: new RepositoryLog(file, format, durability), scan };
  }

  /** Resolves when the block is appended — and, in durable mode, synced to disk. */
  append(sealed: SealedBlock): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#queue.push(sealed);
      this.#waiters.push({ resolve, reject });
      this.#draining ??= this.#drain();
    });
  }

  /** Resolves when everything appended so far is on disk (fsync), whatever the durability mode. */
  async sync(): Promise<void> {
    await this.#draining;
    if (this.#failure !== undefined) throw this.#failure;
    await this.#file.sync();
  }

  async close(): Promise<void> {
    await this.#draining;
    await this.#file.close();
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const blocks = this.#queue;
      const waiters = this.#waiters;
      this.#queue = [];
      this.#waiters = [];
      try {
        await this.#file.append(this.#format.encode(blocks));
        if (this.#durability === "durable") await this.#file.sync();
        for (const waiter of waiters) waiter.resolve();
      } catch (err) {
        // The log no longer matches memory: refuse further appends rather than write around a hole.
        this.#failure = err;
        for (const waiter of [...waiters, ...this.#waiters]) waiter.reject(err);
        this.#queue = [];
        this.#waiters = [];
      }
    }
    this.#draining = undefined;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.length === 0) return a;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
