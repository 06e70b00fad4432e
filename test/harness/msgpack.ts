/**
 * MessagePack encoded by msgpackr, a decoder and encoder independent of Cairn's own
 * (core/msgpack_writer.ts, core/msgpack_reader.ts): tests build hostile or hand-shaped input with
 * it, and check Cairn's bytes against it. Records extension off, as Cairn has always written.
 */
import { Packr } from "msgpackr";

const packr = new Packr({ useRecords: false, moreTypes: false });

/** Any value as msgpackr encodes it (undefined, Dates, Maps and BigInts included). */
export function pack(value: unknown): Uint8Array {
  return new Uint8Array(packr.pack(value));
}

/** The value msgpackr reads from `bytes`, byte arrays as plain Uint8Arrays (not Node Buffers). */
export function unpack(bytes: Uint8Array): unknown {
  return withPlainBytes(packr.unpack(bytes));
}

/** `value` with every byte array (a Node Buffer included) as a plain Uint8Array copy. */
export function withPlainBytes(value: unknown): unknown {
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (Array.isArray(value)) return value.map(withPlainBytes);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: withPlainBytes(entry),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
