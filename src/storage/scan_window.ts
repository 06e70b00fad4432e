/**
 * The part of a log file a scan holds in memory: a window of bytes at a file offset, moved and
 * grown on demand. The formats (binary_log.ts, jsonl_log.ts) scan through it, so a log of any size
 * is read in bounded pieces, while every offset they handle and report stays a file offset.
 *
 * A window is always read afresh from the offset the scan needs next: a record or line that the
 * previous window cut is read again whole (it is not a torn tail: the file's length, not the
 * window's, says where the file ends), and one larger than the window makes the window grow to
 * hold it. Buffers are never reused: decoded blocks keep views of them.
 */
import { type ByteSource, bytesSource, isByteSource, readWindowBytes } from "./byte_source.ts";

const EMPTY = new Uint8Array(0);

export class ScanWindow {
  /** The whole file's length. */
  readonly length: number;
  /** The file the window reads from. */
  readonly source: ByteSource;
  readonly #size: number;
  /** The bytes held, and the file offset of the first. */
  #bytes: Uint8Array = EMPTY;
  #start = 0;

  /**
   * `window`: bytes read at a time; by default the whole of bytes in memory (one view, no copy),
   * or readWindowBytes() of a file.
   */
  constructor(input: Uint8Array | ByteSource, window?: number) {
    this.source = isByteSource(input) ? input : bytesSource(input);
    this.length = this.source.length;
    this.#size = Math.max(
      1,
      window ?? (isByteSource(input) ? readWindowBytes() : input.length),
    );
  }

  /** The file offset just past the bytes held. */
  get end(): number {
    return this.#start + this.#bytes.length;
  }

  /**
   * Makes the window hold [pos, pos + need), clipped to the end of the file. When it does not
   * already, reads a new window from `pos`: `need` bytes, or more up to the window size.
   */
  async hold(pos: number, need: number): Promise<void> {
    const end = Math.min(pos + need, this.length);
    if (pos >= this.#start && end <= this.end) return;
    const size = Math.min(Math.max(this.#size, need), this.length - pos);
    this.#bytes = await this.source.read(pos, size);
    this.#start = pos;
  }

  /** The byte at file offset `pos`, which the window holds. */
  byte(pos: number): number {
    return this.#bytes[pos - this.#start];
  }

  /** A view of file bytes [from, to), which the window holds. */
  view(from: number, to: number): Uint8Array {
    return this.#bytes.subarray(from - this.#start, to - this.#start);
  }

  /** The file offset of the first `byte` in the window at or after `from`, or -1. */
  indexOf(byte: number, from: number): number {
    const at = this.#bytes.indexOf(byte, from - this.#start);
    return at < 0 ? -1 : this.#start + at;
  }

  /**
   * The file offset of the first `byte` at or after `from` in the whole file, or -1; the window
   * then holds [from, that offset] (or [from, end of file]). It grows (doubling) while the byte
   * is not found: what lies between `from` and the byte is one line, read whole.
   */
  async find(byte: number, from: number): Promise<number> {
    await this.hold(from, 1);
    let searched = from;
    for (;;) {
      const at = this.indexOf(byte, searched);
      if (at >= 0 || this.end >= this.length) return at;
      searched = this.end;
      await this.hold(from, 2 * (this.end - from));
    }
  }
}
