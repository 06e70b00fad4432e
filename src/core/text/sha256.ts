/**
 * SHA-256 (FIPS 180-4), computed synchronously. The text CRDT names the characters of a text
 * field's old whole-string value after a hash of that string (text_doc.ts, `baseSession`), while
 * it checks and applies operations, which cannot wait for WebCrypto's asynchronous digest. The
 * hash must be one no peer can find a second text for: two texts with one name would make
 * replicas keep whichever arrived first. Texts hashed are the old values of text fields, once
 * each per edit that starts a document: speed does not matter here.
 */

/** The first 32 bits of the fractional parts of the first 64 primes' cube roots. */
const K = Uint32Array.from(primes(64), (p) => fraction(Math.cbrt(p)));

/** The first 32 bits of the fractional parts of the first 8 primes' square roots. */
const INITIAL = Uint32Array.from(primes(8), (p) => fraction(Math.sqrt(p)));

export function sha256(data: Uint8Array): Uint8Array {
  const length = data.length;
  const padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  // The message's length in bits, big-endian, in the last 8 bytes.
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length << 3) >>> 0);
  const hash = INITIAL.slice();
  const w = new Uint32Array(64);
  for (let at = 0; at < padded.length; at += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(at + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = rotate(a, 7) ^ rotate(a, 18) ^ (a >>> 3);
      const s1 = rotate(b, 17) ^ rotate(b, 19) ^ (b >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1; // the array keeps the low 32 bits
    }
    let [a, b, c, d, e, f, g, h] = hash;
    for (let i = 0; i < 64; i++) {
      const s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25);
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22);
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    hash[0] += a;
    hash[1] += b;
    hash[2] += c;
    hash[3] += d;
    hash[4] += e;
    hash[5] += f;
    hash[6] += g;
    hash[7] += h;
  }
  const digest = new Uint8Array(32);
  const out = new DataView(digest.buffer);
  for (let i = 0; i < 8; i++) out.setUint32(i * 4, hash[i]);
  return digest;
}

function rotate(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

function primes(count: number): number[] {
  const found: number[] = [];
  for (let n = 2; found.length < count; n++) {
    if (found.every((p) => n % p !== 0)) found.push(n);
  }
  return found;
}

function fraction(root: number): number {
  return Math.floor((root - Math.floor(root)) * 2 ** 32) >>> 0;
}
