/**
 * What one local text edit costs as the document grows: an item whose text field holds 10k, 100k
 * or 1M characters, then 2,000 keystrokes (`insertText` of one character, each its own commit) at
 * places around a moving cursor, as typing does, in one synchronous loop (so the loop times the
 * edit path itself: commit, CRDT, item state; the one block they make is sealed after the clock).
 * In memory, trusted: no storage and no signature, whose costs do not depend on the text.
 * Every round is printed; the median of the rounds per size, in µs per edit, at the end.
 * Run: ./node_modules/.bin/deno run -A bench/micro/text_edit_cost.ts (or node after a build)
 */
import { Cairn, defineSchema } from "../../src/mod.ts";

const SIZES = [10_000, 100_000, 1_000_000];
const EDITS = 2_000;
const ROUNDS = 7;

const Doc = defineSchema({ ns: "micro_text", version: 1, fields: { body: { type: "text" } } });

async function round(size: number, seed: number): Promise<number> {
  const db = await Cairn.open({ trusted: true });
  db.register(Doc);
  const repo = await db.open("/micro/text");
  const doc = repo.create(Doc, { body: "x".repeat(size) }, { key: "d" });
  await repo.flush();
  let cursor = (seed * 7919) % size;
  const start = performance.now();
  for (let i = 0; i < EDITS; i++) {
    // Mostly the next place, now and then a jump, as a writer moves around.
    cursor = i % 200 === 0 ? (cursor * 31 + 17) % size : cursor + 1;
    doc.insertText("body", cursor, "a");
  }
  const elapsed = performance.now() - start;
  await db.close();
  return (elapsed * 1000) / EDITS;
}

const results = new Map<number, number[]>();
for (let r = 0; r < ROUNDS; r++) {
  for (const size of SIZES) {
    const perEdit = await round(size, r + 1);
    results.set(size, [...results.get(size) ?? [], perEdit]);
    console.log(
      `round ${r + 1}, ${size.toLocaleString("en")} characters: ${perEdit.toFixed(2)} µs/edit`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const [size, perEdit] of results) {
  console.log(
    `${size.toLocaleString("en").padStart(9)} characters: median ${
      median(perEdit).toFixed(2)
    } µs/edit`,
  );
}
