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

/**
 * The CRC-32C of `a` followed by `b`, from `crc32c(a)`, `crc32c(b)` and `b`'s length, without
 * reading any byte: `crc32c(b, crcA)` equals `crc32cCombine(crcA, crc32c(b), b.length)`. A
 * writer that already checksummed each record this way gets the checksum of the whole file for
 * ~1 µs per record instead of a second pass over its bytes.
 *
 * Why it works: the register is linear over GF(2) apart from the initial value and final xor,
 * which cancel between the two halves, so appending `n` bytes multiplies `crcA` by x^(8n)
 * modulo the polynomial before `crcB` is added.
 */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  return (multiplyModPolynomial(powerOfX(lengthB), crcA) ^ crcB) >>> 0;
}

/** Below this many bytes, checksumming them again is quicker than combining (~1 µs). */
const COMBINE_FROM = 2048;

/**
 * `crc32c(b, crcA)` for bytes `b` whose own CRC `crcB` is known: combined when `b` is long, read
 * again when it is short.
 */
export function crc32cAppend(crcA: number, b: Uint8Array, crcB: number): number {
  return b.length < COMBINE_FROM ? crc32c(b, crcA) : crc32cCombine(crcA, crcB, b.length);
}

/** x^(2^k) modulo the polynomial for k = 0..63, reflected (bit 31 is x^0). */
const X_POWERS = (() => {
  const powers = new Uint32Array(64);
  powers[0] = 1 << 30; // x^1
  for (let k = 1; k < 64; k++) powers[k] = multiplyModPolynomial(powers[k - 1], powers[k - 1]);
  return powers;
})();

/** x^(8 * bytes) modulo the polynomial, as a product of the X_POWERS its bits select. */
function powerOfX(bytes: number): number {
  let power = 0x80000000; // x^0
  // 8 * bytes = bytes shifted by 3: bit j of `bytes` selects x^(2^(j + 3)).
  for (let k = 3, rest = bytes; rest > 0; k++, rest = Math.floor(rest / 2)) {
    if (rest % 2 === 1) power = multiplyModPolynomial(X_POWERS[k], power);
  }
  return power;
}

/** The product of two reflected polynomials modulo the CRC-32C polynomial. */
function multiplyModPolynomial(a: number, b: number): number {
  let product = 0;
  for (let bit = 0x80000000; bit !== 0; bit >>>= 1) {
    if ((a & bit) !== 0) product ^= b;
    b = b & 1 ? (b >>> 1) ^ POLYNOMIAL : b >>> 1;
  }
  return product >>> 0;
}
