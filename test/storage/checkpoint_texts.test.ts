import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { TextDoc } from "../../src/core/text/text_doc.ts";
import { StoredTexts, textsToWire } from "../../src/storage/checkpoint_texts.ts";

function edited(): TextDoc {
  const doc = new TextDoc();
  doc.insert(0, "hello world", "A", 1);
  doc.delete(5, 6);
  doc.insert(5, ", there", "B", 1);
  return doc;
}

test("checkpoint texts: documents round-trip, runs and tombstones included, made on first use", () => {
  const doc = edited();
  const wire = textsToWire([{ key: "k", field: "body", runs: [...doc.runs()] }]);
  const stored = new StoredTexts(JSON.parse(JSON.stringify(wire)));
  assert.deepEqual([...stored.texts()], [["k", "body"]]);
  const back = stored.text("k", "body")!;
  assert.equal(back.text, "hello, there");
  assert.deepEqual([...back.runs()], [...doc.runs()]);
  assert.equal(stored.text("k", "other"), undefined);
  // The restored document goes on like the original.
  back.insert(0, ">", "A", back.nextClock("A"));
  assert.equal(back.text, ">hello, there");
  assert.equal(back.nextClock("A"), 13);
});

test("checkpoint texts: hostile entries are E_CORRUPT_ENCODING", () => {
  const good = textsToWire([{ key: "k", field: "f", runs: [...edited().runs()] }]) as unknown[][];
  const [entry] = good;
  const runs = entry[3] as number[];
  const variants: unknown[] = [
    "x",
    [["k", "f"]],
    [[...entry.slice(0, 4), "too short"]],
    [[...entry.slice(0, 3), runs.slice(1), entry[4]]],
    [[entry[0], entry[1], entry[2], [9, ...runs.slice(1)], entry[4]]],
    [[entry[0], entry[1], entry[2], [runs[0], 0, ...runs.slice(2)], entry[4]]],
    [[entry[0], entry[1], entry[2], [...runs.slice(0, 3), 2, ...runs.slice(4)], entry[4]]],
    [[entry[0], entry[1], entry[2], [...runs, ...runs.slice(0, 8)], entry[4]]],
    [entry, entry],
  ];
  for (const variant of variants) {
    assert.throws(
      () => new StoredTexts(variant),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      JSON.stringify(variant).slice(0, 80),
    );
  }
});
