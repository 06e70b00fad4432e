/**
 * Checks MessagePack bytes in place, without building any value: that they hold wire values
 * (DESIGN §1: null, booleans, finite numbers, strings, arrays, records with string keys, nested at
 * most MAX_WIRE_DEPTH deep), and where each value ends.
 *
 * A checkpoint is opened by checking its values here and decoding each one only when it is first
 * read. What passes this check decodes (core/commit_codec.ts `unpackBytes`) to a valid wire value
 * without error, so a lazy read cannot fail. The check is deliberately narrower than MessagePack:
 * it accepts what Cairn's encoder writes for wire values and refuses binary data, extension types
 * (msgpackr would turn them into Dates, Buffers, …) and 64-bit integers (they would come back as
 * BigInt).
 */
import { corrupt, MAX_WIRE_DEPTH } from "../core/wire_validation.ts";

const NIL = 0xc0;

export class MsgpackCheck {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #what: string;

  /** `what` names the bytes in error messages. */
  constructor(bytes: Uint8Array, what: string) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#what = what;
  }

  /** The end of the record (a map) that starts at `pos` and lies before `end`. */
  record(pos: number, end: number): number {
    if (!this.#isMap(pos, end)) throw this.#bad(pos, "expected a record");
    return this.value(pos, end, 0);
  }

  /** The end of a record or a nil at `pos`. */
  recordOrNil(pos: number, end: number): number {
    return pos < end && this.#bytes[pos] === NIL ? pos + 1 : this.record(pos, end);
  }

  /** The end of an array of strings at `pos`. */
  stringArray(pos: number, end: number): number {
    const bytes = this.#bytes;
    let count: number;
    let at: number;
    const type = pos < end ? bytes[pos] : -1;
    if (type >= 0x90 && type <= 0x9f) [count, at] = [type & 0x0f, pos + 1];
    else if (type === 0xdc) [count, at] = [this.#uint(pos + 1, 2, end), pos + 3];
    else if (type === 0xdd) [count, at] = [this.#uint(pos + 1, 4, end), pos + 5];
    else throw this.#bad(pos, "expected an array of strings");
    for (let i = 0; i < count; i++) {
      if (!this.#isString(at, end)) throw this.#bad(at, "expected a string");
      at = this.value(at, end, 1);
    }
    return at;
  }

  /** The end of the wire value at `pos`, which lies `depth` levels inside its record. */
  value(pos: number, end: number, depth: number): number {
    if (pos >= end) throw this.#bad(pos, "value cut short");
    const type = this.#bytes[pos];
    // Single-byte integers, then the fixed-size strings, maps and arrays: most values.
    if (type < 0x80 || type >= 0xe0) return pos + 1;
    if (type >= 0xa0 && type <= 0xbf) return this.#within(pos + 1 + (type & 0x1f), end, pos);
    if (type <= 0x8f) return this.#map(pos + 1, end, type & 0x0f, depth);
    if (type <= 0x9f) return this.#array(pos + 1, end, type & 0x0f, depth);
    switch (type) {
      case 0xc0: // nil
      case 0xc2: // false
      case 0xc3: // true
        return pos + 1;
      case 0xcc: // uint 8
      case 0xd0: // int 8
        return this.#within(pos + 2, end, pos);
      case 0xcd:
      case 0xd1:
        return this.#within(pos + 3, end, pos);
      case 0xce:
      case 0xd2:
        return this.#within(pos + 5, end, pos);
      case 0xca: // float 32
        this.#within(pos + 5, end, pos);
        if (!Number.isFinite(this.#view.getFloat32(pos + 1))) throw this.#bad(pos, "not finite");
        return pos + 5;
      case 0xcb: // float 64
        this.#within(pos + 9, end, pos);
        if (!Number.isFinite(this.#view.getFloat64(pos + 1))) throw this.#bad(pos, "not finite");
        return pos + 9;
      case 0xd9: // str 8, 16, 32
        return this.#within(pos + 2 + this.#uint(pos + 1, 1, end), end, pos);
      case 0xda:
        return this.#within(pos + 3 + this.#uint(pos + 1, 2, end), end, pos);
      case 0xdb:
        return this.#within(pos + 5 + this.#uint(pos + 1, 4, end), end, pos);
      case 0xdc: // array 16, 32
        return this.#array(pos + 3, end, this.#uint(pos + 1, 2, end), depth);
      case 0xdd:
        return this.#array(pos + 5, end, this.#uint(pos + 1, 4, end), depth);
      case 0xde: // map 16, 32
        return this.#map(pos + 3, end, this.#uint(pos + 1, 2, end), depth);
      case 0xdf:
        return this.#map(pos + 5, end, this.#uint(pos + 1, 4, end), depth);
    }
    throw this.#bad(pos, `type 0x${type.toString(16)} is not a wire value`);
  }

  // Arrays and records check their entries' bytes inline for the two commonest kinds (small
  // integers, short strings). Those steps may run past `end`; the check after the loop catches
  // it, and every other step starts with a bounds check of its own.

  #array(pos: number, end: number, count: number, depth: number): number {
    if (count > 0) this.#checkDepth(pos, depth + 1);
    const bytes = this.#bytes;
    for (let i = 0; i < count; i++) {
      const type = bytes[pos];
      if (type < 0x80 || type >= 0xe0) pos++;
      else if (type >= 0xa0 && type <= 0xbf) pos += 1 + (type & 0x1f);
      else pos = this.value(pos, end, depth + 1);
    }
    return this.#within(pos, end, pos);
  }

  #map(pos: number, end: number, count: number, depth: number): number {
    if (count > 0) this.#checkDepth(pos, depth + 1);
    const bytes = this.#bytes;
    for (let i = 0; i < count; i++) {
      const key = bytes[pos];
      if (key >= 0xa0 && key <= 0xbf) pos += 1 + (key & 0x1f);
      else if (this.#isString(pos, end)) pos = this.value(pos, end, depth + 1);
      else throw this.#bad(pos, "a record key is not a string");
      const type = bytes[pos];
      if (type < 0x80 || type >= 0xe0) pos++;
      else if (type >= 0xa0 && type <= 0xbf) pos += 1 + (type & 0x1f);
      else pos = this.value(pos, end, depth + 1);
    }
    return this.#within(pos, end, pos);
  }

  /** The same limit as assertWireValue: no value deeper than MAX_WIRE_DEPTH inside its record. */
  #checkDepth(pos: number, depth: number): void {
    if (depth > MAX_WIRE_DEPTH) throw this.#bad(pos, `nested deeper than ${MAX_WIRE_DEPTH}`);
  }

  #isMap(pos: number, end: number): boolean {
    const type = pos < end ? this.#bytes[pos] : -1;
    return (type >= 0x80 && type <= 0x8f) || type === 0xde || type === 0xdf;
  }

  #isString(pos: number, end: number): boolean {
    const type = pos < end ? this.#bytes[pos] : -1;
    return (type >= 0xa0 && type <= 0xbf) || (type >= 0xd9 && type <= 0xdb);
  }

  /** A big-endian unsigned integer of `size` bytes at `pos`. */
  #uint(pos: number, size: 1 | 2 | 4, end: number): number {
    this.#within(pos + size, end, pos);
    if (size === 1) return this.#bytes[pos];
    return size === 2 ? this.#view.getUint16(pos) : this.#view.getUint32(pos);
  }

  #within(next: number, end: number, pos: number): number {
    if (next > end) throw this.#bad(pos, "value cut short");
    return next;
  }

  #bad(pos: number, why: string) {
    return corrupt(`${this.#what}: bad value bytes at ${pos} (${why})`);
  }
}
