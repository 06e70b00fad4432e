/**
 * A file to read in pieces: its length, and reads of any range of it. A log can be larger than
 * one read call may return (node:fs refuses more than 2 GiB; a browser may not allot one buffer
 * that large), so logs are scanned, checksummed and read back a window at a time
 * (docs/storage.md, "How a log is read"). A source is either bytes already in memory (a test, a
 * conversion) or a file of a StorageBackend, read with `readRange`.
 */
import { CairnError } from "../core/errors.ts";
import type { StorageBackend } from "./backend.ts";
import { crc32c } from "./crc32c.ts";

export interface ByteSource {
  /** The file's length in bytes, fixed for as long as the source is read. */
  readonly length: number;
  /**
   * Exactly the bytes [offset, offset + length), which the caller keeps inside the file. The
   * caller may keep them (a block's body stays a view of them) and never changes them.
   */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/**
 * Bytes read from a large file at a time: one window of a log scan, one piece of a checksum.
 * Large enough that a call's fixed cost (a round trip to the I/O threads, ~0.1 ms; a message to
 * the OPFS worker) is lost in the copy (~5 ms at 6 GB/s), small enough to be a modest allocation
 * on any device. A record larger than this is still read whole: the window grows to hold it.
 */
const DEFAULT_READ_WINDOW = 32 * 1024 * 1024;
let readWindow = DEFAULT_READ_WINDOW;

/** The window size for reading logs (see DEFAULT_READ_WINDOW). */
export function readWindowBytes(): number {
  return readWindow;
}

/**
 * For tests: reads every log `bytes` at a time, so that windows end inside records, lines and
 * damage, until the returned function restores the default.
 */
export function forceReadWindow(bytes: number): () => void {
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new CairnError("E_BAD_ARGUMENT", `not a read window: ${bytes}`);
  }
  readWindow = bytes;
  return () => (readWindow = DEFAULT_READ_WINDOW);
}

/** Bytes in memory, as a source: reads are views of them (no copy). */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    length: bytes.length,
    read: (offset, length) => Promise.resolve(bytes.subarray(offset, offset + length)),
  };
}

export function isByteSource(input: Uint8Array | ByteSource): input is ByteSource {
  return !(input instanceof Uint8Array);
}

/**
 * The file `name` of `backend` as a source, empty when the file does not exist. Its first
 * `window` bytes are read at once (one call, which also gives the size) and kept: a file that
 * small is then never read again, however often it is scanned or checksummed.
 */
export async function fileSource(
  backend: StorageBackend,
  name: string,
  window = readWindowBytes(),
): Promise<ByteSource> {
  const first = await backend.readRange(name, 0, window);
  if (first === undefined) return bytesSource(new Uint8Array(0));
  if (first.bytes.length >= first.size) return bytesSource(first.bytes.subarray(0, first.size));
  const head = first.bytes;
  const length = first.size;
  return {
    length,
    async read(offset, count) {
      if (offset + count <= head.length) return head.subarray(offset, offset + count);
      const range = await backend.readRange(name, offset, count);
      if (range === undefined || range.bytes.length < count) {
        // The writer lock keeps other writers away; only a hand or a bug shortens the file.
        throw new CairnError(
          "E_IO",
          `${name} was cut short while it was read (${length} bytes when reading began)`,
        );
      }
      return range.bytes;
    },
  };
}

/** The first `length` bytes of `source` (all of it when it is shorter). */
export function prefixSource(source: ByteSource, length: number): ByteSource {
  if (length >= source.length) return source;
  return { length, read: (offset, count) => source.read(offset, count) };
}

/**
 * `head` followed by `source` from `from` on, as one source: a log's tail read as if it were a
 * whole log, behind a header.
 */
export function joinedSource(head: Uint8Array, source: ByteSource, from: number): ByteSource {
  return {
    length: head.length + source.length - from,
    async read(offset, count) {
      const end = offset + count;
      if (end <= head.length) return head.subarray(offset, end);
      if (offset >= head.length) return await source.read(offset - head.length + from, count);
      const rest = await source.read(from, end - head.length);
      const joined = new Uint8Array(count);
      joined.set(head.subarray(offset));
      joined.set(rest, head.length - offset);
      return joined;
    },
  };
}

/** A source that checksums the bytes read through it, as a scan reads them. */
export interface ChecksummedSource extends ByteSource {
  /**
   * The CRC-32C of the bytes [from, `to`) (continuing the seed), when the reads so far covered
   * exactly that span in order; undefined otherwise (read it again with crc32cOf).
   */
  crcTo(to: number): number | undefined;
}

/**
 * `source`, checksumming what is read from `from` on, once per byte: a scan reads a file front to
 * back, each window starting at or before the end of the last one, so the CRC of everything it
 * read comes with it and opening does not read the file a second time to checksum it.
 */
export function checksummedSource(
  source: ByteSource,
  from: number,
  seed: number,
): ChecksummedSource {
  let crc = seed;
  let end = from;
  let inOrder = true;
  return {
    length: source.length,
    async read(offset, length) {
      const bytes = await source.read(offset, length);
      if (offset > end) inOrder = false; // a gap: the CRC can no longer follow
      else if (offset + length > end) {
        crc = crc32c(bytes.subarray(end - offset), crc);
        end = offset + length;
      }
      return bytes;
    },
    crcTo: (to) => (inOrder && to === end ? crc : undefined),
  };
}

/**
 * The CRC-32C of bytes [from, to) of `source`, continuing `seed` (the CRC of what precedes
 * them), read a window at a time.
 */
export async function crc32cOf(
  source: ByteSource,
  from: number,
  to: number,
  seed = 0,
  window = readWindowBytes(),
): Promise<number> {
  let crc = seed;
  for (let at = from; at < to; at += window) {
    crc = crc32c(await source.read(at, Math.min(window, to - at)), crc);
  }
  return crc;
}

/**
 * Bytes [from, to) of the file `name`, read a window at a time into one buffer of their own;
 * fewer when the file ends first, none when it does not exist.
 */
export async function readFileBytes(
  backend: StorageBackend,
  name: string,
  from: number,
  to: number,
  window = readWindowBytes(),
): Promise<Uint8Array> {
  const out = new Uint8Array(to - from);
  let at = from;
  while (at < to) {
    const range = await backend.readRange(name, at, Math.min(window, to - at));
    if (range === undefined || range.bytes.length === 0) break;
    out.set(range.bytes, at - from);
    at += range.bytes.length;
  }
  return at < to ? out.subarray(0, at - from) : out;
}
