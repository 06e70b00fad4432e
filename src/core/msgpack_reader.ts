/**
 * A MessagePack decoder for what Cairn reads from disk and network: block frames and bodies,
 * checkpoint values, sync frames. It reads nil, booleans, integers of up to 32 bits, floats,
 * strings, binary, arrays, and maps with string keys (as plain objects) — everything
 * core/msgpack_writer.ts writes. Anything else is refused: 64-bit integers, extension types, a map
 * key that is not a string, nesting deeper than MAX_NESTING, a value cut short, or bytes left over
 * after it. The input is untrusted, so every length is checked against the bytes that are really
 * there before anything is allocated for it.
 *
 * Invalid UTF-8 decodes to U+FFFD, as msgpackr did: what storage/msgpack_check.ts passes must
 * decode without error, and a block whose strings changed so fails its canonical check anyway.
 *
 * Binary values are views of the input, not copies: a caller that keeps one while the input's
 * buffer may be reused copies it (block.ts frameParts does).
 *
 * The decoder keeps its position in module variables rather than in an object: a call reads one
 * value start to finish without calling out, so no two reads interleave, and V8 keeps module
 * variables in registers far better than fields.
 */

/** Deeper than any value Cairn writes: a record nests at most 64 levels, its frame a few more. */
const MAX_NESTING = 128;

/**
 * ASCII strings up to this many bytes are decoded in JS; longer ones, or any with other bytes, by
 * TextDecoder, which costs about 120 ns a call but little per byte (measured on V8).
 */
const SHORT_STRING = 24;

/** Record keys up to this many bytes are remembered (see readKey). */
const MAX_KEPT_KEY = 24;
const KEPT_KEY_SLOTS = 4096; // a power of two

const NO_BYTES: Uint8Array = new Uint8Array(0);

let src = NO_BYTES;
let pos = 0;
let end = 0;

/** Floats are copied here to be read: cheaper than a DataView over each input. */
const floatBytes = new Uint8Array(8);
const floatView = new DataView(floatBytes.buffer);

// `ignoreBOM`: a string that starts with U+FEFF keeps it (the default would drop it, and the value
// would no longer be the one written).
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

// Decoding a record key builds a new string each time, which V8 must then look up in its table
// of property names. Keys recur from record to record (field names), so their decoded strings
// are kept by a hash of their bytes, and a repeated key costs a byte comparison instead.
const keptKeyBytes: (Uint8Array | undefined)[] = new Array(KEPT_KEY_SLOTS).fill(undefined);
const keptKeys: string[] = new Array(KEPT_KEY_SLOTS).fill("");

/** Why bytes are not a value this decoder reads; unpackBytes (commit_codec.ts) types it. */
export class MsgpackError extends Error {
  override name = "MsgpackError";
}

/** The one value spanning `bytes[start, stop)`. Throws MsgpackError (or RangeError) if it is not. */
export function readMsgpack(bytes: Uint8Array, start = 0, stop = bytes.length): unknown {
  if (start < 0 || stop > bytes.length || start > stop) {
    throw new RangeError(`range [${start}, ${stop}) is outside ${bytes.length} bytes`);
  }
  src = bytes;
  pos = start;
  end = stop;
  try {
    const value = read(0);
    if (pos !== end) throw new MsgpackError(`${end - pos} bytes left after the value, at ${pos}`);
    return value;
  } finally {
    // Not holding on to the input (it may be a large file) until the next read.
    src = NO_BYTES;
  }
}

function read(depth: number): unknown {
  if (pos >= end) throw cutShort();
  const type = src[pos++];
  if (type < 0x80) return type;
  if (type >= 0xe0) return type - 0x100;
  if (type >= 0xa0 && type <= 0xbf) return readString(type & 0x1f);
  if (type <= 0x8f) return readMap(type & 0x0f, depth);
  if (type <= 0x9f) return readArray(type & 0x0f, depth);
  switch (type) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xc4:
      return readBinary(uint(1));
    case 0xc5:
      return readBinary(uint(2));
    case 0xc6:
      return readBinary(uint(4));
    case 0xca:
      return floatView.getFloat32(0, copyFloat(4));
    case 0xcb:
      return floatView.getFloat64(0, copyFloat(8));
    case 0xcc:
      return uint(1);
    case 0xcd:
      return uint(2);
    case 0xce:
      return uint(4);
    case 0xd0:
      return (uint(1) << 24) >> 24;
    case 0xd1:
      return (uint(2) << 16) >> 16;
    case 0xd2:
      return uint(4) | 0;
    case 0xd9:
      return readString(uint(1));
    case 0xda:
      return readString(uint(2));
    case 0xdb:
      return readString(uint(4));
    case 0xdc:
      return readArray(uint(2), depth);
    case 0xdd:
      return readArray(uint(4), depth);
    case 0xde:
      return readMap(uint(2), depth);
    case 0xdf:
      return readMap(uint(4), depth);
  }
  // 0xc1 (never used), 0xc7–0xc9 and 0xd4–0xd8 (extensions), 0xcf and 0xd3 (64-bit integers).
  throw new MsgpackError(`type 0x${type.toString(16)} at ${pos - 1} is not read by Cairn`);
}

function readArray(length: number, depth: number): unknown[] {
  // Every element takes at least a byte: a hostile length cannot make a huge array.
  if (length > end - pos) throw cutShort();
  if (depth >= MAX_NESTING) throw tooDeep();
  const array = new Array(length);
  for (let i = 0; i < length; i++) array[i] = read(depth + 1);
  return array;
}

function readMap(length: number, depth: number): Record<string, unknown> {
  if (length * 2 > end - pos) throw cutShort();
  if (depth >= MAX_NESTING) throw tooDeep();
  const record: Record<string, unknown> = {};
  for (let i = 0; i < length; i++) {
    const key = readKey();
    // Assigned, "__proto__" would set the prototype: it becomes an own field, as in JSON.parse.
    if (key === "__proto__") {
      Object.defineProperty(record, key, {
        value: read(depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else record[key] = read(depth + 1);
  }
  return record;
}

function readKey(): string {
  if (pos >= end) throw cutShort();
  const type = src[pos++];
  let length: number;
  if (type >= 0xa0 && type <= 0xbf) length = type & 0x1f;
  else if (type === 0xd9) length = uint(1);
  else if (type === 0xda) length = uint(2);
  else if (type === 0xdb) length = uint(4);
  else throw new MsgpackError(`a record key at ${pos - 1} is not a string`);
  if (length > MAX_KEPT_KEY) return readString(length);
  if (length > end - pos) throw cutShort();
  let hash = length;
  for (let i = pos; i < pos + length; i++) hash = Math.imul(hash ^ src[i], 0x01000193);
  const slot = (hash ^ (hash >>> 15)) & (KEPT_KEY_SLOTS - 1);
  const kept = keptKeyBytes[slot];
  if (kept !== undefined && kept.length === length && sameBytes(kept, pos)) {
    pos += length;
    return keptKeys[slot];
  }
  const start = pos;
  const key = readString(length);
  keptKeyBytes[slot] = src.slice(start, start + length);
  keptKeys[slot] = key;
  return key;
}

function sameBytes(kept: Uint8Array, at: number): boolean {
  for (let i = 0; i < kept.length; i++) if (kept[i] !== src[at + i]) return false;
  return true;
}

function readString(length: number): string {
  if (length > end - pos) throw cutShort();
  const start = pos;
  pos += length;
  if (length <= SHORT_STRING) {
    const ascii = asciiString(start, length);
    if (ascii !== undefined) return ascii;
  }
  return utf8.decode(src.subarray(start, start + length));
}

/**
 * The string of `length` bytes at `at`, if they are all ASCII. Up to 8 characters at a time go
 * through one String.fromCharCode call with as many arguments, about 3× faster than passing an
 * array (measured on V8) and much faster than TextDecoder for a few characters.
 */
function asciiString(at: number, length: number): string | undefined {
  let text = "";
  for (; length > 8; at += 8, length -= 8) {
    const part = asciiChars(at, 8);
    if (part === undefined) return undefined;
    text += part;
  }
  const rest = asciiChars(at, length);
  return rest === undefined ? undefined : text + rest;
}

function asciiChars(at: number, length: number): string | undefined {
  const b = src;
  const f = String.fromCharCode;
  let any = 0;
  for (let i = at; i < at + length; i++) any |= b[i];
  if (any >= 0x80) return undefined;
  switch (length) {
    case 0:
      return "";
    case 1:
      return f(b[at]);
    case 2:
      return f(b[at], b[at + 1]);
    case 3:
      return f(b[at], b[at + 1], b[at + 2]);
    case 4:
      return f(b[at], b[at + 1], b[at + 2], b[at + 3]);
    case 5:
      return f(b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4]);
    case 6:
      return f(b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5]);
    case 7:
      return f(b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5], b[at + 6]);
    default:
      return f(b[at], b[at + 1], b[at + 2], b[at + 3], b[at + 4], b[at + 5], b[at + 6], b[at + 7]);
  }
}

function readBinary(length: number): Uint8Array {
  if (length > end - pos) throw cutShort();
  pos += length;
  return src.subarray(pos - length, pos);
}

/** A big-endian unsigned integer of `size` bytes. */
function uint(size: 1 | 2 | 4): number {
  const at = advance(size);
  if (size === 1) return src[at];
  if (size === 2) return (src[at] << 8) | src[at + 1];
  return src[at] * 0x1000000 + ((src[at + 1] << 16) | (src[at + 2] << 8) | src[at + 3]);
}

/** Copies the next `size` bytes (a big-endian float) to floatBytes; false: read big-endian. */
function copyFloat(size: 4 | 8): false {
  const at = advance(size);
  for (let i = 0; i < size; i++) floatBytes[i] = src[at + i];
  return false;
}

/** Where the next `size` bytes start, having checked they are there; moves past them. */
function advance(size: number): number {
  if (size > end - pos) throw cutShort();
  pos += size;
  return pos - size;
}

function cutShort(): MsgpackError {
  return new MsgpackError(`value cut short at ${pos} (the bytes end at ${end})`);
}

function tooDeep(): MsgpackError {
  return new MsgpackError(`nested deeper than ${MAX_NESTING} at ${pos}`);
}
