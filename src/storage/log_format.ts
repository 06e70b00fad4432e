/**
 * What a log format is: a pure codec between sealed blocks and the bytes of an append-only log
 * file, one record per block (docs/storage.md, "Log formats"). Two implementations: binary_log.ts (compact, the
 * default) and jsonl_log.ts (one JSON line per block, readable with `cat` and `jq`). Neither does
 * I/O: the writer appends what `encode` returns, the reader hands `scan` the whole file — as bytes,
 * or as a ByteSource that the scan reads a window at a time (scan_window.ts), for a log larger
 * than one read or one buffer should be.
 *
 * How a writer uses a format:
 *   1. `scan(file)`; keep `blocks`; report `damaged` and `tornTail`.
 *   2. Cut the file to `validEnd` (drops a torn tail). When `validEnd` is 0 the file holds no
 *      complete header: append `header()` first.
 *   3. Append `appendFirst` (usually empty), then `encode(batch)` for each batch.
 * The file format is described byte by byte in docs/storage.md, "Log formats".
 */
import type { SealedBlock } from "../core/block.ts";
import { CairnError } from "../core/errors.ts";
import type { CryptoSuite } from "../core/signing.ts";
import type { ByteSource } from "./byte_source.ts";

export interface LogFormat {
  readonly name: "binary" | "jsonl";
  /** ".log" or ".jsonl". */
  readonly fileExtension: string;
  /** Bytes a new log file starts with (identifies format and version). */
  header(): Uint8Array;
  /**
   * Records for these blocks as ONE buffer, ready for one append call (group commit), with its
   * CRC-32C, found from the records' own checksums (see crc32cCombine), not by reading it again.
   */
  encode(blocks: readonly SealedBlock[]): EncodedRecords;
  /**
   * Reads a whole log file. Never throws for damage inside it: damage is reported. Throws
   * E_NOT_A_LOG for a file that is not a log of this format (e.g. random bytes, the other format),
   * E_UNSUPPORTED_VERSION for a log written by a newer format version. An empty file (0 bytes) is
   * a valid empty log. The result does not depend on how the file is given or on the window size:
   * offsets are file offsets, and records cut by a window's end are read again whole.
   */
  scan(
    file: Uint8Array | ByteSource,
    suite: CryptoSuite,
    options?: ScanOptions,
  ): Promise<LogScan>;
}

export interface EncodedRecords {
  readonly bytes: Uint8Array;
  /** crc32c(bytes). */
  readonly crc: number;
}

export interface ScanOptions {
  /**
   * False skips re-encoding each binary block to prove its body canonical. Only for a log this
   * database wrote itself (its records are CRC-checked and their signatures verified on load);
   * never for a file from elsewhere, whose conversion to JSONL relies on canonical bodies.
   */
  readonly checkCanonical?: boolean;
  /**
   * Bytes read at a time: by default all of a file given as bytes, readWindowBytes() of a
   * ByteSource. Tests force tiny windows; the result must not change.
   */
  readonly window?: number;
}

export interface LogScan {
  /** Decoded, in file order (signatures NOT verified here). */
  readonly blocks: SealedBlock[];
  /** The byte offset of each block's record, in the order of `blocks`. */
  readonly blockOffsets: readonly number[];
  /**
   * Byte offset after the last intact record (or after the header): appends continue here, and a
   * torn tail is cut to this. 0 when the file holds no complete header (write `header()` first).
   */
  readonly validEnd: number;
  /**
   * Bytes to append at `validEnd` before any new record. Empty, except for a JSONL log whose last
   * record is intact but lacks its final "\n" (a crash just before the last byte): that record
   * is kept, and this "\n" keeps the next record on a line of its own.
   */
  readonly appendFirst: Uint8Array;
  /** Damaged records in the middle, skipped; each entry is one run of adjacent bad bytes. */
  readonly damaged: readonly LogDamage[];
  /** An incomplete or damaged record at the very end (crash mid-append), not followed by any intact record. */
  readonly tornTail: { offset: number; length: number } | undefined;
}

export interface LogDamage {
  offset: number;
  length: number;
  reason: string;
}

export function notALog(format: string, message: string): CairnError {
  return new CairnError("E_NOT_A_LOG", `not a ${format} log: ${message}`);
}

export function unsupportedVersion(format: string, version: number, supported: number): CairnError {
  return new CairnError(
    "E_UNSUPPORTED_VERSION",
    `${format} log format version ${version} is newer than this Cairn reads (${supported})`,
  );
}

/** True when `bytes` (non-empty) is a strict prefix of `expected`: a file whose header was torn. */
export function isTornPrefix(bytes: Uint8Array, expected: Uint8Array): boolean {
  if (bytes.length === 0 || bytes.length >= expected.length) return false;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== expected[i]) return false;
  return true;
}

/**
 * Whether `bytes` is `expected` with exactly one byte changed: a log's own header damaged (a
 * flipped bit), told apart from another file, and from a header of another version, which
 * differs from this one in its version and would need a second change to be taken for it.
 */
export function isOneByteOff(bytes: Uint8Array, expected: Uint8Array): boolean {
  if (bytes.length !== expected.length) return false;
  let changed = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== expected[i]) changed++;
  return changed === 1;
}

/** What a log whose own header is damaged reports (the records after it are read as usual). */
export const DAMAGED_HEADER =
  "file header damaged (one byte changed; the records after it check out)";

/** A short description of a thrown value, for a damage report. */
export function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Collects scan results: records are either intact (kept) or bad bytes; bad bytes between two
 * intact records are one damaged run, bad bytes after the last intact record are the torn tail —
 * except those a format knows were written whole (see `whole`), which are damage.
 */
export class ScanCollector {
  readonly blocks: SealedBlock[] = [];
  readonly blockOffsets: number[] = [];
  readonly damaged: LogDamage[] = [];
  #badStart = -1;
  #badReason = "";
  #validEnd: number;
  #wholeEnd = 0;

  constructor(afterHeader: number) {
    this.#validEnd = afterHeader;
  }

  /** Bytes from `offset` are bad (the run continues until the next intact record). */
  bad(offset: number, reason: string): void {
    if (this.#badStart >= 0) return;
    this.#badStart = offset;
    this.#badReason = reason;
  }

  /** An intact record: ends a run of bad bytes before it, if any. */
  intact(offset: number, end: number, block: SealedBlock | undefined, reason = ""): void {
    this.#closeRun(offset);
    if (block) {
      this.blocks.push(block);
      this.blockOffsets.push(offset);
    } else this.damaged.push({ offset, length: end - offset, reason });
    this.#validEnd = end;
  }

  /**
   * The bytes before `end` were written whole (in JSONL, a line with its "\n": an append cut
   * short leaves its last line without one). Bad bytes before `end` are damage, kept in the file
   * like damage between records, not a torn tail to cut off: a line edited by hand, say.
   */
  whole(end: number): void {
    this.#wholeEnd = end;
  }

  finish(fileLength: number, appendFirst: Uint8Array): LogScan {
    if (this.#badStart >= 0 && this.#wholeEnd > this.#badStart) {
      const tail = this.#wholeEnd;
      this.#closeRun(tail);
      this.#validEnd = tail;
      if (tail < fileLength) this.#badStart = tail;
    }
    const tornTail = this.#badStart >= 0
      ? { offset: this.#badStart, length: fileLength - this.#badStart }
      : undefined;
    return {
      blocks: this.blocks,
      blockOffsets: this.blockOffsets,
      validEnd: this.#validEnd,
      appendFirst: tornTail ? EMPTY : appendFirst,
      damaged: this.damaged,
      tornTail,
    };
  }

  #closeRun(end: number): void {
    if (this.#badStart < 0) return;
    this.damaged.push({
      offset: this.#badStart,
      length: end - this.#badStart,
      reason: this.#badReason,
    });
    this.#badStart = -1;
  }
}

export const EMPTY: Uint8Array = new Uint8Array(0);
