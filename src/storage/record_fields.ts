/**
 * Reads a few named fields of a stored MessagePack record in place, stepping over the bytes of
 * the others: a query scanning a repository just opened tests its filter on these instead of
 * decoding every value whole (a value stays checkpoint bytes until first read, and most values
 * a selective filter looks at are never read).
 *
 * The bytes must have passed MsgpackCheck (a checkpoint's values do when it is opened), so what is
 * read here decodes exactly as the whole record would.
 */
import type { FieldRecord, WireValue } from "../core/commit.ts";
import { unpackBytes } from "../core/commit_codec.ts";
import { MsgpackCheck } from "./msgpack_check.ts";

const UTF8 = new TextEncoder();

export class RecordFieldReader {
  readonly names: readonly string[];
  readonly #encoded: readonly Uint8Array[];

  constructor(names: readonly string[]) {
    this.names = names;
    this.#encoded = names.map((name) => UTF8.encode(name));
  }

  /**
   * Sets each of `names` in `into` to the record's value for it, or undefined where the record
   * has no such field. The record spans `bytes[start, end)`; `check` is over the same bytes.
   * Give `into` no prototype if a name may be "__proto__".
   */
  read(bytes: Uint8Array, start: number, end: number, check: MsgpackCheck, into: FieldRecord) {
    const target = into as Record<string, WireValue | undefined>;
    for (const name of this.names) target[name] = undefined;
    const type = bytes[start];
    let count: number;
    let pos: number;
    if (type >= 0x80 && type <= 0x8f) [count, pos] = [type & 0x0f, start + 1];
    else if (type === 0xde) [count, pos] = [(bytes[start + 1] << 8) | bytes[start + 2], start + 3];
    else [count, pos] = [readUint32(bytes, start + 1), start + 5]; // 0xdf: map 32
    let left = this.names.length;
    for (let i = 0; i < count && left > 0; i++) {
      const [keyStart, keyLength] = stringSpan(bytes, pos);
      const wanted = this.#find(bytes, keyStart, keyLength);
      pos = keyStart + keyLength;
      const valueType = bytes[pos];
      const valueEnd = valueType < 0x80 || valueType >= 0xe0
        ? pos + 1
        : valueType >= 0xa0 && valueType <= 0xbf
        ? pos + 1 + (valueType & 0x1f)
        : check.value(pos, end, 1);
      if (wanted >= 0) {
        target[this.names[wanted]] = valueAt(bytes, pos, valueEnd);
        left--;
      }
      pos = valueEnd;
    }
  }

  /** Which of the names the UTF-8 key at bytes[start, start + length) is, or -1. */
  #find(bytes: Uint8Array, start: number, length: number): number {
    next: for (let n = 0; n < this.#encoded.length; n++) {
      const name = this.#encoded[n];
      if (name.length !== length) continue;
      for (let k = 0; k < length; k++) if (name[k] !== bytes[start + k]) continue next;
      return n;
    }
    return -1;
  }
}

/** Where the string at `pos` starts and how many bytes it has (a record key is a string). */
function stringSpan(bytes: Uint8Array, pos: number): [number, number] {
  const type = bytes[pos];
  if (type >= 0xa0 && type <= 0xbf) return [pos + 1, type & 0x1f];
  if (type === 0xd9) return [pos + 2, bytes[pos + 1]];
  if (type === 0xda) return [pos + 3, (bytes[pos + 1] << 8) | bytes[pos + 2]];
  return [pos + 5, readUint32(bytes, pos + 1)];
}

function readUint32(bytes: Uint8Array, pos: number): number {
  return ((bytes[pos] << 24) | (bytes[pos + 1] << 16) | (bytes[pos + 2] << 8) | bytes[pos + 3]) >>>
    0;
}

/** Numbers, booleans and null inline (what filters mostly compare); the rest through the decoder. */
function valueAt(bytes: Uint8Array, pos: number, end: number): WireValue {
  const type = bytes[pos];
  if (type < 0x80) return type;
  if (type >= 0xe0) return type - 0x100;
  switch (type) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xcc: // uint 8, 16, 32
      return bytes[pos + 1];
    case 0xcd:
      return (bytes[pos + 1] << 8) | bytes[pos + 2];
    case 0xce:
      return readUint32(bytes, pos + 1);
    case 0xd0: // int 8, 16, 32
      return (bytes[pos + 1] << 24) >> 24;
    case 0xd1:
      return (((bytes[pos + 1] << 8) | bytes[pos + 2]) << 16) >> 16;
    case 0xd2:
      return readUint32(bytes, pos + 1) | 0;
    case 0xcb: // float 64
      return new DataView(bytes.buffer, bytes.byteOffset + pos + 1, 8).getFloat64(0);
  }
  return unpackBytes(bytes, "checkpoint", pos, end) as WireValue;
}
