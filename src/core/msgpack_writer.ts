/**
 * A MessagePack writer for the bytes that are hashed and signed (block bodies), writing straight
 * into one growing buffer instead of building an intermediate array per commit.
 *
 * It writes exactly the bytes msgpackr writes for the same values with `useRecords: false`
 * (smallest integer form, float64 for every other number, plain objects always as map16), so
 * bodies stay byte-identical to those msgpackr decodes and re-encodes in the canonical check; a
 * property test holds the two to that. Values are wire values (see commit.ts) plus byte arrays.
 * core/msgpack_reader.ts reads them back.
 */
import type { WireValue } from "./commit.ts";

/** What the writer writes: wire values, byte arrays (as bin), and arrays and records of them. */
export type PackableValue =
  | WireValue
  | Uint8Array
  | readonly PackableValue[]
  | { readonly [key: string]: PackableValue };

/** Small to start: a writer doubles its buffer as needed and keeps it for its next value. */
const INITIAL_CAPACITY = 1024;
/** Longer strings go through TextEncoder.encodeInto, shorter ones through a char loop. */
const LONG_STRING = 64;

/** Encodings of repeated strings kept per writer; past this many the cache starts over. */
const MAX_REPEATED_STRINGS = 1024;

const utf8 = new TextEncoder();
const hasOwnProperty = Object.prototype.hasOwnProperty;

export class MsgpackWriter {
  #bytes = new Uint8Array(INITIAL_CAPACITY);
  #view = new DataView(this.#bytes.buffer);
  #position = 0;
  readonly #repeated = new Map<string, Uint8Array>();

  /** Bytes written since the last `take()` or `reset()`. */
  get length(): number {
    return this.#position;
  }

  /** Starts over, dropping anything written (e.g. by an encoding that threw halfway). */
  reset(): void {
    this.#position = 0;
  }

  /**
   * The bytes written since the last `take()` or `reset()`, copied to an array of their own
   * (history holds block bodies: they must not keep a larger buffer alive); then starts over.
   */
  take(): Uint8Array {
    const length = this.#position;
    this.#position = 0;
    return this.#bytes.slice(0, length);
  }

  arrayHeader(length: number): void {
    this.#reserve(5);
    const bytes = this.#bytes;
    if (length < 0x10) bytes[this.#position++] = 0x90 | length;
    else if (length < 0x10000) {
      bytes[this.#position++] = 0xdc;
      bytes[this.#position++] = length >> 8;
      bytes[this.#position++] = length & 0xff;
    } else {
      bytes[this.#position++] = 0xdd;
      this.#view.setUint32(this.#position, length);
      this.#position += 4;
    }
  }

  number(value: number): void {
    this.#reserve(9);
    const bytes = this.#bytes;
    if (value >>> 0 === value) {
      if (value < 0x80) bytes[this.#position++] = value;
      else if (value < 0x100) {
        bytes[this.#position++] = 0xcc;
        bytes[this.#position++] = value;
      } else if (value < 0x10000) {
        bytes[this.#position++] = 0xcd;
        bytes[this.#position++] = value >> 8;
        bytes[this.#position++] = value & 0xff;
      } else {
        bytes[this.#position++] = 0xce;
        this.#view.setUint32(this.#position, value);
        this.#position += 4;
      }
    } else if (value >> 0 === value) {
      if (value >= -0x20) bytes[this.#position++] = 0x100 + value;
      else if (value >= -0x80) {
        bytes[this.#position++] = 0xd0;
        bytes[this.#position++] = value + 0x100;
      } else if (value >= -0x8000) {
        bytes[this.#position++] = 0xd1;
        this.#view.setInt16(this.#position, value);
        this.#position += 2;
      } else {
        bytes[this.#position++] = 0xd2;
        this.#view.setInt32(this.#position, value);
        this.#position += 4;
      }
    } else {
      // Integers beyond 32 bits (clock readings) included, as msgpackr does.
      bytes[this.#position++] = 0xcb;
      this.#view.setFloat64(this.#position, value);
      this.#position += 8;
    }
  }

  string(value: string): void {
    const length = value.length;
    this.#reserve(5 + length * 3);
    if (length < 0x20 && this.#writeShortAscii(value, length)) return;
    // Header sized for an all-ASCII string, moved if the UTF-8 length needs another size.
    const guess = headerSize(length);
    const start = this.#position + guess;
    const written = length < LONG_STRING
      ? this.#writeShortString(value, start)
      : utf8.encodeInto(value, this.#bytes.subarray(start)).written;
    const size = headerSize(written);
    if (size !== guess) this.#bytes.copyWithin(this.#position + size, start, start + written);
    this.#stringHeader(written);
    this.#position += written;
  }

  /**
   * A string that recurs from value to value (a session id, a schema id, a field name): its
   * encoding is kept and copied, which is cheaper than encoding it again each time.
   */
  repeatedString(value: string): void {
    const known = this.#repeatedEncoding(value);
    this.#reserve(known.length);
    const bytes = this.#bytes;
    let position = this.#position;
    for (let i = 0; i < known.length; i++) bytes[position++] = known[i];
    this.#position = position;
  }

  /** The encoding of a repeated string, from the cache or made (and kept) now. */
  #repeatedEncoding(value: string): Uint8Array {
    let known = this.#repeated.get(value);
    if (known === undefined) {
      const start = this.#position;
      this.string(value);
      known = this.#bytes.slice(start, this.#position);
      this.#position = start;
      if (this.#repeated.size >= MAX_REPEATED_STRINGS) this.#repeated.clear();
      this.#repeated.set(value, known);
    }
    return known;
  }

  /**
   * The string `${session}.${seq}` (a commit id, see commit.ts) for a positive integer `seq`,
   * written without building it: the same bytes as `string()` of that string. Building and then
   * encoding an id string cost about 160 ns; this costs a quarter of that.
   */
  commitId(session: string, seq: number): void {
    const digits = decimalDigits(seq);
    const length = session.length + 1 + digits;
    // The session's bytes are copied from its cached encoding (a one-byte header, then the
    // bytes); a longer or non-ASCII session is written as the whole id string.
    const known = length < 0x20 ? this.#repeatedEncoding(session) : undefined;
    if (known === undefined || known.length !== session.length + 1) {
      this.string(`${session}.${seq}`);
      return;
    }
    this.#reserve(length + 1);
    const bytes = this.#bytes;
    let position = this.#position;
    bytes[position++] = 0xa0 | length;
    for (let i = 1; i < known.length; i++) bytes[position++] = known[i];
    bytes[position++] = 0x2e; // "."
    writeDecimal(bytes, position + digits, seq);
    this.#position = position + digits;
  }

  bytes(value: Uint8Array): void {
    this.#reserve(5 + value.length);
    this.#position = writeBinHeader(this.#bytes, this.#position, value.length);
    this.#bytes.set(value, this.#position);
    this.#position += value.length;
  }

  stringArray(values: readonly string[]): void {
    this.arrayHeader(values.length);
    for (let i = 0; i < values.length; i++) this.string(values[i]);
  }

  /** Any wire value (null, boolean, number, string, array or plain object), or a byte array. */
  value(value: PackableValue): void {
    if (typeof value === "string") this.string(value);
    else if (typeof value === "number") this.number(value);
    else if (typeof value === "boolean") this.#byte(value ? 0xc3 : 0xc2);
    else if (value === null) this.#byte(0xc0);
    else if (Array.isArray(value)) {
      this.arrayHeader(value.length);
      for (let i = 0; i < value.length; i++) this.value(value[i]);
    } else if (value instanceof Uint8Array) this.bytes(value);
    else if (typeof value === "object") {
      this.record(value as { readonly [key: string]: PackableValue });
    } // undefined, a bigint, a function: no MessagePack of ours carries them.
    else throw new TypeError(`cannot write a value of type ${typeof value}`);
  }

  /** A plain object, as a map16 (msgpackr's fixed choice) of its own enumerable keys. */
  record(record: { readonly [key: string]: PackableValue }): void {
    this.#reserve(3);
    const sizeAt = this.#position + 1;
    this.#bytes[this.#position] = 0xde;
    this.#position += 3;
    let size = 0;
    for (const key in record) {
      // hasOwnProperty, not Object.hasOwn: V8 answers it from the for-in's own enumeration.
      if (!hasOwnProperty.call(record, key)) continue;
      this.repeatedString(key);
      // Strings and numbers, the usual fields, without the extra call through value().
      const value = record[key];
      if (typeof value === "string") this.string(value);
      else if (typeof value === "number") this.number(value);
      else this.value(value);
      size++;
    }
    if (size > 0xffff) throw new RangeError("a record of more than 65,535 fields");
    this.#bytes[sizeAt] = size >> 8;
    this.#bytes[sizeAt + 1] = size & 0xff;
  }

  #byte(value: number): void {
    this.#reserve(1);
    this.#bytes[this.#position++] = value;
  }

  #stringHeader(length: number): void {
    const bytes = this.#bytes;
    if (length < 0x20) bytes[this.#position++] = 0xa0 | length;
    else if (length < 0x100) {
      bytes[this.#position++] = 0xd9;
      bytes[this.#position++] = length;
    } else if (length < 0x10000) {
      bytes[this.#position++] = 0xda;
      bytes[this.#position++] = length >> 8;
      bytes[this.#position++] = length & 0xff;
    } else {
      bytes[this.#position++] = 0xdb;
      this.#view.setUint32(this.#position, length);
      this.#position += 4;
    }
  }

  /**
   * The common case, a short ASCII string (a key, a title, an id), as a fixstr in one pass;
   * false, having written nothing that counts, at its first non-ASCII character.
   */
  #writeShortAscii(value: string, length: number): boolean {
    const bytes = this.#bytes;
    const start = this.#position + 1;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80) return false;
      bytes[start + i] = code;
    }
    bytes[start - 1] = 0xa0 | length;
    this.#position = start + length;
    return true;
  }

  /** UTF-8 of a well-formed string at `at`; returns the byte length. */
  #writeShortString(value: string, at: number): number {
    const bytes = this.#bytes;
    let position = at;
    for (let i = 0; i < value.length; i++) {
      let code = value.charCodeAt(i);
      if (code < 0x80) bytes[position++] = code;
      else if (code < 0x800) {
        bytes[position++] = (code >> 6) | 0xc0;
        bytes[position++] = (code & 0x3f) | 0x80;
      } else if ((code & 0xfc00) === 0xd800 && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        code = 0x10000 + ((code & 0x3ff) << 10) + (value.charCodeAt(++i) & 0x3ff);
        bytes[position++] = (code >> 18) | 0xf0;
        bytes[position++] = ((code >> 12) & 0x3f) | 0x80;
        bytes[position++] = ((code >> 6) & 0x3f) | 0x80;
        bytes[position++] = (code & 0x3f) | 0x80;
      } else {
        bytes[position++] = (code >> 12) | 0xe0;
        bytes[position++] = ((code >> 6) & 0x3f) | 0x80;
        bytes[position++] = (code & 0x3f) | 0x80;
      }
    }
    return position - at;
  }

  #reserve(extra: number): void {
    const needed = this.#position + extra;
    if (needed <= this.#bytes.length) return;
    const grown = new Uint8Array(Math.max(needed, this.#bytes.length * 2));
    grown.set(this.#bytes.subarray(0, this.#position));
    this.#bytes = grown;
    this.#view = new DataView(grown.buffer);
  }
}

function headerSize(length: number): number {
  return length < 0x20 ? 1 : length < 0x100 ? 2 : length < 0x10000 ? 3 : 5;
}

/** Bytes of the MessagePack bin8/16/32 header for `length` bytes. */
export function binHeaderLength(length: number): number {
  return length < 0x100 ? 2 : length < 0x10000 ? 3 : 5;
}

/** Writes a MessagePack bin8/16/32 header for `length` bytes at `at`; returns where they go. */
export function writeBinHeader(out: Uint8Array, at: number, length: number): number {
  if (length < 0x100) {
    out[at] = 0xc4;
    out[at + 1] = length;
    return at + 2;
  }
  if (length < 0x10000) {
    out[at] = 0xc5;
    out[at + 1] = length >>> 8;
    out[at + 2] = length & 0xff;
    return at + 3;
  }
  out[at] = 0xc6;
  out[at + 1] = length >>> 24;
  out[at + 2] = (length >>> 16) & 0xff;
  out[at + 3] = (length >>> 8) & 0xff;
  out[at + 4] = length & 0xff;
  return at + 5;
}

/** How many decimal digits a positive integer has. */
function decimalDigits(value: number): number {
  let digits = 1;
  for (let next = 10; value >= next; next *= 10) digits++;
  return digits;
}

/**
 * Writes the decimal digits of a positive integer so that they end just before `end`. Within
 * 31 bits the division stays in integers, about twice as fast as `Math.floor` on doubles.
 */
function writeDecimal(bytes: Uint8Array, end: number, value: number): void {
  let i = end - 1;
  for (; value > 0x7fffffff; i--) {
    bytes[i] = 0x30 + (value % 10);
    value = Math.floor(value / 10);
  }
  for (let rest = value | 0;; i--) {
    const quotient = (rest / 10) | 0;
    bytes[i] = 0x30 + rest - quotient * 10;
    rest = quotient;
    if (rest === 0) break;
  }
}
