import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isCairnError } from "../../src/core/errors.ts";
import { unpackBytes } from "../../src/core/commit_codec.ts";
import { pack as packValue } from "../harness/msgpack.ts";
import { assertFieldRecord, assertWireValue } from "../../src/core/wire_validation.ts";
import { MsgpackCheck } from "../../src/storage/msgpack_check.ts";
import { fieldRecord, wireValue } from "../harness/arbitrary.ts";

const bytes = (...values: number[]) => Uint8Array.from(values);

function recordEnd(data: Uint8Array): number {
  return new MsgpackCheck(data, "test").record(0, data.length);
}

function refused(data: Uint8Array, check: (c: MsgpackCheck) => number): boolean {
  try {
    check(new MsgpackCheck(data, "test"));
    return false;
  } catch (err) {
    assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), String(err));
    return true;
  }
}

test("every record Cairn encodes passes, and ends where its bytes end", () => {
  fc.assert(
    fc.property(fieldRecord, (record) => {
      const packed = packValue(record);
      assert.equal(recordEnd(packed), packed.length);
    }),
    { seed: 0xabc, numRuns: 500 },
  );
});

test("values back to back: each one's end is the next one's start", () => {
  fc.assert(
    fc.property(fc.array(wireValue, { maxLength: 8 }), (values) => {
      const parts = values.map((value) => packValue(value));
      const joined = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
      let at = 0;
      for (const part of parts) joined.set(part, (at += part.length) - part.length);
      const check = new MsgpackCheck(joined, "test");
      let pos = 0;
      for (const part of parts) {
        const end = check.value(pos, joined.length, 0);
        assert.equal(end - pos, part.length);
        pos = end;
      }
    }),
    { seed: 0xb2b, numRuns: 300 },
  );
});

test("whatever passes decodes without error to a valid wire value", () => {
  const recordPrefix = fc.constantFrom(0x81, 0x82, 0x83, 0xde);
  fc.assert(
    fc.property(recordPrefix, fc.uint8Array({ maxLength: 40 }), (first, rest) => {
      const data = new Uint8Array([first, ...rest]);
      let end: number;
      try {
        end = recordEnd(data);
      } catch (err) {
        assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), String(err));
        return;
      }
      const value = unpackBytes(data, "test", 0, end);
      assertFieldRecord(value, "decoded");
    }),
    { seed: 0xdec0, numRuns: 20_000 },
  );
});

test("what is not a wire value is refused", () => {
  const cases: [string, Uint8Array][] = [
    ["not a record", packValue([1, 2])],
    ["nil where a record is needed", bytes(0xc0)],
    ["cut short", packValue({ a: "hello" }).subarray(0, 5)],
    ["never-used type", bytes(0x81, 0xa1, 0x61, 0xc1)],
    ["binary", bytes(0x81, 0xa1, 0x61, 0xc4, 0x01, 0x00)],
    ["extension (a Date, say)", bytes(0x81, 0xa1, 0x61, 0xd6, 0xff, 0, 0, 0, 0)],
    ["64-bit integer (BigInt)", bytes(0x81, 0xa1, 0x61, 0xcf, 0, 0, 0, 0, 0, 0, 0, 1)],
    ["NaN", bytes(0x81, 0xa1, 0x61, 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0)],
    ["infinite float32", bytes(0x81, 0xa1, 0x61, 0xca, 0x7f, 0x80, 0, 0)],
    ["a number as a key", bytes(0x81, 0x01, 0x02)],
    [
      "a map of 2^32-1 entries in 10 bytes",
      bytes(0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 0x61, 1, 2, 3),
    ],
    ["a string longer than the bytes", bytes(0x81, 0xa1, 0x61, 0xdb, 0, 0, 1, 0, 0x61)],
  ];
  for (const [name, data] of cases) {
    assert.ok(refused(data, (c) => c.record(0, data.length)), name);
  }
  assert.ok(refused(packValue(["a", 1]), (c) => c.stringArray(0, 4)), "an array with a number");
});

test("nesting is limited exactly as for values read from the log", () => {
  const nested = (depth: number) => {
    let value: unknown = [];
    for (let i = 0; i < depth; i++) value = [value];
    return { a: value };
  };
  for (const depth of [62, 63, 64, 65]) {
    const record = nested(depth);
    let fromLog = true;
    try {
      assertWireValue(record, "log");
    } catch {
      fromLog = false;
    }
    const packed = packValue(record);
    assert.equal(!refused(packed, (c) => c.record(0, packed.length)), fromLog, `depth ${depth}`);
  }
});
