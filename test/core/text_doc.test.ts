/**
 * The text CRDT against a reference model: replicas edit at random (inserts and deletes of any
 * size, whole-document replacements included), exchange their edits in random causal orders, and
 * must end with the same text, in which every character anyone inserted appears exactly once
 * unless someone deleted it, and characters never change their order relative to each other.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { isCairnError } from "../../src/core/errors.ts";
import { baseSession, PendingEdits, TextDoc } from "../../src/core/text/text_doc.ts";
import {
  type CharId,
  type TextOp,
  textOpsFromWire,
  textOpsToWire,
} from "../../src/core/text/text_ops.ts";
import { sha256 } from "../../src/core/text/sha256.ts";
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

  /** Whether `edit` can apply once `before` earlier edits of its author (a block) have. */
  canApply(edit: Edit, before = 0): boolean {
    return this.applied[edit.author] + before === edit.number - 1 &&
      edit.seen.every((count, replica) =>
        replica === edit.author || this.applied[replica] >= count
      );
  }

  /**
   * Receives a block: consecutive edits of one author, all checked before any applies (later ones
   * name what earlier ones insert), as a block of commits is.
   */
  receive(block: readonly Edit[], sessions: readonly string[]): void {
    if (block.length === 0) return;
    // Through the wire form, as commits carry them.
    const session = sessions[block[0].author];
    const ops = block.flatMap((edit) =>
      textOpsFromWire(textOpsToWire(edit.ops, session), session, "edit")
    );
    const pending = new PendingEdits();
    for (const op of ops) this.doc.check(op, session, pending);
    for (const op of ops) this.doc.apply(op, session);
    this.applied[block[0].author] += block.length;
  }

  /** Receives some of the other replicas' edits that it can apply, in causal order, in blocks. */
  receiveSomeOf(replicas: readonly Replica[], random: () => number, sessions: readonly string[]) {
    for (const other of replicas) {
      if (other === this) continue;
      let block: Edit[] = [];
      for (const edit of other.edits) {
        if (random() < 0.7 && this.canApply(edit, block.length)) block.push(edit);
        else if (block.length > 0) {
          this.receive(block, sessions);
          block = [];
        }
      }
      this.receive(block, sessions);
    }
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
        // Receive some of the other replicas' edits, in causal order, in blocks.
        replica.receiveSomeOf(replicas, random, sessions);
      }
      orders.push(order(replica.doc));
    }
    // Everyone receives everything.
    for (let progress = true; progress;) {
      progress = false;
      for (const replica of replicas) {
        for (const other of replicas) {
          const block: Edit[] = [];
          for (const edit of other.edits.slice(replica.applied[other.id])) {
            if (!replica.canApply(edit, block.length)) break;
            block.push(edit);
          }
          replica.receive(block, sessions);
          progress ||= block.length > 0;
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
    { kind: "base", text: "old" },
  ];
  const wire = textOpsToWire(ops, "A");
  assert.deepEqual(wire, [[4, "hi", 2, null], [6, "x", null, ["B", 9]], [["B", 1], 3], ["old"]]);
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
      [[""]],
      [[5]],
    ]
  ) {
    assert.throws(
      () => textOpsFromWire(bad, "A", "t"),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      JSON.stringify(bad),
    );
  }
});

/** Every character's identity in document order, deleted ones included. */
function charIds(doc: TextDoc): CharId[] {
  const ids: CharId[] = [];
  for (const run of doc.runs()) {
    for (let i = 0; i < run.length; i++) ids.push({ session: run.session, clock: run.clock + i });
  }
  return ids;
}

/** Checks `ops` by `session` as one block: E_BAD_COMMIT, or nothing (and the block applies). */
function tryBlock(doc: TextDoc, ops: readonly TextOp[], session: string, where = ""): boolean {
  const text = doc.text;
  const pending = new PendingEdits();
  try {
    for (const op of ops) doc.check(op, session, pending);
  } catch (err) {
    assert.ok(isCairnError(err, "E_BAD_COMMIT"), `${where}: ${err}`);
    assert.equal(doc.text, text, `${where}: a refused block changes nothing`);
    return false;
  }
  for (const op of ops) doc.apply(op, session);
  return true;
}

test("text CRDT: a peer's edit that would split a surrogate pair, or insert a lone surrogate, is refused", () => {
  const doc = new TextDoc();
  doc.insert(0, "a😀b", "A", 1); // a: 1, the pair: 2 and 3, b: 4
  const a = (clock: number): CharId => ({ session: "A", clock });
  const b = (clock: number): CharId => ({ session: "B", clock });
  const insert = (clock: number, text: string, left: CharId | null, right: CharId | null) =>
    ({ kind: "insert", clock, text, left, right }) as const;
  const remove = (from: CharId, length: number) => ({ kind: "delete", from, length }) as const;
  const check = (ops: TextOp[]) => {
    const pending = new PendingEdits();
    for (const op of ops) doc.check(op, "B", pending);
  };
  const refused: [TextOp[], string][] = [
    [[remove(a(3), 1)], "the low half alone"],
    [[remove(a(2), 1)], "the high half alone"],
    [[remove(a(1), 2)], "a and the high half"],
    [[remove(a(3), 2)], "the low half and b"],
    [[insert(1, "x", a(2), a(3))], "between the halves"],
    [[insert(1, "x", a(2), a(4))], "after the high half"],
    [[insert(1, "x", a(1), a(3))], "before the low half"],
    [[insert(1, "x\ud83d", a(1), a(2))], "a lone high surrogate"],
    [[insert(1, "\ude00", a(4), null)], "a lone low surrogate"],
    [[insert(1, "🙂", a(4), null), remove(b(2), 1)], "half a pair the block inserted"],
    [[insert(1, "🙂", a(4), null), insert(3, "x", b(1), b(2))], "inside a pair the block inserted"],
  ];
  for (const [ops, why] of refused) {
    assert.throws(() => check(ops), (err) => isCairnError(err, "E_BAD_COMMIT"), why);
  }
  assert.equal(doc.text, "a😀b", "nothing applied");
  // Edits beside a pair, or of a whole pair, apply.
  check([remove(a(2), 2)]);
  check([insert(1, "x", a(1), a(2)), insert(2, "y", a(3), a(4))]);
  check([insert(1, "🙂", a(4), null), remove(b(1), 2), insert(3, "x", b(2), null)]);
  // Half of a pair deleted here already: there is nothing left to split.
  doc.delete(1, 2);
  assert.ok(tryBlock(doc, [remove(a(3), 1)], "B"));
  assert.equal(doc.text, "ab");
});

test(`text CRDT: random peer edits around surrogate pairs never leave a lone surrogate (seed ${SEED})`, () => {
  const texts = ["x", "😀", "ab😀", "😀😀c", "\ud83d", "\ude00", "x\ud83d"];
  for (let round = 0; round < 200; round++) {
    const seed = SEED + round;
    const random = seededRandom(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const doc = new TextDoc();
    // An honest writer's text, full of pairs, some deleted.
    for (let i = 0; i < 12; i++) {
      const at = doc.text.length === 0 ? 0 : pick(boundaries(doc.text));
      doc.insert(at, pick(texts.slice(0, 4)), "A", doc.nextClock("A"));
      if (random() < 0.3) {
        const ends = boundaries(doc.text);
        const from = pick(ends);
        doc.delete(from, pick(ends.filter((end) => end >= from)) - from);
      }
    }
    // A peer's blocks of edits naming any character: each refused, or applied.
    for (let block = 0; block < 30; block++) {
      const scratch = TextDoc.fromRuns(doc.runs());
      const ops: TextOp[] = [];
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
        const ids = charIds(scratch);
        let op: TextOp;
        if (random() < 0.4 && ids.length > 0) {
          const from = pick(ids);
          const run = [...scratch.runs()].find((r) =>
            r.session === from.session && r.clock <= from.clock && from.clock < r.clock + r.length
          )!;
          op = {
            kind: "delete",
            from,
            length: 1 + Math.floor(random() * (run.clock + run.length - from.clock)),
          };
        } else {
          const at = Math.floor(random() * (ids.length + 1));
          op = {
            kind: "insert",
            clock: scratch.nextClock("P"),
            text: pick(texts),
            left: at === 0 ? null : ids[at - 1],
            right: at === ids.length ? null : ids[at],
          };
        }
        ops.push(op);
        scratch.apply(op, "P");
      }
      const where = `seed ${seed}, block ${block}`;
      tryBlock(doc, ops, "P", where);
      assert.ok(doc.text.isWellFormed(), `${where}: ${JSON.stringify(doc.text)}`);
      assert.equal(TextDoc.fromRuns(doc.runs()).text, doc.text, `${where}: stored runs`);
    }
  }
});

/** The positions in `text` that split no surrogate pair. */
function boundaries(text: string): number[] {
  const ends = [0];
  for (const char of text) ends.push(ends[ends.length - 1] + char.length);
  return ends;
}

test(`text CRDT: an insert whose right origin does not stand after its left one is refused on every replica (seed ${SEED})`, () => {
  for (let schedule = 0; schedule < 300; schedule++) {
    const seed = SEED + schedule;
    const random = seededRandom(seed);
    const count = 2 + Math.floor(random() * 3);
    const sessions = Array.from({ length: count }, (_, i) => `s${(i * 7 + schedule) % 10}x${i}`);
    const replicas = sessions.map((session, i) => new Replica(i, session, count));
    /** Blocks crafted by hostile sessions, each with what its author had seen. */
    const hostile: { ops: TextOp[]; session: string; seen: number[]; tried: Set<number> }[] = [];
    const where = `seed ${seed}`;
    const tryHostile = (replica: Replica) => {
      for (const block of hostile) {
        if (block.tried.has(replica.id)) continue;
        if (!block.seen.every((seen, i) => replica.applied[i] >= seen)) continue;
        block.tried.add(replica.id);
        assert.equal(tryBlock(replica.doc, block.ops, block.session, where), false, where);
      }
    };
    const steps = 10 + Math.floor(random() * 40);
    for (let step = 0; step < steps; step++) {
      const replica = replicas[Math.floor(random() * count)];
      const pick = random();
      if (pick < 0.45) replica.edit(random, new Map());
      else if (pick < 0.65 && replica.doc.text.length > 0) {
        // A hostile block made from this replica's text, maybe after an insert of its own.
        const session = `h${hostile.length}`;
        const scratch = TextDoc.fromRuns(replica.doc.runs());
        const ops: TextOp[] = [];
        if (random() < 0.5) {
          const at = Math.floor(random() * (scratch.text.length + 1));
          ops.push(scratch.insert(at, word(random, 1 + Math.floor(random() * 3)), session, 1));
        }
        const ids = charIds(scratch);
        const rightAt = Math.floor(random() * ids.length);
        const leftAt = rightAt + Math.floor(random() * (ids.length - rightAt)); // at or after it
        ops.push({
          kind: "insert",
          clock: scratch.nextClock(session),
          text: "!",
          left: ids[leftAt],
          right: ids[rightAt],
        });
        hostile.push({ ops, session, seen: [...replica.applied], tried: new Set() });
        tryHostile(replica);
      } else {
        replica.receiveSomeOf(replicas, random, sessions);
        tryHostile(replica);
      }
    }
    for (let progress = true; progress;) {
      progress = false;
      for (const replica of replicas) {
        for (const other of replicas) {
          const next = other.edits[replica.applied[other.id]];
          if (next !== undefined && replica.canApply(next)) {
            replica.receive([next], sessions);
            progress = true;
          }
        }
      }
    }
    for (const replica of replicas) {
      tryHostile(replica);
      assert.equal(replica.doc.text, replicas[0].doc.text, `${where}: converges`);
    }
    assert.ok(hostile.every((block) => block.tried.size === count), where);
  }
});

test("text CRDT: an insert applied with origins out of order still lands after its left origin", () => {
  // Refused by check(); apply() must not misplace it either (a split of one origin's run must
  // not move the other).
  for (const [left, right] of [[3, 2], [2, 2], [4, 1]]) {
    const doc = new TextDoc();
    doc.insert(0, "abcd", "A", 1);
    doc.apply({
      kind: "insert",
      clock: 1,
      text: "X",
      left: { session: "A", clock: left },
      right: { session: "A", clock: right },
    }, "B");
    const text = doc.text;
    assert.ok(text.indexOf("X") >= left, `after character ${left}: ${text}`);
    assert.equal(text.replace("X", ""), "abcd");
    assert.equal(TextDoc.fromRuns(doc.runs()).text, text);
  }
});

test("text CRDT: a base text applies once, whoever sends it; another text is kept beside it", () => {
  const start = (session: string, edit: (doc: TextDoc) => TextOp) => {
    const doc = new TextDoc();
    return { doc, ops: [doc.base("shared text"), edit(doc)], session };
  };
  // Three peers start the document from one old string at once, each with an edit of its own.
  const peers = [
    start("A", (doc) => doc.insert(0, "A:", "A", 1)),
    start("B", (doc) => doc.insert(11, "!", "B", 1)),
    start("C", (doc) => doc.delete(0, 7)[0]),
  ];
  for (const { doc } of peers) {
    for (const other of peers) {
      if (other.doc !== doc) assert.ok(tryBlock(doc, other.ops, other.session), other.session);
    }
  }
  for (const { doc } of peers) assert.equal(doc.text, "A:text!");
  // A peer that started from another version of the old text: both versions are kept.
  const other = new TextDoc();
  const ops = [other.base("shared text v2")];
  for (const { doc } of peers) assert.ok(tryBlock(doc, ops, "D"));
  assert.ok(peers.every(({ doc }) => doc.text === peers[0].doc.text));
  assert.equal(peers[0].doc.text.length, "A:text!".length + "shared text v2".length);
  // Twice in one block, it applies once; a lone surrogate in it is refused.
  const doc = new TextDoc();
  assert.ok(tryBlock(doc, [{ kind: "base", text: "x" }, { kind: "base", text: "x" }], "E"));
  assert.equal(doc.text, "x");
  assert.equal(tryBlock(doc, [{ kind: "base", text: "\ud83d" }], "E"), false);
  // Its characters' session: derived from the text alone, and never a peer's session id.
  assert.equal(baseSession("shared text"), baseSession("shared text"));
  assert.notEqual(baseSession("shared text"), baseSession("shared text v2"));
  assert.match(baseSession("shared text"), /^~[A-Za-z0-9_-]{22}$/);
});

test("text CRDT: the synchronous SHA-256 that names base texts matches WebCrypto's", async () => {
  const random = seededRandom(SEED);
  for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 70_000]) {
    const data = Uint8Array.from({ length }, () => Math.floor(random() * 256));
    const expected = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
    assert.deepEqual(sha256(data), expected, `${length} bytes`);
  }
});
