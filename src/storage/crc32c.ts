/**
 * CRC-32C (Castagnoli): the checksum of every log record. Reflected polynomial 0x82F63B78,
 * initial value and final xor 0xFFFFFFFF, as in iSCSI (RFC 3720), ext4 and SSE 4.2's `crc32`.
 *
 * Table-driven, sixteen bytes per step ("slice-by-16"): sixteen 256-entry tables, where table k
 * gives the CRC contribution of a byte followed by k zero bytes. The bytes are read as aligned
 * 32-bit little-endian words, four loads per step instead of sixteen. Measured over one 11 MB
 * buffer, median of 15 runs: Deno 2.9 1.5 GB/s, Node 24 1.04 GB/s, against 0.75 / 0.64 GB/s for
 * slice-by-8 reading single bytes of a `Buffer` (Deno 1.18 GB/s over a plain Uint8Array). Over
 * 300-byte records the view costs a little: 0.76 / 0.54 GB/s, against 1.03 / 0.44 GB/s.
 */

const POLYNOMIAL = 0x82f63b78;
const SLICES = 16;

/** Tables 0..15 one after the other: entry `k * 256 + b`. */
const TABLES = buildTables();
const [T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15] = Array.from(
  { length: SLICES },
  (_, k) => TABLES.subarray(k * 256, k * 256 + 256),
);

/** Word reads assume little-endian words; a big-endian host takes the byte-at-a-time path. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

function buildTables(): Uint32Array {
  const tables = new Uint32Array(SLICES * 256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
    tables[byte] = crc >>> 0;
  }
  for (let byte = 0; byte < 256; byte++) {
    let crc = tables[byte];
    for (let k = 1; k < SLICES; k++) {
      // One more zero byte pushed through the register.
      crc = tables[crc & 0xff] ^ (crc >>> 8);
      tables[k * 256 + byte] = crc;
    }
  }
  return tables;
}

/**
 * The CRC-32C of `bytes`, as an unsigned 32-bit integer. `seed` continues an earlier result:
 * `crc32c(b, crc32c(a))` equals the CRC of `a` followed by `b`.
 */
export function crc32c(bytes: Uint8Array, seed = 0): number {
  let crc = ~seed;
  const length = bytes.length;
  let i = 0;
  if (LITTLE_ENDIAN && length >= 4 * SLICES) {
    // Bytes one at a time up to a 4-byte boundary of the buffer, so the words are aligned.
    for (const aligned = (4 - (bytes.byteOffset & 3)) & 3; i < aligned; i++) {
      crc = T0[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
    }
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, (length - i) >>> 2);
    const stop = words.length & ~3;
    for (let w = 0; w < stop; w += 4) {
      const a = crc ^ words[w];
      const b = words[w + 1];
      const c = words[w + 2];
      const d = words[w + 3];
      crc = T15[a & 0xff] ^ T14[(a >>> 8) & 0xff] ^ T13[(a >>> 16) & 0xff] ^ T12[a >>> 24] ^
        T11[b & 0xff] ^ T10[(b >>> 8) & 0xff] ^ T9[(b >>> 16) & 0xff] ^ T8[b >>> 24] ^
        T7[c & 0xff] ^ T6[(c >>> 8) & 0xff] ^ T5[(c >>> 16) & 0xff] ^ T4[c >>> 24] ^
        T3[d & 0xff] ^ T2[(d >>> 8) & 0xff] ^ T1[(d >>> 16) & 0xff] ^ T0[d >>> 24];
    }
    i += stop * 4;
  }
  for (; i < length; i++) crc = T0[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return ~crc >>> 0;
}
