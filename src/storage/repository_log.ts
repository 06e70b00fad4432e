/**
 * One repository's log file: read and recovered on open, then appended to with group commit —
 * blocks that arrive while an append is in flight go out together in the next single write.
 *
 * It keeps a running CRC-32C of the whole file, so a checkpoint can name the exact log prefix it
 * reflects and be checked against it on open.
 *
 * A failed write (a full disk, an I/O error) loses nothing: the blocks of the failed batch stay
 * queued ahead of later ones and are written by the next attempt, after the file is cut back to
 * the bytes it held before (docs/storage.md, "When a write fails").
 */
import type { SealedBlock } from "../core/block.ts";
import { CairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";
import type { AppendFile, StorageBackend } from "./backend.ts";
import {
  type ByteSource,
  bytesSource,
  checksummedSource,
  crc32cOf,
  fileSource,
  isByteSource,
  joinedSource,
  prefixSource,
  readFileBytes,
  readWindowBytes,
} from "./byte_source.ts";
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
  /**
   * Where the log's good content ends, and the CRC-32C of all of it: advanced once an append
   * succeeds, moved back to the last successful sync when a sync fails, so it never counts bytes
   * of a failed write.
   */
  #length: number;
  #crc: number;
  /** The end of what the last successful sync made durable. */
  #synced: LogPosition;
  /** Blocks not in the file yet, in order; a failed attempt's blocks go back to the front. */
  #queue: SealedBlock[] = [];
  /**
   * Records read back from the file after a failed sync, to be written again ahead of the queue
   * (see #forgetUnsynced).
   */
  #carry: Uint8Array | undefined;
  /**
   * The file may hold bytes past #length: part of a failed append, or a batch whose sync failed.
   * It is cut back to #length before anything else is appended; while that cut fails, so does
   * every attempt.
   */
  #cut = false;
  /** Who waits for the next attempt: appends, flushes and syncs made since the last one began. */
  #waiters: Waiter[] = [];
  /** Whether the next attempt must sync even in relaxed mode (sync() asked for it). */
  #syncWanted = false;
  #draining: Promise<void> | undefined;
  /** Set when bytes the log had accepted are gone from the file and cannot be written again. */
  #lost: CairnError | undefined;

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
    this.#synced = position;
  }

  /**
   * Opens (creating if new) a repository's log, whose content the caller gives — the file as a
   * ByteSource (see fileSource), or its bytes (empty for a new log) — and reads what it holds:
   * only the part after `checkpoint` when the checkpoint matches the log. A torn tail (a record
   * cut by a crash) is truncated so appends continue after the last intact record; damaged
   * records in the middle stay in the file and are reported in the scan. The file is read a
   * window at a time, so a log of any size opens.
   */
  static async open(
    backend: StorageBackend,
    name: string,
    content: Uint8Array | ByteSource,
    format: LogFormat,
    durability: Durability,
    suite: CryptoSuite,
    checkpoint: Checkpoint | undefined,
  ): Promise<OpenedLog> {
    const source = isByteSource(content) ? content : bytesSource(content);
    const covered = checkpoint && await matches(checkpoint, source) ? checkpoint.logLength : 0;
    // The prefix a matching checkpoint covers was just checksummed: continue from its CRC, over
    // the bytes the scan reads.
    const seed = covered > 0 ? checkpoint!.logCrc : 0;
    const scanned = checksummedSource(source, covered, seed);
    // Scanned before the file is opened for writing: a file that is not a log (or is a newer
    // version) fails here and is left untouched.
    const scan = covered > 0
      ? await scanTail(format, scanned, covered, suite)
      : await scanOwn(format, scanned, suite);
    // The scan read up to the end of the file; only when it ends in a torn tail is the part
    // before that checksummed again.
    const crc = scanned.crcTo(scan.validEnd) ??
      await crc32cOf(source, covered, scan.validEnd, seed);
    const file = await backend.openAppend(name);
    try {
      // The writer sequence of docs/storage.md: cut to the last intact record, (re)write the
      // header if there is none, then whatever the scan says must precede the next record.
      if (scan.validEnd < file.size) await file.truncate(scan.validEnd);
      const prefix = scan.validEnd === 0
        ? concat(format.header(), scan.appendFirst)
        : scan.appendFirst;
      let position = { length: scan.validEnd, crc };
      if (prefix.length > 0) {
        await file.append(prefix);
        position = { length: position.length + prefix.length, crc: crc32c(prefix, crc) };
      }
      if (scan.validEnd < source.length || prefix.length > 0) await file.sync();
      const log = new RepositoryLog(backend, name, file, format, durability, suite, position);
      return { log, scan, fromCheckpoint: covered > 0 };
    } catch (err) {
      // Opening failed (nothing was accepted yet): the file is not left open behind it.
      await file.close().catch(() => {});
      throw err;
    }
  }

  /** Where the log ends now, with the CRC-32C of all of it. */
  position(): LogPosition {
    return { length: this.#length, crc: this.#crc };
  }

  /**
   * True when the file holds every block handed to the log and nothing past them: none is
   * queued, being appended, or waiting to be written again after a failure. (A sync may be in
   * flight: should it fail, the same bytes are written again at the same place.)
   */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#carry === undefined && !this.#cut;
  }

  /** The blocks of the first `length` bytes (the part a checkpoint covers), read again from the file. */
  async readPrefix(length: number): Promise<LogScan> {
    const window = Math.max(1, Math.min(length, readWindowBytes()));
    const file = await fileSource(this.#backend, this.#name, window);
    return await scanOwn(this.#format, prefixSource(file, length), this.#suite);
  }

  /**
   * Resolves when the block is appended — and, in durable mode, synced to disk. Rejects when
   * the attempt that carried it failed; the block then stays queued for the next attempt (see
   * `flush`), so a later successful flush covers it.
   */
  append(sealed: SealedBlock): Promise<void> {
    if (this.#lost !== undefined) return Promise.reject(this.#lost);
    return new Promise((resolve, reject) => {
      this.#queue.push(sealed);
      this.#waiters.push({ resolve, reject });
      this.#draining ??= this.#drain();
    });
  }

  /**
   * Resolves when every block handed to `append` so far is in the file (durable mode: synced),
   * writing again what a failed attempt left queued. Rejects when that attempt fails too.
   */
  flush(): Promise<void> {
    if (this.#lost !== undefined) return Promise.reject(this.#lost);
    if (this.#draining === undefined && this.idle) return Promise.resolve();
    return this.#attemptNext(false);
  }

  /** Like `flush`, then makes the whole file durable (fsync), whatever the durability mode. */
  sync(): Promise<void> {
    if (this.#lost !== undefined) return Promise.reject(this.#lost);
    return this.#attemptNext(true);
  }

  /**
   * Writes what is queued, then closes the file. Fails (E_IO) when that write fails: the file
   * then stays open and the blocks queued, so close() can be called again once there is room.
   */
  async close(): Promise<void> {
    await this.flush();
    await this.#file.close();
  }

  /**
   * Replaces the whole file with `blocks` — a history made whole again after damage, without the
   * damaged records — atomically: a crash leaves the old file or the new one. Done only if the
   * log is idle and still ends at `at`, so no block appended meanwhile can be left out; returns
   * whether it was done. Appends that arrive during the replacement wait for it.
   */
  async replace(blocks: readonly SealedBlock[], at: LogPosition): Promise<boolean> {
    while (this.#draining !== undefined) await this.#draining.catch(() => {});
    if (!this.idle || this.#lost !== undefined || this.#length !== at.length) return false;
    const bytes = concat(this.#format.header(), this.#format.encode(blocks).bytes);
    const replacing = this.#replaceWith(bytes);
    const drainAfter = () => this.#drain();
    this.#draining = replacing.then(drainAfter, drainAfter);
    await replacing;
    return true;
  }

  async #replaceWith(bytes: Uint8Array): Promise<void> {
    // The append handle is closed first: OPFS allows one handle per file, and the rename must
    // not leave this handle on the old file.
    await this.#file.close();
    try {
      await this.#backend.writeFileAtomic(this.#name, bytes); // written and synced
      this.#length = bytes.length;
      this.#crc = crc32c(bytes);
      this.#synced = this.position();
    } finally {
      // Replaced or not (the old file stays whole when the write fails), appends go on.
      this.#file = await this.#backend.openAppend(this.#name);
    }
  }

  #attemptNext(sync: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      if (sync) this.#syncWanted = true;
      this.#draining ??= this.#drain();
    });
  }

  /**
   * One attempt after another while anyone waits. An attempt takes every queued block and every
   * waiter; when it fails, its waiters get the error and its blocks go back ahead of those
   * queued meanwhile. Waiters that came meanwhile make the next attempt at once (that is how a
   * flush after a failure retries); with none, the blocks wait for the next append, flush, sync
   * or close.
   */
  async #drain(): Promise<void> {
    while (this.#waiters.length > 0) {
      const blocks = this.#queue;
      const waiters = this.#waiters;
      const sync = this.#syncWanted;
      this.#queue = [];
      this.#waiters = [];
      this.#syncWanted = false;
      try {
        await this.#attempt(blocks, sync);
        for (const waiter of waiters) waiter.resolve();
      } catch (err) {
        if (blocks.length > 0) this.#queue = blocks.concat(this.#queue);
        const reported = this.#lost ?? err;
        for (const waiter of waiters) waiter.reject(reported);
      }
    }
    this.#draining = undefined;
  }

  /** Writes `blocks` after anything a failure left to write again, and syncs if asked or durable. */
  async #attempt(blocks: readonly SealedBlock[], syncWanted: boolean): Promise<void> {
    if (this.#lost !== undefined) throw this.#lost;
    if (this.#cut) {
      await this.#file.truncate(this.#length);
      this.#cut = false;
    }
    const start = this.position();
    const carried = this.#carry;
    if (blocks.length > 0 || carried !== undefined) {
      const records = blocks.length > 0 ? this.#format.encode(blocks) : undefined;
      const bytes = carried === undefined ? records!.bytes : concat(carried, records?.bytes);
      // Until the append is known whole, the file may hold any part of it.
      this.#cut = true;
      await this.#file.append(bytes);
      this.#cut = false;
      let crc = carried === undefined ? this.#crc : crc32c(carried, this.#crc);
      if (records) crc = crc32cAppend(crc, records.bytes, records.crc);
      this.#length += bytes.length;
      this.#crc = crc;
      this.#carry = undefined;
    }
    const wrote = this.#length > start.length;
    if (!syncWanted && !(wrote && this.#durability === "durable")) return;
    try {
      await this.#file.sync();
    } catch (err) {
      await this.#forgetUnsynced(start, carried, err);
      throw err;
    }
    this.#synced = this.position();
  }

  /**
   * After a failed sync, treats everything since the last successful one as not written. The
   * system may have dropped those pages, or marked them clean without writing them (Linux does),
   * so syncing again could succeed with the bytes still missing from the disk: they must be
   * written again. This attempt's own bytes are still at hand (its blocks go back to the queue,
   * `carried` to the carry); bytes of earlier attempts (relaxed mode only: durable mode syncs
   * every attempt) are read back from the file while the system still holds them, and checked
   * against the running CRC. Then the file is cut back to the last sync before the next append.
   * If they cannot be read back intact, they are gone: the log is marked lost for good.
   */
  async #forgetUnsynced(
    start: LogPosition,
    carried: Uint8Array | undefined,
    failure: unknown,
  ): Promise<void> {
    const from = this.#synced;
    if (this.#length === from.length) return; // nothing was written since the last sync
    let earlier: Uint8Array | undefined;
    const missing = start.length - from.length;
    if (missing > 0) {
      earlier = await readFileBytes(this.#backend, this.#name, from.length, start.length)
        .catch(() => undefined);
      if (earlier?.length !== missing || crc32c(earlier, from.crc) !== start.crc) {
        this.#lost = new CairnError(
          "E_IO",
          `log ${this.#name}: a sync failed, and the ${missing} bytes written since the last ` +
            "successful one could not be read back to write them again: the disk may lack " +
            "them, so this log can no longer be completed: every later write, flush and close " +
            "of it fails",
          { cause: failure },
        );
        return;
      }
    }
    this.#carry = earlier === undefined ? carried : concat(earlier, carried);
    this.#length = from.length;
    this.#crc = from.crc;
    this.#cut = true;
  }
}

/** Whether the checkpoint reflects a prefix of this log: its length and CRC-32C match. */
async function matches(checkpoint: Checkpoint, source: ByteSource): Promise<boolean> {
  return checkpoint.logLength <= source.length &&
    await crc32cOf(source, 0, checkpoint.logLength) === checkpoint.logCrc;
}

/** Our own file: records are CRC-checked and signatures verified on load, so no canonical proof. */
function scanOwn(format: LogFormat, source: ByteSource, suite: CryptoSuite): Promise<LogScan> {
  return format.scan(source, suite, { checkCanonical: false });
}

/**
 * Scans only the records after `from` (a record boundary a checkpoint recorded), by giving the
 * format its header followed by the tail, then mapping offsets back into the file.
 */
async function scanTail(
  format: LogFormat,
  source: ByteSource,
  from: number,
  suite: CryptoSuite,
): Promise<LogScan> {
  const header = format.header();
  const shift = from - header.length;
  const scan = await scanOwn(format, joinedSource(header, source, from), suite);
  const moved = (offset: number) => offset + shift;
  return {
    ...scan,
    validEnd: moved(scan.validEnd),
    damaged: scan.damaged.map((d) => ({ ...d, offset: moved(d.offset) })),
    tornTail: scan.tornTail && { ...scan.tornTail, offset: moved(scan.tornTail.offset) },
  };
}

function concat(a: Uint8Array, b: Uint8Array | undefined): Uint8Array {
  if (b === undefined || b.length === 0) return a;
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
