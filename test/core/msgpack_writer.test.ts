import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import type { WireValue } from "../../src/core/commit.ts";
import { MsgpackWriter } from "../../src/core/msgpack_writer.ts";
import { wireValue } from "../harness/arbitrary.ts";
import { pack as packValue } from "../harness/msgpack.ts";

// The writer must produce exactly msgpackr's bytes (records extension off), which Cairn wrote
// before it had a writer of its own: files written then are read the same, and the canonical
// check of a block body compares against the one encoding both produce.

function written(value: WireValue): Uint8Array {
  const writer = new MsgpackWriter();
  writer.value(value);
  return writer.take();
}

test("msgpack writer: same bytes as msgpackr for any wire value", () => {
  fc.assert(
    fc.property(wireValue, (value) => {
      assert.deepEqual(written(value), new Uint8Array(packValue(value)));
    }),
    { numRuns: 500 },
  );
});

test("msgpack writer: same bytes as msgpackr at every size boundary", () => {
  const lengths = [
    0,
    1,
    15,
    16,
    31,
    32,
    63,
    64,
    65,
    85,
    86,
    255,
    256,
    21_845,
    21_846,
    65_535,
    65_536,
  ];
  const values: WireValue[] = [];
  for (const n of lengths) {
    values.push("a".repeat(n), "é".repeat(n), "€".repeat(n), "😀".repeat(Math.ceil(n / 2)));
    values.push(`${"b".repeat(Math.max(0, n - 1))}ü`);
    if (n <= 256) values.push(Array.from({ length: n }, (_, i) => i));
  }
  values.push(Array.from({ length: 65_536 }, () => null));
  const numbers = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];
  for (const n of numbers) values.push(n, -n, n + 0.5);
  values.push(-32, -33, -128, -129, -32_768, -32_769, -(2 ** 31), -(2 ** 31) - 1, 1.5e300, -0.25);
  values.push(true, false, null, {}, { a: 1, b: [true, { c: "d" }] });
  for (const value of values) {
    assert.deepEqual(
      written(value),
      new Uint8Array(packValue(value)),
      JSON.stringify(value)?.slice(0, 40),
    );
  }
});

test("msgpack writer: byte arrays of every header size, and growth past the first buffer", () => {
  const writer = new MsgpackWriter();
  const arrays = [0, 255, 256, 65_535, 65_536, 200_000].map((n) => new Uint8Array(n).fill(n % 251));
  for (const bytes of arrays) writer.bytes(bytes);
  const expected = arrays.map((bytes) => new Uint8Array(packValue(bytes)));
  const all = writer.take();
  let at = 0;
  for (const part of expected) {
    assert.deepEqual(all.subarray(at, at + part.length), part);
    at += part.length;
  }
  assert.equal(at, all.length);
});

test("msgpack writer: take and reset start over", () => {
  const writer = new MsgpackWriter();
  writer.string("dropped");
  writer.reset();
  writer.number(5);
  assert.deepEqual(writer.take(), new Uint8Array([5]));
  assert.deepEqual(writer.take(), new Uint8Array([]));
});

test("msgpack writer: repeated strings and record keys written from its cache are the same bytes", () => {
  const writer = new MsgpackWriter();
  const values: WireValue[] = [{ title: "a", "clé": 1 }, { title: "b", "clé": 2 }, { title: "a" }];
  for (let round = 0; round < 2; round++) {
    for (const value of values) {
      writer.value(value);
      assert.deepEqual(writer.take(), new Uint8Array(packValue(value)));
      writer.repeatedString("session-id");
      assert.deepEqual(writer.take(), new Uint8Array(packValue("session-id")));
    }
  }
  for (let i = 0; i < 3_000; i++) writer.repeatedString(`s${i}`); // past the cache's limit
  writer.reset();
  writer.repeatedString("s2999");
  assert.deepEqual(writer.take(), new Uint8Array(packValue("s2999")));
});

test("msgpack writer: a commit id written from its parts is the id string's bytes", () => {
  const check = (session: string, seq: number) => {
    const writer = new MsgpackWriter();
    writer.number(7); // not at the start of the buffer
    writer.commitId(session, seq);
    assert.deepEqual(writer.take(), new Uint8Array(packValue([7, `${session}.${seq}`]).slice(1)));
  };
  // Every digit count, both sides of 31 bits (where digits stop being integer division), ids on
  // both sides of the fixstr / str8 boundary (32), and a session that is not ASCII (written the
  // slow way).
  const seqs = [1, 9, 10, 99, 100, 65_535, 99_999_999, 100_000_000, 999_999_999, 1e9];
  seqs.push(2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1);
  for (const session of ["abcdefghij_-ABCDEFGHIJ", "s", "x".repeat(30), "é-session", "🙂"]) {
    for (const seq of seqs) check(session, seq);
  }
  fc.assert(
    fc.property(
      fc.string({ maxLength: 40 }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      check,
    ),
    { numRuns: 500, seed: 17 },
  );
});
