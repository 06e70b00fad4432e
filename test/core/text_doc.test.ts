/**
 * The text CRDT against a reference model: replicas edit at random (inserts and deletes of any
 * size, whole-document replacements included), exchange their edits in random causal orders, and
 * must end with the same text, in which every character anyone inserted appears exactly once
 * unless someone deleted it, and characters never change their order relative to each other.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { TextDoc } from "../../src/core/text/text_doc.ts";
import {
  type CharId,
  type TextOp,
  textOpsFromWire,
  textOpsToWire,
} from "../../src/core/text/text_ops.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

const SCHEDULES = envInteger("CAIRN_TEXT_FUZZ") ?? 1000;
const SEED = envInteger("CAIRN_TEXT_FUZZ_SEED") ?? 20261125;

/** One replica's edit: its operations, and how many edits of each replica it had seen. */
interface Edit {
  readonly author: number;
  readonly number: number;
  readonly ops: readonly TextOp[];
  readonly seen: readonly number[];
}

class Replica {
  readonly doc = new TextDoc();
  /** How many edits of each replica are applied here. */
  readonly applied: number[];
  readonly edits: Edit[] = [];
  readonly id: number;
  readonly session: string;

  constructor(id: number, session: string, replicas: number) {
    this.id = id;
    this.session = session;
    this.applied = new Array(replicas).fill(0);
  }

  edit(random: () => number, inserted: Map<string, string>): Edit {
    const ops: TextOp[] = [];
    const length = this.doc.text.length;
    const pick = random();
    if (pick < 0.15 && length > 0) {
      // Replace the whole document.
      ops.push(...this.doc.delete(0, length));
      ops.push(this.#insert(0, word(random, 1 + Math.floor(random() * 30)), inserted));
    } else if (pick < 0.45 && length > 0) {
      const at = Math.floor(random() * length);
      const count = 1 + Math.floor(random() * Math.min(length - at, random() < 0.2 ? 200 : 5));
      ops.push(...this.doc.delete(at, count));
    } else {
      const at = Math.floor(random() * (length + 1));
      const size = random() < 0.1 ? 50 + Math.floor(random() * 500) : 1 + Math.floor(random() * 4);
      ops.push(this.#insert(at, word(random, size), inserted));
    }
    const edit = { author: this.id, number: this.edits.length + 1, ops, seen: [...this.applied] };
    this.applied[this.id]++;
    this.edits.push(edit);
    return edit;
  }

  #insert(at: number, text: string, inserted: Map<string, string>): TextOp {
    const clock = this.doc.nextClock(this.session);
    for (let i = 0; i < text.length; i++) inserted.set(`${this.session}:${clock + i}`, text[i]);
    return this.doc.insert(at, text, this.session, clock);
  }

  canApply(edit: Edit): boolean {
    return this.applied[edit.author] === edit.number - 1 &&
      edit.seen.every((count, replica) => this.applied[replica] >= count);
  }

  receive(edit: Edit, sessions: readonly string[]): void {
    // Through the wire form, as commits carry them.
    const session = sessions[edit.author];
    const ops = textOpsFromWire(textOpsToWire(edit.ops, session), session, "edit");
    for (const op of ops) this.doc.check(op, session);
    for (const op of ops) this.doc.apply(op, session);
    this.applied[edit.author]++;
  }
}

function word(random: () => number, size: number): string {
  let text = "";
  for (let i = 0; i < size; i++) text += String.fromCharCode(97 + Math.floor(random() * 26));
  return text;
}

/** Every character's identity in document order, deleted ones included. */
function order(doc: TextDoc): string[] {
  const ids: string[] = [];
  for (const run of doc.runs()) {
    for (let i = 0; i < run.length; i++) ids.push(`${run.session}:${run.clock + i}`);
  }
  return ids;
}

/** The visible characters' identities in document order. */
function visible(doc: TextDoc): string[] {
  const ids: string[] = [];
  for (const run of doc.runs()) {
    if (run.content === undefined) continue;
    for (let i = 0; i < run.length; i++) ids.push(`${run.session}:${run.clock + i}`);
  }
  return ids;
}

function isSubsequence(part: readonly string[], whole: readonly string[]): boolean {
  let at = 0;
  for (const id of part) {
    while (at < whole.length && whole[at] !== id) at++;
    if (at === whole.length) return false;
    at++;
  }
  return true;
}

test(`text CRDT: ${SCHEDULES} random schedules of 2–5 replicas converge to the model (seed ${SEED})`, () => {
  for (let schedule = 0; schedule < SCHEDULES; schedule++) {
    const seed = SEED + schedule;
    const random = seededRandom(seed);
    const count = 2 + Math.floor(random() * 4);
    const sessions = Array.from({ length: count }, (_, i) => `s${(i * 7 + schedule) % 10}x${i}`);
    const replicas = sessions.map((session, i) => new Replica(i, session, count));
    const inserted = new Map<string, string>();
    const deleted = new Set<string>();
    const orders: string[][] = [];
    const steps = 5 + Math.floor(random() * 40);
    for (let step = 0; step < steps; step++) {
      const replica = replicas[Math.floor(random() * count)];
      if (random() < 0.6) {
        const edit = replica.edit(random, inserted);
        for (const op of edit.ops) {
          if (op.kind === "delete") {
            for (let i = 0; i < op.length; i++) {
              deleted.add(`${op.from.session}:${op.from.clock + i}`);
            }
          }
        }
      } else {
        // Receive some of another replica's edits, in causal order.
        const from = replicas[Math.floor(random() * count)];
        for (const other of replicas) {
          for (const edit of other.edits) {
            if (random() < 0.7 && from !== replica && replica.canApply(edit)) {
              replica.receive(edit, sessions);
            }
          }
        }
      }
      orders.push(order(replica.doc));
    }
    // Everyone receives everything.
    for (let progress = true; progress;) {
      progress = false;
      for (const replica of replicas) {
        for (const other of replicas) {
          for (const edit of other.edits) {
            if (replica.canApply(edit)) {
              replica.receive(edit, sessions);
              progress = true;
            }
          }
        }
      }
    }
    const where = `seed ${seed}`;
    const final = replicas[0].doc;
    for (const replica of replicas) {
      assert.equal(replica.doc.text, final.text, `${where}: replica ${replica.id} converges`);
      assert.deepEqual(order(replica.doc), order(final), where);
    }
    const expected = [...inserted.keys()].filter((id) => !deleted.has(id));
    const shown = visible(final);
    assert.deepEqual([...shown].sort(), expected.sort(), `${where}: each character once`);
    assert.equal(final.text, shown.map((id) => inserted.get(id)).join(""), where);
    for (const seen of orders) {
      assert.ok(isSubsequence(seen, order(final)), `${where}: an order seen is never changed`);
    }
  }
});

test("text CRDT: one writer's edits give exactly what string splicing gives", () => {
  const random = seededRandom(SEED);
  const doc = new TextDoc();
  let model = "";
  for (let i = 0; i < 3000; i++) {
    if (random() < 0.3 && model.length > 0) {
      const at = Math.floor(random() * model.length);
      const count = 1 + Math.floor(random() * Math.min(10, model.length - at));
      doc.delete(at, count);
      model = model.slice(0, at) + model.slice(at + count);
    } else {
      const at = Math.floor(random() * (model.length + 1));
      const text = word(random, 1 + Math.floor(random() * 3));
      doc.insert(at, text, "me", doc.nextClock("me"));
      model = model.slice(0, at) + text + model.slice(at);
    }
    assert.equal(doc.text, model);
  }
});

/** `count` random edits by `session` on `doc`, at scattered places; returns their operations. */
function scatteredEdits(doc: TextDoc, session: string, random: () => number, count: number) {
  const ops: TextOp[] = [];
  for (let i = 0; i < count; i++) {
    const length = doc.text.length;
    if (random() < 0.3 && length > 0) {
      const at = Math.floor(random() * length);
      ops.push(...doc.delete(at, 1 + Math.floor(random() * Math.min(5, length - at))));
    } else {
      const at = Math.floor(random() * (length + 1));
      ops.push(
        doc.insert(at, word(random, 1 + Math.floor(random() * 2)), session, doc.nextClock(session)),
      );
    }
  }
  return ops;
}

test("text CRDT: thousands of runs edited at scattered places, applied remotely in either order, converge", () => {
  // Far more runs than a walk from the last edit reaches: positions come from the run index.
  const random = seededRandom(SEED + 7);
  const a = new TextDoc();
  const b = new TextDoc();
  const shared = scatteredEdits(a, "A", random, 1500);
  for (const op of shared) b.apply(op, "A");
  assert.equal(b.text, a.text, "a peer applying one writer's edits has its text");
  assert.ok([...a.runs()].length > 1000, "the edits made over a thousand runs");
  const fromA = scatteredEdits(a, "A", random, 1500);
  const fromB = scatteredEdits(b, "B", random, 1500);
  for (const op of fromB) a.apply(op, "B");
  for (const op of fromA) b.apply(op, "A");
  assert.equal(a.text, b.text);
  // A third replica taking everything in another order, and one reloaded from stored runs.
  const c = new TextDoc();
  for (const op of shared) c.apply(op, "A");
  for (const op of fromB) c.apply(op, "B");
  for (const op of fromA) c.apply(op, "A");
  assert.equal(c.text, a.text);
  assert.equal(TextDoc.fromRuns(a.runs()).text, a.text);
});

test("text CRDT: typing in one place keeps one run; concurrent inserts at one place do not interleave", () => {
  const a = new TextDoc();
  let ops: TextOp[] = [];
  for (const char of "hello") ops.push(a.insert(a.text.length, char, "A", a.nextClock("A")));
  assert.equal([...a.runs()].length, 1, "five keystrokes, one run");
  const b = new TextDoc();
  for (const op of ops) b.apply(op, "A");
  // Both type a word at the end, concurrently.
  ops = [];
  for (const char of " world") ops.push(a.insert(a.text.length, char, "A", a.nextClock("A")));
  const theirs: TextOp[] = [];
  for (const char of " there") theirs.push(b.insert(b.text.length, char, "B", b.nextClock("B")));
  for (const op of theirs) a.apply(op, "B");
  for (const op of ops) b.apply(op, "A");
  assert.equal(a.text, b.text);
  assert.ok(["hello world there", "hello there world"].includes(a.text), a.text);
});

test("text CRDT: edits that name characters the document lacks, or reuse clocks, are refused", () => {
  const doc = new TextDoc();
  doc.insert(0, "abc", "A", 1);
  const missing: CharId = { session: "Z", clock: 5 };
  const refused = (op: TextOp, session: string) =>
    assert.throws(() => doc.check(op, session), (err) => isCairnError(err, "E_BAD_COMMIT"));
  refused({ kind: "insert", clock: 1, text: "x", left: missing, right: null }, "B");
  refused({ kind: "insert", clock: 2, text: "x", left: null, right: null }, "A");
  refused({ kind: "delete", from: { session: "A", clock: 3 }, length: 2 }, "B");
  assert.throws(() => doc.insert(9, "x", "A", 4), (err) => isCairnError(err, "E_BAD_ARGUMENT"));
  const pair = new TextDoc();
  pair.insert(0, "a😀b", "A", 1);
  assert.throws(() => pair.insert(2, "x", "A", 5), (err) => isCairnError(err, "E_BAD_ARGUMENT"));
  assert.throws(() => pair.delete(1, 1), (err) => isCairnError(err, "E_BAD_ARGUMENT"));
});

test("text edits: the wire form round-trips, and hostile shapes are E_CORRUPT_ENCODING", () => {
  const ops: TextOp[] = [
    { kind: "insert", clock: 4, text: "hi", left: { session: "A", clock: 2 }, right: null },
    { kind: "insert", clock: 6, text: "x", left: null, right: { session: "B", clock: 9 } },
    { kind: "delete", from: { session: "B", clock: 1 }, length: 3 },
  ];
  const wire = textOpsToWire(ops, "A");
  assert.deepEqual(wire, [[4, "hi", 2, null], [6, "x", null, ["B", 9]], [["B", 1], 3]]);
  assert.deepEqual(textOpsFromWire(wire, "A", "t"), ops);
  for (
    const bad of [
      [],
      "text",
      [[1, "", null, null]],
      [[0, "a", null, null]],
      [[1.5, "a", null, null]],
      [[1, "a", "x", null]],
      [[1, "a", ["", 1], null]],
      [[["B", 1], 0]],
      [[null, 2]],
      [[2 ** 48, "a", null, null]],
      [[1, 2, 3]],
    ]
  ) {
    assert.throws(
      () => textOpsFromWire(bad, "A", "t"),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      JSON.stringify(bad),
    );
  }
});
