import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isCairnError } from "../../src/core/errors.ts";
import { ByteReader, ByteWriter } from "../../src/storage/columns.ts";
import { KeyIndex } from "../../src/storage/key_index.ts";

function written(write: (out: ByteWriter) => void): ByteReader {
  const out = new ByteWriter();
  write(out);
  return new ByteReader(out.finish(3), 3, "test");
}

const corrupt = (err: unknown) => isCairnError(err, "E_CORRUPT_ENCODING");

test("numbers come back from a column, stored in the width their largest one needs", () => {
  const cases: [number[], number][] = [
    [[0, 0, 0], 1 + 0],
    [[1, 255], 1 + 2],
    [[256, 0], 1 + 4],
    [[65_536], 1 + 4],
    [[2 ** 32 - 1, 7], 1 + 8],
    [[2 ** 32, Number.MAX_SAFE_INTEGER], 1 + 16],
    [[], 1],
  ];
  for (const [values, size] of cases) {
    const out = new ByteWriter();
    out.column(values);
    assert.equal(out.length, size, `${values}`);
    assert.deepEqual([...written((w) => w.column(values)).numbers(values.length)], values);
  }
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 2 ** 32 - 1 })), (values) => {
      assert.deepEqual([...written((w) => w.column(values)).column(values.length)], values);
    }),
    { seed: 0xc01, numRuns: 200 },
  );
});

test("a column that does not fit what the reader expects is E_CORRUPT_ENCODING", () => {
  // Entries wider than 32 bits where table indexes or counts are read.
  assert.throws(() => written((w) => w.column([2 ** 40])).column(1), corrupt);
  // A width byte that is not a width; entries cut short; a float that is not a count.
  assert.throws(() => new ByteReader(Uint8Array.of(3, 1, 2, 3), 0, "t").column(1), corrupt);
  assert.throws(() => new ByteReader(Uint8Array.of(4, 1, 2), 0, "t").column(1), corrupt);
  for (const bad of [-1, 1.5, NaN, 2 ** 53]) {
    const bytes = new Uint8Array(9);
    bytes[0] = 8;
    new DataView(bytes.buffer).setFloat64(1, bad, true);
    assert.throws(() => new ByteReader(bytes, 0, "t").numbers(1), corrupt, `${bad}`);
  }
});

test("strings come back from a text, whatever their characters", () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 6 })), (strings) => {
      const { text, starts } = written((w) => w.text(strings)).text(strings.length);
      assert.deepEqual(strings.map((_, i) => text.slice(starts[i], starts[i + 1])), strings);
    }),
    { seed: 0x7e47, numRuns: 300 },
  );
  assert.throws(() => written((w) => w.text(["ab", "c"])).text(1), corrupt, "lengths too short");
});

test("the key index finds every key and nothing else; a key stored twice is refused", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ unit: "grapheme", maxLength: 8 }), { maxLength: 300 }),
      fc.string({ maxLength: 8 }),
      (keys, other) => {
        const index = new KeyIndex(written((w) => w.text(keys)).text(keys.length));
        keys.forEach((key, i) => assert.equal(index.indexOf(key), i));
        assert.equal(index.indexOf(other), keys.indexOf(other));
      },
    ),
    { seed: 0x4e7, numRuns: 300 },
  );
  const twice = written((w) => w.text(["a", "bc", "a"])).text(3);
  assert.throws(() => new KeyIndex(twice), corrupt);
});
