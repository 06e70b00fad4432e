/**
 * A block's chain of commits on one item (each the only parent of the next) is applied as one
 * change: the item is merged once, for the chain's last commit, and one change event carries the
 * text changes of every commit in order. These tests hold it to what applying the commits one by
 * one gives: the writer's own state, and the events' text changes replayed on the text before.
 *
 * Seeded: CAIRN_RUNS_SEED=S replays seed S alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineSchema, type ItemChange } from "cairndb";
import { seededRandom } from "../harness/random.ts";
import {
  assertClean,
  closePeers,
  envInteger,
  exchange,
  openPeers,
  type Peer,
  plain,
} from "../harness/peers.ts";
import { TASK } from "../harness/schemas.ts";
import { replayTextChanges } from "../harness/text_changes.ts";

const Task = defineSchema(TASK);
const KEY = "k";

/**
 * One random edit of the item on `peer`, a live one (a deleted item is made again); returns
 * whether it deleted the item.
 */
function edit(peer: Peer, rng: () => number, step: number): boolean {
  const item = peer.repo.get(KEY, Task);
  if (item === undefined) {
    peer.repo.create(Task, { title: `again ${step}`, notes: "new" }, { key: KEY });
    return false;
  }
  const notes = item.get("notes") ?? "";
  const roll = rng();
  if (roll < 0.35) item.insertText("notes", Math.floor(rng() * (notes.length + 1)), `<${step}>`);
  else if (roll < 0.5 && notes.length > 0) {
    const at = Math.floor(rng() * notes.length);
    item.deleteText("notes", at, Math.min(3, notes.length - at));
  } else if (roll < 0.65) item.set("title", `title ${step}`);
  else if (roll < 0.75) item.set("rank", step);
  else if (roll < 0.85) item.set("tags", new Set([...item.get("tags") ?? [], `t${step % 4}`]));
  else if (roll < 0.985) item.update({ done: step % 2 === 0, meta: new Map([["m", step]]) });
  else {
    item.delete();
    return true;
  }
  return false;
}

async function runSeed(seed: number): Promise<void> {
  const rng = seededRandom(seed);
  const [a, b] = await openPeers(2, { schemas: [Task] });
  try {
    a.repo.create(Task, { title: "start", notes: "hello world" }, { key: KEY });
    assertClean(await exchange(a, b), "a → b");
    // Concurrent: a few edits on a, a long chain on b.
    let deletes = false;
    for (let step = 0; step < 3; step++) deletes = edit(a, rng, 1000 + step) || deletes;
    const chain = 20 + Math.floor(rng() * 60);
    for (let step = 0; step < chain; step++) deletes = edit(b, rng, step) || deletes;

    const events: ItemChange[] = [];
    a.repo.on("change", (change) => events.push(change));
    const notesBefore = a.repo.get(KEY, Task)?.get("notes") ?? "";
    const report = await exchange(b, a);
    assertClean(report, "b → a");
    assert.equal(report.commits, chain);
    assert.ok(events.length >= 1 && events.length <= report.applied, "one change per block");
    const after = a.repo.get(KEY, Task);
    assert.equal(events.at(-1)!.deleted, after === undefined);
    // (Text changes are the document's: an item deleted on either side read no text meanwhile.)
    if (!deletes) {
      assert.equal(
        events.reduce((text, event) => replayTextChanges(text, event, "notes"), notesBefore),
        after?.get("notes"),
        "the events' text changes",
      );
    }

    assertClean(await exchange(a, b), "a → b");
    assert.deepEqual([...a.repo.leaves(KEY)].sort(), [...b.repo.leaves(KEY)].sort());
    assert.deepEqual(
      plain(a.repo.get(KEY, Task)?.toObject()),
      plain(b.repo.get(KEY, Task)?.toObject()),
      "the importer merged what the writer merged, one commit at a time",
    );
  } finally {
    await closePeers([a, b]);
  }
}

test("a block's chain on an item with a concurrent leaf merges as the writer's commits did, one event per block", async () => {
  const only = envInteger("CAIRN_RUNS_SEED");
  for (const seed of only === undefined ? Array.from({ length: 60 }, (_, i) => i + 1) : [only]) {
    try {
      await runSeed(seed);
    } catch (err) {
      throw new Error(`seed ${seed} (replay: CAIRN_RUNS_SEED=${seed})`, { cause: err });
    }
  }
});

test("an item created and edited in one imported block is next written here as a delta, as after the writer's commits one by one", async () => {
  const [a, b] = await openPeers(2, { schemas: [Task] });
  try {
    const long = "x".repeat(4000);
    const item = a.repo.create(Task, { title: long, rank: 0 }, { key: KEY });
    item.set("rank", 1);
    item.set("rank", 2);
    assertClean(await exchange(a, b), "a → b");
    const before = b.repo.versionVector();
    b.repo.get(KEY, Task)!.set("rank", 3);
    const written = await b.repo.exportBlocks(before);
    const bytes = written.reduce((sum, frame) => sum + frame.length, 0);
    // The title whole would be over 4,000 bytes; the delta carries the rank alone.
    assert.ok(bytes < 1000, `the edit's block is ${bytes} bytes`);
    assertClean(await exchange(b, a), "b → a");
    assert.equal(a.repo.get(KEY, Task)!.get("rank"), 3);
  } finally {
    await closePeers([a, b]);
  }
});

/** Two items on a and b, then b's one block: `write` on b in one tick, more than 64 inserts in B. */
async function blockOfEdits(write: (b: Peer) => void) {
  const [a, b] = await openPeers(2, { schemas: [Task] });
  a.repo.create(Task, { title: "A", notes: "" }, { key: "A" });
  a.repo.create(Task, { title: "B", notes: "hello" }, { key: "B" });
  assertClean(await exchange(a, b), "a → b");
  write(b);
  return { a, b };
}

function typeInto(peer: Peer, key: string, count: number): void {
  const item = peer.repo.get(key, Task)!;
  for (let i = 0; i < count; i++) item.insertText("notes", item.get("notes")!.length, `${i % 10}`);
}

test("a change listener that edits a text during an import keeps its edit when that text's edits come later in the block, and the peers agree", async () => {
  const { a, b } = await blockOfEdits((b) => {
    b.repo.get("A", Task)!.set("title", "A2");
    typeInto(b, "B", 80);
  });
  try {
    let edited = false;
    a.repo.on("change", (change) => {
      if (change.key !== "A" || edited) return;
      edited = true;
      a.repo.get("B", Task)!.insertText("notes", 0, "[listener]");
    });
    assertClean(await exchange(b, a), "b → a");
    assert.ok(edited);
    assertClean(await exchange(a, b), "a → b");
    const notes = [a, b].map((peer) => peer.repo.get("B", Task)!.get("notes"));
    assert.ok(notes[0]!.startsWith("[listener]hello"), String(notes[0]));
    assert.equal(notes[1], notes[0]);
  } finally {
    await closePeers([a, b]);
  }
});

test("a text edited twice in one block with another item between: a listener reads it as each change left it", async () => {
  const seen: string[] = [];
  const { a, b } = await blockOfEdits((b) => {
    typeInto(b, "B", 70);
    seen.push(b.repo.get("B", Task)!.get("notes")!);
    b.repo.get("A", Task)!.set("title", "A2");
    typeInto(b, "B", 70);
    seen.push(b.repo.get("B", Task)!.get("notes")!);
  });
  try {
    const read: string[] = [];
    a.repo.on("change", (change) => {
      if (change.key === "B") read.push(a.repo.get("B", Task)!.get("notes")!);
    });
    assertClean(await exchange(b, a), "b → a");
    assert.deepEqual(read, seen);
  } finally {
    await closePeers([a, b]);
  }
});
