import { test } from "node:test";
import assert from "node:assert/strict";
import { CHUNK, ChunkedText } from "../../src/core/text/chunked_text.ts";
import {
  copyRecord,
  holdsField,
  readsLazily,
  setLazyText,
} from "../../src/core/text/text_record.ts";
import type { FieldRecord } from "../../src/core/commit.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

/** A new seed each run unless given (printed in the test's name, to replay a failure). */
const SEED = envInteger("CAIRN_CHUNK_FUZZ_SEED") ?? Math.floor(Math.random() * 2 ** 31);

/** Text of `length` code units: letters, with a surrogate pair now and then. */
function someText(random: () => number, length: number): string {
  let text = "";
  while (text.length < length) {
    text += random() < 0.05 ? "😀" : String.fromCharCode(97 + random() * 26);
  }
  return text.slice(0, length);
}

test(`chunked text: random edits of any size read as the same edits of a string (seed ${SEED})`, () => {
  const random = seededRandom(SEED);
  const where = `seed ${SEED}`;
  let model = someText(random, Math.floor(random() * 5 * CHUNK));
  let text = ChunkedText.from(model);
  const versions: [ChunkedText, string][] = [];
  for (let step = 0; step < 2_000; step++) {
    const index = Math.floor(random() * (model.length + 1));
    const deleted = Math.floor(random() * random() * (model.length - index + 1));
    // Mostly keystrokes, sometimes a paste or a whole chunk or more.
    const size = random() < 0.8 ? Math.floor(random() * 3) : Math.floor(random() * 3 * CHUNK);
    const inserted = someText(random, size);
    model = model.slice(0, index) + inserted + model.slice(index + deleted);
    text = text.splice(index, deleted, inserted);
    assert.equal(text.length, model.length, `${where}, step ${step}: length`);
    if (model.length > 0) {
      const at = Math.floor(random() * model.length);
      assert.equal(
        text.charCodeAt(at),
        model.charCodeAt(at),
        `${where}, step ${step}: code at ${at}`,
      );
    }
    if (step % 50 === 0) {
      assert.equal(text.toString(), model, `${where}, step ${step}`);
      versions.push([text, model]);
    }
  }
  assert.equal(text.toString(), model, where);
  for (const [version, was] of versions) {
    assert.equal(version.toString(), was, `${where}: an earlier version kept its text`);
  }
});

test("chunked text: typing into full chunks, or deleting from them, keeps the chunks few", () => {
  let text = ChunkedText.from("x".repeat(10 * CHUNK));
  for (let i = 0; i < 20 * CHUNK; i++) text = text.splice(5 * CHUNK + i, 0, "a");
  assert.ok(text.chunkCount <= (2 * text.length) / CHUNK + 1, `${text.chunkCount} chunks`);
  for (let i = 0; i < 25 * CHUNK; i++) text = text.splice(CHUNK, 1, "");
  assert.equal(text.length, 5 * CHUNK);
  assert.ok(text.chunkCount <= (2 * text.length) / CHUNK + 1, `${text.chunkCount} chunks`);
});

test("chunked text: deleting everything, then typing into the empty text", () => {
  const start = "x".repeat(3 * CHUNK + 5);
  const empty = ChunkedText.from(start).splice(0, start.length, "");
  assert.equal(empty.length, 0);
  assert.equal(empty.toString(), "");
  const typed = empty.splice(0, 0, "a").splice(1, 0, "b").splice(0, 0, "c");
  assert.equal(typed.toString(), "cab");
});

/** A text that counts how often its string is made. */
function countingText(value: string): { text: ChunkedText; reads: () => number } {
  let reads = 0;
  const text = { toString: () => (reads++, value) } as unknown as ChunkedText;
  return { text, reads: () => reads };
}

test("a lazily read text field is read on access, carried unread by copyRecord, and replaced by assignment", () => {
  const { text, reads } = countingText("hello");
  const record: FieldRecord = { title: "t" };
  setLazyText(record, "body", text);
  const copy = copyRecord(record);
  assert.equal(reads(), 0, "copying does not read it");
  assert.equal(readsLazily(copy, "body"), true);
  assert.equal(holdsField(copy, "body"), true);
  assert.equal(holdsField(copy, "missing"), false);
  assert.equal(reads(), 0, "asking whether it is there does not read it");
  assert.deepEqual({ ...copy }, { title: "t", body: "hello" });
  assert.deepEqual(Object.keys(copy), ["title", "body"]);
  assert.equal(JSON.stringify(record), '{"title":"t","body":"hello"}');
  copy.body = "replaced";
  assert.equal(copy.body, "replaced");
  assert.equal(readsLazily(copy, "body"), false);
  assert.equal(record.body, "hello", "the original keeps its own");
  delete record.body;
  assert.equal(holdsField(record, "body"), false);
  record.body = "again";
  assert.equal(readsLazily(record, "body"), false, "a value put there after the delete is plain");
  assert.deepEqual(copyRecord(record), { title: "t", body: "again" });
});
