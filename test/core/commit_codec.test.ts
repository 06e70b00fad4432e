import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  commitFromJsonLine,
  commitToJsonLine,
  decodeCommit,
  encodeCommit,
  isCairnError,
} from "cairndb";
import type { Commit, CommitHeader } from "cairndb";
import { commit as commitArb } from "../harness/arbitrary.ts";
import { seededRandom } from "../harness/random.ts";

const header: CommitHeader = {
  session: "s1",
  seq: 7,
  key: "todo-1",
  hlc: 1_790_000_000_000 * 1024,
  parents: ["s1.6", "s2.3"],
  schema: "task@1",
};
const sample: Commit = {
  ...header,
  kind: "value",
  value: { title: "write tests", done: false, tags: ["a", "b"], rank: 1.5 },
};

test("a commit survives msgpack bytes and back, for any commit", () => {
  fc.assert(
    fc.property(commitArb, (c) => {
      assert.deepEqual(decodeCommit(encodeCommit(c)), c);
    }),
    { numRuns: 300 },
  );
});

test("a commit survives a JSON line and back, for any commit", () => {
  fc.assert(
    fc.property(commitArb, (c) => {
      const line = commitToJsonLine(c);
      assert.ok(!line.includes("\n"), "a JSON line has no newline");
      assert.deepEqual(commitFromJsonLine(line), c);
    }),
    { numRuns: 300 },
  );
});

test("both encodings carry the same content", () => {
  fc.assert(
    fc.property(commitArb, (c) => {
      assert.deepEqual(decodeCommit(encodeCommit(c)), commitFromJsonLine(commitToJsonLine(c)));
    }),
    { numRuns: 100 },
  );
});

test("the JSON line is readable: named fields, body by kind", () => {
  const json = JSON.parse(commitToJsonLine(sample));
  assert.equal(json.v, 1);
  assert.equal(json.key, "todo-1");
  assert.deepEqual(json.parents, ["s1.6", "s2.3"]);
  assert.equal(json.value.title, "write tests");
  const deleted = JSON.parse(commitToJsonLine({ ...header, kind: "delete" }));
  assert.equal(deleted.deleted, true);
  assert.equal(deleted.value, undefined);
});

test("every truncation of encoded bytes is a typed E_CORRUPT_ENCODING error", () => {
  const bytes = encodeCommit(sample);
  for (let cut = 0; cut < bytes.length; cut++) {
    assert.throws(
      () => decodeCommit(bytes.subarray(0, cut)),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      `cut at ${cut}`,
    );
  }
});

test("flipped bytes decode to a valid commit or a typed error, never anything else", () => {
  const bytes = encodeCommit(sample);
  const random = seededRandom(0xc0ffee);
  for (let i = 0; i < 2000; i++) {
    const damaged = bytes.slice();
    const flips = 1 + Math.floor(random() * 3);
    for (let f = 0; f < flips; f++) {
      damaged[Math.floor(random() * damaged.length)] ^= 1 << Math.floor(random() * 8);
    }
    try {
      const decoded = decodeCommit(damaged);
      assert.equal(typeof decoded.session, "string");
      assert.ok(Number.isSafeInteger(decoded.seq) && decoded.seq >= 1);
    } catch (err) {
      assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), `iteration ${i}: ${String(err)}`);
    }
  }
});

test("random bytes and malformed JSON are rejected with typed errors", () => {
  const random = seededRandom(42);
  for (let i = 0; i < 500; i++) {
    const junk = Uint8Array.from(
      { length: 1 + Math.floor(random() * 64) },
      () => Math.floor(random() * 256),
    );
    try {
      decodeCommit(junk);
    } catch (err) {
      assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), String(err));
    }
  }
  const bad = [
    "",
    "{",
    "[]",
    "null",
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), v: 99 }),
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), seq: 0 }),
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), hlc: -1 }),
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), session: "a.b" }),
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), parents: "s1.6" }),
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), deleted: true }),
    JSON.stringify({ ...JSON.parse(commitToJsonLine(sample)), value: [1, 2] }),
  ];
  for (const line of bad) {
    assert.throws(
      () => commitFromJsonLine(line),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      line,
    );
  }
});

test("MessagePack extension types (dates, binary) are not accepted as field values", () => {
  // fixext4, type -1 (timestamp) in place of the value record's field: [1,"s",1,"k",0,[],"t@1",0,{"d":<date>}]
  const valid = encodeCommit({ ...header, kind: "value", value: { d: 0 } });
  const withDate = new Uint8Array([...valid.subarray(0, valid.length - 1), 0xd6, 0xff, 0, 0, 0, 1]);
  assert.throws(() => decodeCommit(withDate), (err) => isCairnError(err, "E_CORRUPT_ENCODING"));
});
