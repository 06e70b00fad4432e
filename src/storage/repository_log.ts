/**
 * One repository's log file: read and recovered on open, then appended to with group commit —
 * blocks that arrive while an append is in flight go out together in the next single write.
 *
 * It keeps a running CRC-32C of the whole file, so a checkpoint can name the exact log prefix it
 * reflects and be checked against it on open.
 */
import type { SealedBlock } from "../core/block.ts";
import type { CryptoSuite } from "../core/signing.ts";
import type { AppendFile, StorageBackend } from "./backend.ts";
import type { Checkpoint } from "./checkpoint.ts";
import { crc32c, crc32cAppend } from "./crc32c.ts";
import type { LogFormat, LogScan } from "./log_format.ts";

export type Durability = "relaxed" | "durable";

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export interface OpenedLog {
  readonly log: RepositoryLog;
  /** What the log holds after the checkpoint (all of it when no checkpoint was usable). */
  readonly scan: LogScan;
  /** Whether `checkpoint` matched the log and `scan` is only the tail after it. */
  readonly fromCheckpoint: boolean;
}

/** A point in the log: its length and the CRC-32C of everything before it. */
export interface LogPosition {
  readonly length: number;
  readonly crc: number;
}

export class RepositoryLog {
  readonly #backend: StorageBackend;
  readonly #name: string;
  #file: AppendFile;
  readonly #format: LogFormat;
  readonly #durability: Durability;
  readonly #suite: CryptoSuite;
  #length: number;
  #crc: number;
  #queue: SealedBlock[] = [];
  #waiters: Waiter[] = [];
  #draining: Promise<void> | undefined;
  #failure: unknown;
  /** The last sync() call's fsync, settled: a replacement waits for it before closing the file. */
  #syncing: Promise<void> = Promise.resolve();

  private constructor(
    backend: StorageBackend,
    name: string,
    file: AppendFile,
    format: LogFormat,
    durability: Durability,
    suite: CryptoSuite,
    position: LogPosition,
  ) {
    this.#backend = backend;
    this.#name = name;
    this.#file = file;
    this.#format = format;
    this.#durability = durability;
    this.#suite = suite;
    this.#length = position.length;
    this.#crc = position.crc;
  }

  /**
   * Opens (creating if new) a repository's log, whose content `bytes` the caller has read (empty
   * for a new log), and reads what it holds — only the part after `checkpoint` when the
   * checkpoint matches the log. A torn tail (a record cut by a crash) is
   * truncated so appends continue after the last intact record; damaged records in the middle
   * stay in the file and are reported in the scan.
   */
  static async open(
    backend: StorageBackend,
    name: string,
    bytes: Uint8Array,
    format: LogFormat,
    durability: Durability,
    suite: CryptoSuite,
    checkpoint: Checkpoint | undefined,
  ): Promise<OpenedLog> {
    const covered = checkpoint && matches(checkpoint, bytes) ? checkpoint.logLength : 0;
    // Scanned before the file is opened for writing: a file that is not a log (or is a newer
    // version) fails here and is left untouched.
    const scan = covered > 0
      ? await scanTail(format, bytes, covered, suite)
      : await scanOwn(format, bytes, suite);
    const file = await backend.openAppend(name);
    // The writer sequence of docs/storage.md: cut to the last intact record, (re)write the header
    // if there is none, then whatever the scan says must precede the next record.
    if (scan.validEnd < file.size) await file.truncate(scan.validEnd);
    const prefix = scan.validEnd === 0
      ? concat(format.header(), scan.appendFirst)
      : scan.appendFirst;
    // The prefix a matching checkpoint covers was just checksummed: continue from its CRC.
    const crc = covered > 0
      ? crc32c(bytes.subarray(covered, scan.validEnd), checkpoint!.logCrc)
      : crc32c(bytes.subarray(0, scan.validEnd));
    const position = { length: scan.validEnd, crc };
    const log = new RepositoryLog(backend, name, file, format, durability, suite, position);
    if (prefix.length > 0) await log.#write(prefix);
    if (scan.validEnd < bytes.length || prefix.length > 0) await file.sync();
    return { log, scan, fromCheckpoint: covered > 0 };
  }

  /** Where the log ends now, with the CRC-32C of all of it. */
  position(): LogPosition {
    return { length: this.#length, crc: this.#crc };
  }

  /** True when no append is queued or in flight: the log holds every block handed to it. */
  get idle(): boolean {
    return this.#draining === undefined && this.#queue.length === 0;
  }

  /** The blocks of the first `length` bytes (the part a checkpoint covers), read again from the file. */
  async readPrefix(length: number): Promise<LogScan> {
    const bytes = (await this.#backend.readFile(this.#name)) ?? new Uint8Array();
    return await scanOwn(this.#format, bytes.subarray(0, length), this.#suite);
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
    const syncing = this.#file.sync();
    this.#syncing = syncing.catch(() => {});
    await syncing;
  }

  async close(): Promise<void> {
    await this.#draining;
    await this.#file.close();
  }

  /**
   * Replaces the whole file with `blocks` — a history made whole again after damage, without the
   * damaged records — atomically: a crash leaves the old file or the new one. Done only if the
   * log is idle and still ends at `at`, so no block appended meanwhile can be left out; returns
   * whether it was done. Appends that arrive during the replacement wait for it.
   */
  async replace(blocks: readonly SealedBlock[], at: LogPosition): Promise<boolean> {
    if (!this.idle || this.#length !== at.length || this.#failure !== undefined) return false;
    const bytes = concat(this.#format.header(), this.#format.encode(blocks).bytes);
    const replacing = this.#replaceWith(bytes);
    const drainAfter = () => this.#drain();
    this.#draining = replacing.then(drainAfter, drainAfter);
    await replacing;
    return true;
  }

  async #replaceWith(bytes: Uint8Array): Promise<void> {
    // The append handle is closed first: OPFS allows one handle per file, and the rename must
    // not leave this handle on the old file. A sync() begun before is let finish on it first.
    await this.#syncing;
    await this.#file.close();
    try {
      await this.#backend.writeFileAtomic(this.#name, bytes);
      this.#length = bytes.length;
      this.#crc = crc32c(bytes);
    } finally {
      // Replaced or not (the old file stays whole when the write fails), appends go on.
      this.#file = await this.#backend.openAppend(this.#name);
    }
  }

  /** Appends `bytes`; `crc`, when known, is crc32c(bytes) (spares reading them again). */
  async #write(bytes: Uint8Array, crc?: number): Promise<void> {
    await this.#file.append(bytes);
    this.#length += bytes.length;
    this.#crc = crc === undefined ? crc32c(bytes, this.#crc) : crc32cAppend(this.#crc, bytes, crc);
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const blocks = this.#queue;
      const waiters = this.#waiters;
      this.#queue = [];
      this.#waiters = [];
      try {
        const records = this.#format.encode(blocks);
        await this.#write(records.bytes, records.crc);
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

function matches(checkpoint: Checkpoint, bytes: Uint8Array): boolean {
  return checkpoint.logLength <= bytes.length &&
    crc32c(bytes.subarray(0, checkpoint.logLength)) === checkpoint.logCrc;
}

/** Our own file: records are CRC-checked and signatures verified on load, so no canonical proof. */
function scanOwn(format: LogFormat, bytes: Uint8Array, suite: CryptoSuite): Promise<LogScan> {
  return format.scan(bytes, suite, { checkCanonical: false });
}

/**
 * Scans only the records after `from` (a record boundary a checkpoint recorded), by giving the
 * format its header followed by the tail, then mapping offsets back into the file.
 */
async function scanTail(
  format: LogFormat,
  bytes: Uint8Array,
  from: number,
  suite: CryptoSuite,
): Promise<LogScan> {
  const header = format.header();
  const shift = from - header.length;
  const scan = await scanOwn(format, concat(header, bytes.subarray(from)), suite);
  const moved = (offset: number) => offset + shift;
  return {
    ...scan,
    validEnd: moved(scan.validEnd),
    damaged: scan.damaged.map((d) => ({ ...d, offset: moved(d.offset) })),
    tornTail: scan.tornTail && { ...scan.tornTail, offset: moved(scan.tornTail.offset) },
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.length === 0) return a;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
