import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { FieldRecord } from "../../src/core/commit.ts";
import { unpackBytes } from "../../src/core/commit_codec.ts";
import { pack as packValue } from "../harness/msgpack.ts";
import { MsgpackCheck } from "../../src/storage/msgpack_check.ts";
import { RecordFieldReader } from "../../src/storage/record_fields.ts";
import { fieldRecord } from "../harness/arbitrary.ts";

/** `names` read from the packed record, and the same fields of the record decoded whole. */
function readBoth(record: FieldRecord, names: readonly string[], offset = 0) {
  const packed = packValue(record);
  // Placed inside a larger buffer, as values lie inside a checkpoint file.
  const bytes = new Uint8Array(offset + packed.length + 3).fill(0xc1);
  bytes.set(packed, offset);
  const end = offset + packed.length;
  const check = new MsgpackCheck(bytes, "test");
  assert.equal(check.record(offset, end), end);
  const whole = unpackBytes(bytes, "test", offset, end) as FieldRecord;
  const into: FieldRecord = Object.assign(Object.create(null), { leftover: "an earlier read" });
  new RecordFieldReader(names).read(bytes, offset, end, check, into);
  return {
    read: Object.fromEntries(names.map((n) => [n, into[n]])),
    // Own fields only: a name like "valueOf" is not a field of a record that lacks it.
    whole: Object.fromEntries(
      names.map((n) => [n, Object.hasOwn(whole, n) ? whole[n] : undefined]),
    ),
  };
}

test("fields read in place equal the whole record's, missing ones undefined", () => {
  fc.assert(
    fc.property(
      fieldRecord,
      fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("__proto__", "valueOf")), {
        maxLength: 3,
      }),
      fc.nat(40),
      (record, others, offset) => {
        const names = [
          ...new Set([...Object.keys(record).filter((_, i) => i % 2 === 0), ...others]),
        ];
        const { read, whole } = readBoth(record, names, offset);
        assert.deepEqual(read, whole);
      },
    ),
    { numRuns: 2_000 },
  );
});

test("every number width, long keys and records of 16 and more fields read as decoded", () => {
  const numbers = [
    0,
    127,
    128,
    255,
    256,
    65_535,
    65_536,
    2 ** 32 - 1,
    2 ** 32,
    2 ** 53 - 1,
    -1,
    -32,
    -33,
    -128,
    -129,
    -32_768,
    -32_769,
    -(2 ** 31),
    -(2 ** 31) - 1,
    -(2 ** 53) + 1,
    0.5,
    -2.25,
    1e300,
    Number.MIN_VALUE,
    Number.MAX_VALUE,
    1 / 3,
  ];
  const record: FieldRecord = {};
  numbers.forEach((n, i) => record[`n${i}`] = n);
  Object.assign(record, {
    ["k".repeat(31)]: "fixstr key",
    ["é".repeat(20)]: "a 40-byte key",
    ["x".repeat(300)]: "a str16 key",
    text: "y".repeat(70_000),
    nested: { a: [1, { b: null }], c: true },
    flag: false,
    nothing: null,
  });
  const names = [...Object.keys(record), "absent", "n1 ", "k".repeat(30)];
  // Read one at a time (each scans up to its field) and all at once.
  for (const name of names) {
    const { read, whole } = readBoth(record, [name]);
    assert.deepEqual(read, whole, name.slice(0, 20));
  }
  const { read, whole } = readBoth(record, names, 7);
  assert.deepEqual(read, whole);
  assert.ok(Object.keys(record).length > 16);
});

test("a reader reads only its own names and clears them first", () => {
  const packed = packValue({ a: 1, b: 2 });
  const check = new MsgpackCheck(packed, "test");
  const into: FieldRecord = Object.assign(Object.create(null), { a: 9, c: 9 });
  new RecordFieldReader(["a", "c"]).read(packed, 0, packed.length, check, into);
  assert.deepEqual({ ...into }, { a: 1, c: undefined });
});
