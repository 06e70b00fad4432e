/**
 * Columns as a checkpoint stores them: a list of non-negative integers in the fewest bytes that
 * hold the largest of them, and a list of strings as one UTF-8 text with the length of each.
 * Read back into typed arrays, one copy per column, with every bound checked first: the bytes
 * come from disk and are read as hostile.
 */
import { corrupt } from "../core/wire_validation.ts";

/** Strings stored as one text: entry i is `text.slice(starts[i], starts[i + 1])`. */
export interface TextColumn {
  readonly text: string;
  readonly starts: Uint32Array;
}

// Bytes per entry, written before the entries. 0: every entry is 0; 8: a float64 per entry.
const WIDTHS = [0, 1, 2, 4, 8] as const;
type Width = typeof WIDTHS[number];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function widthFor(max: number): Width {
  if (max === 0) return 0;
  if (max <= 0xff) return 1;
  if (max <= 0xffff) return 2;
  return max <= 0xffffffff ? 4 : 8;
}

/** Collects a file's parts, then joins them into one buffer. */
export class ByteWriter {
  readonly #parts: Uint8Array[] = [];
  #length = 0;

  get length(): number {
    return this.#length;
  }

  bytes(part: Uint8Array): void {
    this.#parts.push(part);
    this.#length += part.length;
  }

  u32(value: number): void {
    const part = new Uint8Array(4);
    new DataView(part.buffer).setUint32(0, value, true);
    this.bytes(part);
  }

  /** Non-negative safe integers: a width byte, then each entry little-endian in that width. */
  column(values: readonly number[]): void {
    let max = 0;
    for (const value of values) if (value > max) max = value;
    const width = widthFor(max);
    const part = new Uint8Array(1 + width * values.length);
    const view = new DataView(part.buffer);
    part[0] = width;
    for (let i = 0, at = 1; i < values.length; i++, at += width) {
      if (width === 1) part[at] = values[i];
      else if (width === 2) view.setUint16(at, values[i], true);
      else if (width === 4) view.setUint32(at, values[i], true);
      else if (width === 8) view.setFloat64(at, values[i], true);
    }
    this.bytes(part);
  }

  /** Strings: their lengths (UTF-16 code units) as a column, the UTF-8 byte count, the text. */
  text(strings: readonly string[]): void {
    this.column(strings.map((s) => s.length));
    const text = encoder.encode(strings.join(""));
    this.u32(text.length);
    this.bytes(text);
  }

  /** The parts joined, after `header` bytes left zero for the caller. */
  finish(header: number): Uint8Array {
    const file = new Uint8Array(header + this.#length);
    let at = header;
    for (const part of this.#parts) {
      file.set(part, at);
      at += part.length;
    }
    return file;
  }
}

/** Reads a file's parts in order; anything out of bounds or malformed is E_CORRUPT_ENCODING. */
export class ByteReader {
  readonly bytes: Uint8Array;
  readonly #view: DataView;
  readonly #what: string;
  pos: number;

  constructor(bytes: Uint8Array, pos: number, what: string) {
    this.bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = pos;
    this.#what = what;
  }

  take(length: number): Uint8Array {
    if (length > this.bytes.length - this.pos) throw corrupt(`${this.#what}: cut short`);
    return this.bytes.subarray(this.pos, this.pos += length);
  }

  u32(): number {
    this.take(4);
    return this.#view.getUint32(this.pos - 4, true);
  }

  /** A column whose entries fit in 32 bits: table indexes, counts, lengths. */
  column(count: number): Uint32Array {
    const column = new Uint32Array(count);
    this.#fill(column);
    return column;
  }

  /** A column of any safe integers: seqs, clock readings. */
  numbers(count: number): Float64Array {
    const column = new Float64Array(count);
    if (this.#fill(column) < 8) return column; // narrower entries are safe integers anyway
    for (let i = 0; i < count; i++) {
      const value = column[i];
      if (!Number.isSafeInteger(value) || value < 0) throw corrupt(`${this.#what}: bad number`);
    }
    return column;
  }

  /**
   * Fills `column` from the stored entries and returns their width. One typed array type per
   * kind of column keeps the code that reads them monomorphic.
   */
  #fill(column: Uint32Array | Float64Array): Width {
    const width = this.take(1)[0] as Width;
    if (!WIDTHS.includes(width) || width > column.BYTES_PER_ELEMENT) {
      throw corrupt(`${this.#what}: bad column width ${width}`);
    }
    const stored = this.take(width * column.length);
    if (width === 0) return width;
    if (LITTLE_ENDIAN) {
      // Viewed in the stored width (over an aligned copy), then widened by one native set().
      column.set(width === 1 ? stored : inWidth(stored.slice().buffer, width));
      return width;
    }
    const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
    for (let i = 0; i < column.length; i++) column[i] = readLittleEndian(view, i * width, width);
    return width;
  }

  text(count: number): TextColumn {
    const lengths = this.column(count);
    const text = decoder.decode(this.take(this.u32()));
    const starts = new Uint32Array(count + 1);
    let at = 0;
    for (let i = 0; i < count; i++) starts[i + 1] = at += lengths[i];
    if (at !== text.length) throw corrupt(`${this.#what}: text lengths do not add up`);
    return { text, starts };
  }
}

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function inWidth(buffer: ArrayBuffer, width: 2 | 4 | 8): Uint16Array | Uint32Array | Float64Array {
  if (width === 2) return new Uint16Array(buffer);
  return width === 4 ? new Uint32Array(buffer) : new Float64Array(buffer);
}

function readLittleEndian(view: DataView, at: number, width: 1 | 2 | 4 | 8): number {
  if (width === 1) return view.getUint8(at);
  if (width === 2) return view.getUint16(at, true);
  return width === 4 ? view.getUint32(at, true) : view.getFloat64(at, true);
}
