import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { crc32c, crc32cAppend, crc32cCombine } from "../../src/storage/crc32c.ts";

const ascii = (text: string) => new TextEncoder().encode(text);
const filled = (length: number, byteAt: (i: number) => number) =>
  Uint8Array.from({ length }, (_, i) => byteAt(i));
const joined = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/** Bit-at-a-time CRC-32C straight from the definition: the reference the fast code must match. */
function bitwiseCrc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

test("crc32c matches the published check values (RFC 3720 B.4 and common vectors)", () => {
  const vectors: [string, Uint8Array, number][] = [
    ["empty", new Uint8Array(0), 0x00000000],
    ['"a"', ascii("a"), 0xc1d04330],
    ['"abc"', ascii("abc"), 0x364b3fb7],
    ['"123456789"', ascii("123456789"), 0xe3069283],
    ["quick brown fox", ascii("The quick brown fox jumps over the lazy dog"), 0x22620404],
    ["32 zero bytes", new Uint8Array(32), 0x8a9136aa],
    ["32 bytes of 0xFF", filled(32, () => 0xff), 0x62a8ab43],
    ["32 increasing bytes 0..31", filled(32, (i) => i), 0x46dd794e],
    ["32 decreasing bytes 31..0", filled(32, (i) => 31 - i), 0x113fdb5c],
    [
      "iSCSI read command PDU",
      Uint8Array.from([
        0x01,
        0xc0,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x14,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x04,
        0x00,
        0x00,
        0x00,
        0x00,
        0x14,
        0x00,
        0x00,
        0x00,
        0x18,
        0x28,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x02,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
      ]),
      0xd9963a56,
    ],
  ];
  for (const [name, bytes, expected] of vectors) {
    assert.equal(crc32c(bytes), expected, name);
    assert.equal(bitwiseCrc32c(bytes), expected, `${name} (reference)`);
  }
});

test("crc32c equals the bit-at-a-time definition for any bytes, at any alignment", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 300 }),
      fc.nat({ max: 7 }),
      (bytes, shift) => {
        // A view that starts `shift` bytes into its buffer, like a record inside a file.
        const padded = new Uint8Array(bytes.length + shift);
        padded.set(bytes, shift);
        const view = padded.subarray(shift);
        const result = crc32c(view);
        assert.equal(result, bitwiseCrc32c(bytes));
        assert.ok(Number.isInteger(result) && result >= 0 && result <= 0xffffffff);
      },
    ),
    { seed: 0xc2c, numRuns: 300 },
  );
});

test("crc32c continues from a seed: crc(a + b) = crc(b, crc(a))", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 100 }), fc.uint8Array({ maxLength: 100 }), (a, b) => {
      assert.equal(crc32c(b, crc32c(a)), crc32c(joined(a, b)));
    }),
    { seed: 0x5eed, numRuns: 200 },
  );
});

test("crc32c detects every single-bit flip of a record", () => {
  const bytes = filled(64, (i) => (i * 37 + 11) & 0xff);
  const original = crc32c(bytes);
  for (let bit = 0; bit < bytes.length * 8; bit++) {
    bytes[bit >> 3] ^= 1 << (bit & 7);
    assert.notEqual(crc32c(bytes), original, `bit ${bit}`);
    bytes[bit >> 3] ^= 1 << (bit & 7);
  }
});

test("crc32cCombine gives crc(a + b) from crc(a), crc(b) and b's length alone", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 200 }),
      fc.uint8Array({ maxLength: 5000 }),
      (a, b) => {
        const expected = crc32c(joined(a, b));
        assert.equal(crc32cCombine(crc32c(a), crc32c(b), b.length), expected);
        assert.equal(crc32cAppend(crc32c(a), b, crc32c(b)), expected);
      },
    ),
    { seed: 0xc0b1, numRuns: 300 },
  );
  // Lengths whose bits reach far: the powers of x go up to 2^63 bytes' worth.
  const zeros = new Uint8Array(1 << 20);
  assert.equal(
    crc32cCombine(crc32c(ascii("abc")), crc32c(zeros), zeros.length),
    crc32c(zeros, crc32c(ascii("abc"))),
  );
  assert.equal(crc32cCombine(0, 0, 0), 0);
});
