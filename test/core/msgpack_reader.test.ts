import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { MsgpackError, readMsgpack } from "../../src/core/msgpack_reader.ts";
import { MsgpackWriter, type PackableValue } from "../../src/core/msgpack_writer.ts";
import { wireValue } from "../harness/arbitrary.ts";
import { pack, unpack, withPlainBytes } from "../harness/msgpack.ts";
import { seededRandom } from "../harness/random.ts";

const packable: fc.Arbitrary<PackableValue> = fc.letrec<{ value: PackableValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    wireValue,
    fc.uint8Array({ maxLength: 40 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 4, noNullPrototype: true }),
  ),
})).value;

function written(value: PackableValue): Uint8Array {
  const writer = new MsgpackWriter();
  writer.value(value);
  return writer.take();
}

function read(bytes: Uint8Array): unknown {
  return withPlainBytes(readMsgpack(bytes));
}

function refused(bytes: Uint8Array, why: RegExp): void {
  assert.throws(
    () => readMsgpack(bytes),
    (err) => err instanceof MsgpackError && why.test(err.message),
  );
}

test("msgpack reader: reads back what the writer writes, as msgpackr reads it", () => {
  fc.assert(
    fc.property(packable, (value) => {
      const bytes = written(value);
      assert.deepStrictEqual(read(bytes), withPlainBytes(value));
      assert.deepStrictEqual(read(bytes), unpack(bytes));
    }),
    { numRuns: 1_000, seed: 0x4ead },
  );
});

test("msgpack reader: reads what msgpackr writes", () => {
  fc.assert(
    fc.property(
      packable,
      (value) => assert.deepStrictEqual(read(pack(value)), withPlainBytes(value)),
    ),
    { numRuns: 1_000, seed: 0x4eae },
  );
});

test("msgpack reader: every header size of strings, binary, arrays, maps and numbers", () => {
  const values: PackableValue[] = [];
  for (const n of [0, 1, 15, 16, 31, 32, 33, 255, 256, 65_535, 65_536]) {
    values.push("a".repeat(n), "é".repeat(n), "😀".repeat(Math.ceil(n / 2)), `${"b".repeat(n)}ü`);
    values.push(new Uint8Array(n).fill(n % 251), Array.from({ length: n }, (_, i) => i - 40));
    // Records are written as map 16 only (as msgpackr does); map 32 is made by hand below.
    if (n <= 65_535) {
      values.push(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
    }
  }
  // A map 32 of 65,536 entries: its header, then each key and value as the writer writes them.
  const entries = new MsgpackWriter();
  for (let i = 0; i < 65_536; i++) [entries.string(`k${i}`), entries.number(i)];
  const wideMap = new Uint8Array([0xdf, 0, 1, 0, 0, ...entries.take()]);
  const expected = Object.fromEntries(Array.from({ length: 65_536 }, (_, i) => [`k${i}`, i]));
  assert.deepStrictEqual(readMsgpack(wideMap), expected);
  const map32 = new Uint8Array([0xdf, 0, 0, 0, 2, 0xa1, 0x61, 1, 0xa1, 0x62, 0x92, 2, 3]);
  assert.deepStrictEqual(readMsgpack(map32), { a: 1, b: [2, 3] });
  const numbers = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];
  for (const n of numbers) values.push(n, -n || 0, n + 0.5); // no -0: written as 0, like msgpackr
  values.push(-32, -33, -128, -129, -32_768, -32_769, -(2 ** 31), -(2 ** 31) - 1, 1.5e300, -0.25);
  values.push(true, false, null, {}, [], { a: 1, b: [true, { c: "d" }] });
  for (const value of values) {
    assert.deepStrictEqual(read(written(value)), withPlainBytes(value), String(value).slice(0, 40));
  }
  // float 32, which Cairn never writes but MessagePack allows.
  assert.equal(readMsgpack(new Uint8Array([0xca, 0x3f, 0xc0, 0, 0])), 1.5);
});

test("msgpack reader: one value within a range; bytes left after it are refused", () => {
  const bytes = new Uint8Array([0xff, 0x92, 0x01, 0xa1, 0x61, 0xff]);
  assert.deepStrictEqual(readMsgpack(bytes, 1, 5), [1, "a"]);
  refused(bytes.subarray(1), /1 bytes left after the value/);
  refused(bytes.subarray(0, 5), /4 bytes left after the value/);
  assert.throws(() => readMsgpack(bytes, 2, 7), RangeError);
});

test("msgpack reader: refuses what Cairn never writes", () => {
  refused(new Uint8Array([0xc1]), /type 0xc1/);
  refused(pack(new Date(0)), /type 0xd6/); // the timestamp extension
  refused(pack(undefined), /type 0xd4/); // msgpackr's undefined: fixext 1 of type 0
  refused(new Uint8Array([0xc7, 0x01, 0x05, 0x00]), /type 0xc7/);
  refused(pack(2n ** 63n), /type 0xcf/);
  refused(pack(-(2n ** 63n)), /type 0xd3/);
  refused(new Uint8Array([0x81, 0x01, 0x02]), /a record key at 1 is not a string/);
  refused(new Uint8Array([0x81, 0xc4, 0x01, 0x61, 0x02]), /a record key at 1 is not a string/);
});

test("msgpack reader: nesting is bounded, so hostile depth cannot exhaust the stack", () => {
  const nested = (depth: number, open: number) => {
    const bytes = new Uint8Array(depth + 1).fill(open);
    bytes[depth] = 0xc0;
    return bytes;
  };
  let value = readMsgpack(nested(128, 0x91));
  for (let depth = 0; depth < 128; depth++) value = (value as unknown[])[0];
  assert.equal(value, null);
  refused(nested(129, 0x91), /nested deeper than 128/);
  refused(nested(100_000, 0x91), /nested deeper than 128/);
  const maps = new Uint8Array(3 * 200).map((_, i) => [0x81, 0xa1, 0x6b][i % 3]);
  refused(new Uint8Array([...maps, 0xc0]), /nested deeper than 128/);
});

test("msgpack reader: a length longer than the bytes there is refused before anything is made", () => {
  const huge = [0xff, 0xff, 0xff, 0xff];
  for (const type of [0xdd, 0xdf, 0xdb, 0xc6]) {
    refused(new Uint8Array([type, ...huge, 0xc0, 0xc0]), /cut short/);
  }
  refused(new Uint8Array([0xdc, 0xff, 0xff, 0xc0]), /cut short/);
  refused(new Uint8Array([0x82, 0xa1, 0x61, 0xc0]), /cut short/);
});

test("msgpack reader: every cut of a value is refused, and changed bytes read or are refused", () => {
  const random = seededRandom(0x5eed);
  fc.assert(
    fc.property(packable, (value) => {
      const bytes = written(value);
      for (let cut = 0; cut < bytes.length; cut++) {
        assert.throws(() => readMsgpack(bytes.subarray(0, cut)), MsgpackError, `cut at ${cut}`);
      }
      for (let i = 0; i < 20 && bytes.length > 0; i++) {
        const changed = bytes.slice();
        changed[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        try {
          readMsgpack(changed);
        } catch (err) {
          assert.ok(err instanceof MsgpackError, `${err} reading ${changed}`);
        }
      }
    }),
    { numRuns: 500, seed: 0xc47 },
  );
});

test("msgpack reader: a __proto__ key becomes an own field, never the prototype", () => {
  const bytes = pack(JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'));
  const value = readMsgpack(bytes) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.deepStrictEqual(Object.keys(value), ["__proto__", "a"]);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(value, "__proto__")?.value, {
    polluted: true,
  });
  assert.equal((value as { polluted?: boolean }).polluted, undefined);
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

test("msgpack reader: a string that starts with a byte order mark keeps it", () => {
  for (const text of ["\uFEFF", "\uFEFFshort", `\uFEFF${"long ".repeat(40)}`]) {
    assert.equal(readMsgpack(written(text)), text);
  }
});

test("msgpack reader: invalid UTF-8 reads as U+FFFD", () => {
  assert.equal(readMsgpack(new Uint8Array([0xa3, 0x61, 0xff, 0x62])), "a\uFFFDb");
  const long = new Uint8Array([0xd9, 40, ...new Uint8Array(39).fill(0x61), 0xc3]);
  assert.equal(readMsgpack(long), `${"a".repeat(39)}\uFFFD`);
});

test("msgpack reader: record keys remembered between reads are the keys of each record", () => {
  // More keys of one length than there are slots, keys that differ in one byte only, and keys
  // too long to be remembered: each record still reads with its own keys.
  const keys = Array.from({ length: 6_000 }, (_, i) => `key-${String(i).padStart(5, "0")}`);
  keys.push("é-clé", "x".repeat(24), "x".repeat(25), "y".repeat(40), "");
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < keys.length; i += 3) {
      const record = Object.fromEntries(keys.slice(i, i + 3).map((key, j) => [key, j]));
      assert.deepStrictEqual(readMsgpack(written(record)), record);
    }
  }
});

test("msgpack reader: binary values are views of the input, not copies", () => {
  const bytes = written([new Uint8Array([1, 2, 3])]);
  const [view] = readMsgpack(bytes) as [Uint8Array];
  assert.deepStrictEqual([...view], [1, 2, 3]);
  assert.equal(view.buffer, bytes.buffer);
  assert.equal(view.byteOffset, bytes.byteOffset + 3);
});
