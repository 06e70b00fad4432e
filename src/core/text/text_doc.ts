/**
 * A text field's sequence CRDT: every character ever inserted, in document order, each with its
 * identity (text_ops.ts), deleted ones kept as tombstones (without their text) so that later
 * edits can still name them. Concurrent inserts at one place are ordered by YATA, the rule Yjs
 * uses (docs/merge-rules.md says why and how they interleave): every replica that has applied the
 * same operations, in any causal order, holds the same text.
 *
 * Characters are held in runs: characters one session typed one after another (consecutive
 * clocks, each typed right after the previous one) share one run object, so a typed word costs one
 * run, not one per keystroke. A run is split when an edit lands inside it. Runs form a doubly
 * linked list in document order; per session they are also kept sorted by clock, so a character
 * named by an operation is found by binary search. Positions are found by walking from the last
 * place an edit touched (`#cursor`) when it is near, as it is while one user types; otherwise
 * through groups of runs that count their visible characters (run_index.ts).
 *
 * Positions are UTF-16 code units, as JavaScript strings and editors count them. An edit may not
 * split a surrogate pair.
 */
import { CairnError } from "../errors.ts";
import { ChunkedText } from "./chunked_text.ts";
import { type RunGroup, RunIndex } from "./run_index.ts";
import { toBase64Url } from "../bytes.ts";
import { sha256 } from "./sha256.ts";
import {
  type BaseOp,
  type CharId,
  type DeleteOp,
  type InsertOp,
  sameChar,
  type TextOp,
} from "./text_ops.ts";

/** A change of the visible text: at `index`, `deleted` code units removed, then `inserted` put. */
export interface TextChange {
  readonly index: number;
  readonly deleted: number;
  readonly inserted: string;
}

/**
 * What the author of an edit had seen when it made it (the commits it followed, and its own
 * earlier operations): whether it held any of `session`'s characters with clocks from `from` up
 * to, not including, `end`.
 */
export interface AuthorView {
  /** Whether the author had seen any of `session`'s characters from clock `from` up to `end`. */
  sawAny(session: string, from: number, end: number): boolean;
  /** Whether it had seen all of them. */
  sawAll(session: string, from: number, end: number): boolean;
}

/** Runs a walk from the cursor passes, each way, before the index answers instead. */
const NEAR = 32;

/**
 * Pending inserts beyond which a check that needs where they land copies the whole document
 * rather than a part of it (TextDoc.#placed): working out the part costs each of them.
 */
const PART_LIMIT = 64;

class Run {
  readonly session: string;
  readonly clock: number;
  /** The characters' text; "" once they are deleted (the length is kept for their identities). */
  content: string;
  length: number;
  deleted: boolean;
  /** The character this run's first one was typed after, and the one that followed it then. */
  readonly left: CharId | null;
  readonly right: CharId | null;
  prev: Run | null = null;
  next: Run | null = null;
  group: RunGroup | undefined = undefined;

  constructor(
    session: string,
    clock: number,
    content: string,
    length: number,
    deleted: boolean,
    left: CharId | null,
    right: CharId | null,
  ) {
    this.session = session;
    this.clock = clock;
    this.content = content;
    this.length = length;
    this.deleted = deleted;
    this.left = left;
    this.right = right;
  }

  get visible(): number {
    return this.deleted ? 0 : this.length;
  }

  get end(): number {
    return this.clock + this.length;
  }

  first(): CharId {
    return { session: this.session, clock: this.clock };
  }

  last(): CharId {
    return { session: this.session, clock: this.clock + this.length - 1 };
  }

  stored(): StoredRun {
    const { session, clock, length, left, right } = this;
    return {
      session,
      clock,
      length,
      content: this.deleted ? undefined : this.content,
      left,
      right,
    };
  }
}

/** An insert checked but not applied yet: its characters' clocks, text and origins. */
interface PendingInsert {
  readonly from: number;
  readonly end: number;
  readonly text: string;
  readonly left: CharId | null;
  readonly right: CharId | null;
}

/**
 * Operations on one document checked but not applied yet: the earlier commits of a block being
 * checked (and the earlier operations of a commit), which later ones may name. What they insert
 * is kept by session and clock; the document as it will be once they apply is made only when a
 * check needs where their characters will stand (TextDoc.check), and kept up to date after.
 */
export class PendingEdits {
  /** Per session, sorted by clock (a session's inserts take ever larger clocks). */
  readonly #inserts = new Map<string, PendingInsert[]>();
  readonly #ops: { op: TextOp; session: string }[] = [];
  /** The inserts recorded, in order, each with the session its characters are named after. */
  readonly #inserted: { op: InsertOp; session: string }[] = [];
  #base = false;
  #applied: TextDoc | undefined;
  /** The document applied() copied, and its text then (a new value per edit: see standsFor). */
  #source: TextDoc | undefined;
  #sourceText: ChunkedText | undefined;
  /** What each recorded operation changed in the copy applied() made, in order. */
  readonly #changes: TextChange[][] = [];
  /** How many of those were taken (takeChanges). */
  #taken = 0;

  /** Records an operation TextDoc.check accepted. */
  add(op: TextOp, session: string): void {
    if (op.kind === "insert") this.#addInsert(session, op);
    else if (op.kind === "base") {
      this.#base = true;
      const base = baseSession(op.text);
      if (this.insertHolding({ session: base, clock: 1 }) === undefined) {
        this.#addInsert(base, baseInsert(op.text));
      }
    }
    if (this.#applied) this.#changes.push(this.#applied.apply(op, session));
    else this.#ops.push({ op, session });
  }

  #addInsert(session: string, op: InsertOp): void {
    const { clock: from, text, left, right } = op;
    this.#inserted.push({ op, session });
    const insert = { from, end: from + text.length, text, left, right };
    const inserts = this.#inserts.get(session);
    if (inserts) inserts.push(insert);
    else this.#inserts.set(session, [insert]);
  }

  nextClock(session: string): number {
    return this.#inserts.get(session)?.at(-1)?.end ?? 0;
  }

  /** The inserts recorded, in order, each with the session its characters are named after. */
  get inserted(): readonly { readonly op: InsertOp; readonly session: string }[] {
    return this.#inserted;
  }

  /** Whether a base was recorded. */
  get holdsBase(): boolean {
    return this.#base;
  }

  /**
   * The document applied() made, if it was called. It holds every recorded operation: once the
   * block they came from is accepted, it can stand in for the document they were checked
   * against, which then needs none of them applied again (TextFields.apply).
   */
  get appliedCopy(): TextDoc | undefined {
    return this.#applied;
  }

  /** How many recorded operations takeChanges has not handed out yet. */
  get untaken(): number {
    return (this.#applied ? this.#changes.length : this.#ops.length) - this.#taken;
  }

  /**
   * Whether appliedCopy can stand in for `doc`: it was copied from `doc`, and nothing has edited
   * `doc` since (a change listener may have, between a block's commits).
   */
  standsFor(doc: TextDoc): boolean {
    return doc === this.#source && doc.value === this.#sourceText;
  }

  /** What the next `count` recorded operations changed in appliedCopy, in order. */
  takeChanges(count: number): TextChange[] {
    const taken = this.#changes.slice(this.#taken, this.#taken + count).flat();
    this.#taken += count;
    return taken;
  }

  /** The pending insert that holds character `id`, if any. */
  insertHolding(id: CharId): PendingInsert | undefined {
    const inserts = this.#inserts.get(id.session);
    if (inserts === undefined) return undefined;
    let low = 0;
    let high = inserts.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const insert = inserts[mid];
      if (id.clock < insert.from) high = mid - 1;
      else if (id.clock >= insert.end) low = mid + 1;
      else return insert;
    }
    return undefined;
  }

  /** `doc` with every recorded operation applied: a copy, made on the first call. */
  applied(doc: TextDoc): TextDoc {
    if (this.#applied === undefined) {
      this.#source = doc;
      this.#sourceText = doc.value;
      this.#applied = doc.copy();
      for (const { op, session } of this.#ops) {
        this.#changes.push(this.#applied.apply(op, session));
      }
      this.#ops.length = 0;
    }
    return this.#applied;
  }
}

/**
 * A part of a document with a block's pending inserts applied (TextDoc.#placed): the runs from
 * `from` to `to` (null: the start, the end), and how many of the pending inserts it has taken
 * into account (applied, or found to land outside it).
 */
interface Part {
  readonly from: CharId | null;
  readonly to: CharId | null;
  readonly doc: TextDoc;
  applied: number;
}

/** The last part made for each block's pending edits. */
const parts = new WeakMap<PendingEdits, Part>();

/** One run as stored in a checkpoint (text_doc_codec.ts). */
export interface StoredRun {
  readonly session: string;
  readonly clock: number;
  readonly length: number;
  /** The run's text, or undefined when its characters are deleted. */
  readonly content: string | undefined;
  readonly left: CharId | null;
  readonly right: CharId | null;
}

export class TextDoc {
  #head: Run | null = null;
  /** The visible text; a new one per edit (chunked_text.ts), so it is never copied whole. */
  #text: ChunkedText = ChunkedText.EMPTY;
  /** Each session's runs, sorted by clock. */
  readonly #bySession = new Map<string, Run[]>();
  /** The run an edit touched last and the number of visible characters before it. */
  #cursor: { run: Run; index: number } | undefined;
  readonly #index = new RunIndex<Run>();

  /** The visible text. */
  get text(): string {
    return this.#text.toString();
  }

  /**
   * The visible text as of now, to be read later: a value that later edits do not change, made
   * into a string only when read.
   */
  get value(): ChunkedText {
    return this.#text;
  }

  /** Whether any character was ever inserted, even one deleted since (false: made empty, never edited). */
  get edited(): boolean {
    return this.#head !== null;
  }

  /** The clock a new insert by `session` starts at: after every character it has typed. */
  nextClock(session: string): number {
    const runs = this.#bySession.get(session);
    return runs === undefined ? 1 : runs[runs.length - 1].end;
  }

  /** Every run in document order (for a checkpoint). */
  *runs(): IterableIterator<StoredRun> {
    for (let run = this.#head; run !== null; run = run.next) yield run.stored();
  }

  /** A document made of stored runs, in document order (checked by the caller). */
  static fromRuns(stored: Iterable<StoredRun>): TextDoc {
    const doc = new TextDoc();
    let last: Run | null = null;
    const parts: string[] = [];
    for (const { session, clock, length, content, left, right } of stored) {
      const run = new Run(
        session,
        clock,
        content ?? "",
        length,
        content === undefined,
        left,
        right,
      );
      doc.#link(run, last);
      doc.#file(run);
      if (content !== undefined) parts.push(content);
      last = run;
    }
    for (const runs of doc.#bySession.values()) runs.sort((a, b) => a.clock - b.clock);
    doc.#text = ChunkedText.from(parts.join(""));
    return doc;
  }

  /** A copy whose edits leave this document as it is (to try operations on: PendingEdits). */
  copy(): TextDoc {
    const copy = new TextDoc();
    const copies = new Map<Run, Run>();
    let last: Run | null = null;
    for (let run = this.#head; run !== null; run = run.next) {
      const { session, clock, content, length, deleted, left, right } = run;
      const made = new Run(session, clock, content, length, deleted, left, right);
      copy.#link(made, last);
      copies.set(run, made);
      last = made;
    }
    for (const [session, runs] of this.#bySession) {
      copy.#bySession.set(session, runs.map((run) => copies.get(run)!));
    }
    copy.#text = this.#text;
    return copy;
  }

  // ── local edits: by position; each returns the operation a commit carries ────────────────

  /** Inserts `text` at `index` as `session`'s characters from `clock` on. */
  insert(index: number, text: string, session: string, clock: number): InsertOp {
    this.#checkPosition(index, "index");
    let left: Run | null = null;
    if (index > 0) {
      const { run, offset } = this.#locate(index - 1);
      if (offset < run.length - 1) this.#split(run, offset + 1);
      left = run;
    }
    const right = left === null ? this.#head : left.next;
    const op: InsertOp = {
      kind: "insert",
      clock,
      text,
      left: left?.last() ?? null,
      right: right?.first() ?? null,
    };
    this.#place(op, session, left, index);
    return op;
  }

  /**
   * Starts the document from `text`, a field's whole-string value from before its first edit: its
   * characters are named after the text (`baseSession`), as every replica names them.
   */
  base(text: string): BaseOp {
    const op: BaseOp = { kind: "base", text };
    this.apply(op, "");
    return op;
  }

  /** Deletes `length` visible characters from `index`: one operation per stretch typed in one go. */
  delete(index: number, length: number): DeleteOp[] {
    this.#checkPosition(index, "index");
    this.#checkPosition(index + length, "index + length");
    const ops: { from: CharId; length: number }[] = [];
    if (length === 0) return [];
    let { run, offset } = this.#locate(index);
    if (offset > 0) run = this.#split(run, offset);
    let remaining = length;
    for (let target = run; remaining > 0; target = target.next!) {
      if (target.deleted) continue;
      if (target.length > remaining) this.#split(target, remaining);
      this.#index.resized(target, -target.length);
      target.deleted = true;
      target.content = "";
      remaining -= target.length;
      const previous = ops[ops.length - 1];
      if (
        previous?.from.session === target.session &&
        previous.from.clock + previous.length === target.clock
      ) previous.length += target.length;
      else ops.push({ from: target.first(), length: target.length });
    }
    this.#splice(index, length, "");
    this.#cursor = { run, index };
    return ops.map(({ from, length }) => ({ kind: "delete", from, length }));
  }

  // ── operations from commits ───────────────────────────────────────────────────────────────

  /**
   * Throws E_BAD_COMMIT unless `op`, by `session`, can apply: the characters it names exist (here,
   * or in `pending`: operations checked but not applied yet), an insert's clocks are new for its
   * session and its text (or a base's) is well-formed UTF-16, an insert's right origin stands after
   * its left one, and no edit splits a surrogate pair. Changes nothing; records `op` in `pending`.
   *
   * Given `view`, what the edit's author had seen, an insert's origins must be characters it had
   * seen, and must have been neighbours for it: every character between them here must be one it
   * had not seen (a concurrent insert). YATA places an insert correctly only then; one whose
   * origins skip characters its author held would be placed differently by replicas that hold
   * different concurrent text. The characters an author had seen stand in the same order on every replica,
   * so every replica decides alike.
   *
   * Every replica that checks an operation holds the characters it names, in the same order
   * (characters never change their order), so every replica decides the same way — with one
   * exception: a pair whose characters this replica already deleted cannot be split any more
   * (tombstones keep no text), so an edit at it is accepted here; one that has not deleted them
   * yet refuses it until the deletion arrives. Honest peers never send such an edit.
   */
  check(op: TextOp, session: string, pending = new PendingEdits(), view?: AuthorView): void {
    if (op.kind === "insert") {
      const { left, right } = op;
      if (op.clock < Math.max(this.nextClock(session), pending.nextClock(session))) {
        throw badEdit(`an insert reuses clock ${op.clock} of session ${session}`);
      }
      if (!op.text.isWellFormed()) throw badEdit(`an insert's text holds a lone surrogate`);
      for (const id of [left, right]) {
        if (id !== null && this.#endOfKnown(id, pending) === undefined) {
          throw badEdit(`it names a character it lacks`);
        }
      }
      if (
        (left !== null && this.#splitsPair(left, pending)) ||
        (right !== null && this.#splitsPair(before(right), pending))
      ) throw badEdit(`an insert splits a surrogate pair`);
      if (left !== null && right !== null && !this.#inOrder(left, right, pending)) {
        throw badEdit(`an insert's right origin does not stand after its left origin`);
      }
      if (view !== undefined) {
        // Origins typed in a commit it did not follow: two such inserts into one concurrent
        // insert were ordered by which arrived first (docs/merge-rules.md, "Edits refused").
        for (const id of [left, right]) {
          if (id !== null && !view.sawAny(id.session, id.clock, id.clock + 1)) {
            throw badEdit(`an insert's origin is a character its author had not seen`);
          }
        }
        // The earlier operations of its block may stand between the origins too.
        if (this.#placed(pending, left, right).#seenBetween(left, right, view)) {
          throw badEdit(
            `an insert's origins were not neighbours: its author had seen text between them`,
          );
        }
      }
    } else if (op.kind === "base") {
      // Its characters are new here, or this very text's already (their names come from it).
      if (!op.text.isWellFormed()) throw badEdit(`a base text holds a lone surrogate`);
    } else {
      const { from, length } = op;
      for (let clock = from.clock; clock < from.clock + length;) {
        const end = this.#endOfKnown({ session: from.session, clock }, pending);
        if (end === undefined) throw badEdit(`a delete names a character it lacks`);
        clock = end;
      }
      // Held here but typed concurrently: a replica without that text yet refuses the delete
      // (it lacks the characters), so every replica must (docs/merge-rules.md, "Edits refused").
      if (view !== undefined && !view.sawAll(from.session, from.clock, from.clock + length)) {
        throw badEdit(`a delete names a character its author had not seen`);
      }
      const last = { session: from.session, clock: from.clock + length - 1 };
      if (this.#splitsPair(before(from), pending) || this.#splitsPair(last, pending)) {
        throw badEdit(`a delete splits a surrogate pair`);
      }
    }
    pending.add(op, session);
  }

  /** The clock after the known stretch that holds `id`, or undefined when `id` is unknown. */
  #endOfKnown(id: CharId, pending: PendingEdits): number | undefined {
    return this.#find(id)?.end ?? pending.insertHolding(id)?.end;
  }

  /**
   * Whether `id` and the character its session typed next are a surrogate pair, both visible (or
   * pending): an edit between them would leave each alone. The two halves of a pair are always
   * typed in one insert (its text is well-formed), with consecutive clocks.
   */
  #splitsPair(id: CharId, pending: PendingEdits): boolean {
    const high = this.#codeOf(id, pending);
    if (high === undefined || !isHigh(high)) return false;
    const low = this.#codeOf({ session: id.session, clock: id.clock + 1 }, pending);
    return low !== undefined && isLow(low);
  }

  /** The code unit of character `id`; undefined when it is deleted (or unknown). */
  #codeOf(id: CharId, pending: PendingEdits): number | undefined {
    const run = this.#find(id);
    if (run !== undefined) {
      return run.deleted ? undefined : run.content.charCodeAt(id.clock - run.clock);
    }
    const insert = pending.insertHolding(id);
    return insert?.text.charCodeAt(id.clock - insert.from);
  }

  /**
   * Whether character `left` stands before character `right` once the pending operations apply.
   * The usual cases are answered without applying them: both characters held here; both typed in
   * one pending insert; or one of them a pending insert's origin and the other typed in it (an
   * insert lands between its origins). Otherwise the answer comes from a copy of the document
   * with the pending operations applied.
   */
  #inOrder(left: CharId, right: CharId, pending: PendingEdits): boolean {
    const leftRun = this.#find(left);
    const rightRun = this.#find(right);
    if (leftRun !== undefined && rightRun !== undefined) {
      return this.#precedes(leftRun, left, rightRun, right);
    }
    const leftInsert = leftRun === undefined ? pending.insertHolding(left) : undefined;
    const rightInsert = rightRun === undefined ? pending.insertHolding(right) : undefined;
    if (leftInsert !== undefined && leftInsert === rightInsert) return left.clock < right.clock;
    if (leftInsert !== undefined && sameChar(leftInsert.right, right)) return true;
    if (rightInsert !== undefined && sameChar(rightInsert.left, left)) return true;
    const applied = pending.applied(this);
    return applied.#precedes(applied.#find(left)!, left, applied.#find(right)!, right);
  }

  /**
   * Whether `view` saw any character standing between `left` and `right` (null: the start, the
   * end), which stand in that order. Runs between them are walked one by one, as integrating the
   * insert walks them.
   */
  #seenBetween(left: CharId | null, right: CharId | null, view: AuthorView): boolean {
    const rightRun = right === null ? null : this.#find(right)!;
    let run: Run | null;
    let from: number;
    if (left === null) {
      run = this.#head;
      from = run?.clock ?? 0;
    } else {
      run = this.#find(left)!;
      from = left.clock + 1;
    }
    for (; run !== null; run = run.next, from = run?.clock ?? 0) {
      const end = run === rightRun ? right!.clock : run.end;
      if (from < end && view.sawAny(run.session, from, end)) return true;
      if (run === rightRun) return false;
    }
    return false;
  }

  /**
   * The document as it will stand once `pending` applies, as far as a check needs to tell what
   * stands between `left` and `right`: the runs from where `left` will stand to where `right`
   * will (widened to the places of every pending insert that may land among them), as they stand
   * here (their text left out), with those inserts applied. An insert lands between its
   * origins, placed by what stands between them alone, so the part orders its characters as the
   * whole document would; and it costs the runs it holds, where a copy of the whole document cost
   * all of its runs for every block of several edits (it doubled the time of a concurrent trace's
   * exchanges, X02a). Many pending inserts, or a base (it lands at the start, with no
   * neighbours), take the whole copy.
   */
  #placed(pending: PendingEdits, left: CharId | null, right: CharId | null): TextDoc {
    if (pending.inserted.length === 0) return this;
    const inserted = pending.inserted;
    if (pending.appliedCopy || inserted.length > PART_LIMIT || pending.holdsBase) {
      return pending.applied(this);
    }
    // Where a character will stand, bounded by characters held here (null: the start, the end).
    const low = (id: CharId | null): CharId | null => {
      if (id === null || this.#find(id) !== undefined) return id;
      return low(pending.insertHolding(id)!.left);
    };
    const high = (id: CharId | null): CharId | null => {
      if (id === null || this.#find(id) !== undefined) return id;
      return high(pending.insertHolding(id)!.right);
    };
    const before = (a: CharId, b: CharId) => this.#precedes(this.#find(a)!, a, this.#find(b)!, b);
    /** Whether the stretch from `a` to `b` and the one from `c` to `d` share a place. */
    const overlap = (a: CharId | null, b: CharId | null, c: CharId | null, d: CharId | null) =>
      (a === null || d === null || before(a, d)) && (c === null || b === null || before(c, b));
    /** Whether the stretch from `a` to `b` lies within the part's. */
    const within = (part: Part, a: CharId | null, b: CharId | null) =>
      (part.from === null || (a !== null && (sameChar(a, part.from) || before(part.from, a)))) &&
      (part.to === null || (b !== null && (sameChar(b, part.to) || before(b, part.to))));
    let from = low(left);
    let to = high(right);
    // The part made for an earlier check of the block serves while it holds the stretch asked
    // about and every insert recorded since lands wholly inside it or wholly outside.
    const earlier = parts.get(pending);
    if (earlier !== undefined && within(earlier, from, to)) {
      let fits = true;
      for (; fits && earlier.applied < inserted.length; earlier.applied++) {
        const { op, session } = inserted[earlier.applied];
        const opFrom = low(op.left);
        const opTo = high(op.right);
        if (!overlap(opFrom, opTo, earlier.from, earlier.to)) continue;
        if (within(earlier, opFrom, opTo)) earlier.doc.apply(op, session);
        else fits = false;
      }
      if (fits) return earlier.doc;
    }
    const landing = new Set<number>();
    for (let grew = true; grew;) {
      grew = false;
      inserted.forEach(({ op }, i) => {
        if (landing.has(i)) return;
        const opFrom = low(op.left);
        const opTo = high(op.right);
        if (!overlap(opFrom, opTo, from, to)) return;
        landing.add(i);
        if (opFrom === null || (from !== null && before(opFrom, from))) from = opFrom;
        if (opTo === null || (to !== null && before(to, opTo))) to = opTo;
        grew = true;
      });
    }
    if (from === null && to === null) return pending.applied(this);
    const runs: StoredRun[] = [];
    const last = to === null ? null : this.#find(to)!;
    // As tombstones: the part orders characters, and copying their text cost as much as the
    // check of a long stretch of concurrent text at one place, for each edit of a block there.
    for (let run = from === null ? this.#head : this.#find(from)!; run !== null; run = run.next) {
      runs.push({ ...run.stored(), content: undefined });
      if (run === last) break;
    }
    const doc = TextDoc.fromRuns(runs);
    inserted.forEach(({ op, session }, i) => {
      if (landing.has(i)) doc.apply(op, session);
    });
    parts.set(pending, { from, to, doc, applied: inserted.length });
    return doc;
  }

  /** Whether character `a` (in run `aRun`) stands before character `b` (in `bRun`). */
  #precedes(aRun: Run, a: CharId, bRun: Run, b: CharId): boolean {
    if (aRun === bRun) return a.clock < b.clock;
    // An honest insert's origins were neighbours: only concurrent inserts stand between them.
    let run = aRun.next;
    for (let step = 0; step < NEAR && run !== null; step++, run = run.next) {
      if (run === bRun) return true;
    }
    return this.#index.precedes(aRun, bRun);
  }

  /** Applies a checked operation by `session`; returns what it changed in the visible text. */
  apply(op: TextOp, session: string): TextChange[] {
    if (op.kind === "insert") return [this.#integrate(op, session)];
    if (op.kind === "delete") return this.#deleteRange(op);
    // A base applies once, whoever sends it.
    const base = baseSession(op.text);
    if (this.#find({ session: base, clock: 1 }) !== undefined) return [];
    return [this.#integrate(baseInsert(op.text), base)];
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────

  /**
   * YATA: the new run goes between its left and right characters; runs found between them were
   * inserted concurrently, and are skipped over (the new run goes after them) when their author
   * sorts first and they were typed at the same place, or when they belong after such a run.
   * The scan is Yjs's `Item.integrate`, on runs.
   */
  #integrate(op: InsertOp, session: string): TextChange {
    // The right origin first: splitting a run keeps its first part, so a run found to start at
    // the right origin still does after the left one is split off, whichever run that cuts.
    const right = op.right === null ? null : this.#runStartingAt(op.right);
    let left = op.left === null ? null : this.#runEndingAt(op.left);
    const conflicting = new Set<Run>();
    const beforeOrigin = new Set<Run>();
    for (let o = left === null ? this.#head : left.next; o !== null && o !== right; o = o.next) {
      beforeOrigin.add(o);
      conflicting.add(o);
      if (sameChar(op.left, o.left)) {
        if (o.session < session || (o.session === session && o.clock < op.clock)) {
          left = o;
          conflicting.clear();
        } else if (sameChar(op.right, o.right)) break;
      } else {
        const origin = o.left === null ? undefined : this.#find(o.left);
        if (origin === undefined || !beforeOrigin.has(origin)) break;
        if (!conflicting.has(origin)) {
          left = o;
          conflicting.clear();
        }
      }
    }
    return this.#place(op, session, left, undefined);
  }

  /** Links the inserted run after `left` (null: at the start) and updates the text. */
  #place(op: InsertOp, session: string, left: Run | null, knownIndex: number | undefined) {
    const { clock, text } = op;
    let run: Run;
    if (
      left !== null && !left.deleted && left.session === session && left.end === clock &&
      sameChar(left.right, op.right) && sameChar(op.left, left.last()) &&
      left === this.#lastOf(session)
    ) {
      // Typed right after the end of its own run: the run grows (the usual keystroke).
      run = left;
      const index = knownIndex ?? this.#indexOf(run) + run.length;
      run.content += text;
      run.length += text.length;
      this.#index.resized(run, text.length);
      this.#splice(index, 0, text);
      this.#cursor = { run, index: index + text.length - run.length };
      return { index, deleted: 0, inserted: text };
    }
    // Counted before the run is linked: the cursor's count would not include it.
    const index = knownIndex ?? (left === null ? 0 : this.#indexOf(left) + left.visible);
    run = new Run(session, clock, text, text.length, false, op.left, op.right);
    this.#link(run, left);
    this.#file(run);
    this.#splice(index, 0, text);
    this.#cursor = { run, index };
    return { index, deleted: 0, inserted: text };
  }

  #deleteRange(op: DeleteOp): TextChange[] {
    const changes: TextChange[] = [];
    const end = op.from.clock + op.length;
    for (let clock = op.from.clock; clock < end;) {
      const run = this.#runStartingAt({ session: op.from.session, clock });
      if (run.end > end) this.#split(run, end - run.clock);
      clock = run.end;
      if (run.deleted) continue;
      const index = this.#indexOf(run);
      const { length } = run;
      this.#index.resized(run, -length);
      run.deleted = true;
      run.content = "";
      this.#splice(index, length, "");
      this.#cursor = { run, index };
      changes.push({ index, deleted: length, inserted: "" });
    }
    return changes;
  }

  #splice(index: number, deleted: number, inserted: string): void {
    this.#text = this.#text.splice(index, deleted, inserted);
  }

  /** The run holding the visible character at `index`, and its offset in the run. */
  #locate(index: number): { run: Run; offset: number } {
    const cursor = this.#cursor;
    if (cursor !== undefined) {
      let { run, index: before } = cursor;
      for (let step = 0; step < NEAR; step++) {
        if (before > index) {
          run = run.prev!;
          before -= run.visible;
        } else if (before + run.visible <= index) {
          if (run.next === null) break;
          before += run.visible;
          run = run.next;
        } else {
          this.#cursor = { run, index: before };
          return { run, offset: index - before };
        }
      }
    }
    const { run, before } = this.#index.locate(index);
    this.#cursor = { run, index: before };
    return { run, offset: index - before };
  }

  /** The number of visible characters before `target`: near the cursor, or through the index. */
  #indexOf(target: Run): number {
    const cursor = this.#cursor;
    if (cursor !== undefined) {
      let ahead: Run | null = cursor.run;
      let aheadIndex = cursor.index;
      let behind: Run | null = ahead;
      let behindIndex = aheadIndex;
      for (let step = 0; step < NEAR && (ahead !== null || behind !== null); step++) {
        if (ahead === target) return aheadIndex;
        if (behind === target) return behindIndex;
        if (ahead !== null) {
          aheadIndex += ahead.visible;
          ahead = ahead.next;
        }
        if (behind !== null) {
          behind = behind.prev;
          if (behind !== null) behindIndex -= behind.visible;
        }
      }
    }
    return this.#index.indexOf(target);
  }

  /** The run holding character `id`, if any. */
  #find(id: CharId): Run | undefined {
    const runs = this.#bySession.get(id.session);
    if (runs === undefined) return undefined;
    let low = 0;
    let high = runs.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const run = runs[mid];
      if (id.clock < run.clock) high = mid - 1;
      else if (id.clock >= run.end) low = mid + 1;
      else return run;
    }
    return undefined;
  }

  /** The run whose last character is `id` (split off if needed); `id` must exist. */
  #runEndingAt(id: CharId): Run {
    const run = this.#find(id)!;
    if (id.clock < run.end - 1) this.#split(run, id.clock - run.clock + 1);
    return run;
  }

  /** The run whose first character is `id` (split off if needed); `id` must exist. */
  #runStartingAt(id: CharId): Run {
    const run = this.#find(id)!;
    return id.clock > run.clock ? this.#split(run, id.clock - run.clock) : run;
  }

  /** Cuts `run` after `at` characters; returns the new run holding the rest. */
  #split(run: Run, at: number): Run {
    const rest = new Run(
      run.session,
      run.clock + at,
      run.content.slice(at),
      run.length - at,
      run.deleted,
      { session: run.session, clock: run.clock + at - 1 },
      run.right,
    );
    run.content = run.content.slice(0, at);
    if (!run.deleted) this.#index.resized(run, at - run.length);
    run.length = at;
    this.#link(rest, run);
    const runs = this.#bySession.get(run.session)!;
    runs.splice(runs.indexOf(run, this.#searchStart(runs, run)) + 1, 0, rest);
    return rest;
  }

  /** Where binary search puts `run` in its session's sorted runs (indexOf then finds it at once). */
  #searchStart(runs: readonly Run[], run: Run): number {
    let low = 0;
    let high = runs.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (runs[mid].clock <= run.clock) low = mid;
      else high = mid - 1;
    }
    return low;
  }

  #link(run: Run, after: Run | null): void {
    run.prev = after;
    run.next = after === null ? this.#head : after.next;
    if (run.next !== null) run.next.prev = run;
    if (after === null) this.#head = run;
    else after.next = run;
    this.#index.linked(run, after);
  }

  /** Files a new run in its session's runs: its clocks are that session's newest. */
  #file(run: Run): void {
    const runs = this.#bySession.get(run.session);
    if (runs === undefined) this.#bySession.set(run.session, [run]);
    else runs.push(run);
  }

  #lastOf(session: string): Run | undefined {
    const runs = this.#bySession.get(session);
    return runs?.[runs.length - 1];
  }

  /** Throws E_BAD_ARGUMENT unless `change` fits the text (see checkTextEdit). */
  checkEdit(change: TextChange): void {
    checkEdit(this.#text.length, (i) => this.#codeAt(i), change);
  }

  /** The visible text's length, in UTF-16 code units. */
  get length(): number {
    return this.#text.length;
  }

  #checkPosition(index: number, name: string): void {
    checkPosition(this.#text.length, (i) => this.#codeAt(i), index, name);
  }

  #codeAt(index: number): number {
    return this.#text.charCodeAt(index);
  }
}

/**
 * Throws E_BAD_ARGUMENT unless `change` fits `text`: positions within it, not inside a surrogate
 * pair. Checked before a document is touched, so a refused edit changes nothing.
 */
export function checkTextEdit(text: string, change: TextChange): void {
  checkEdit(text.length, (i) => text.charCodeAt(i), change);
}

function checkEdit(length: number, codeAt: (i: number) => number, change: TextChange): void {
  if (!Number.isSafeInteger(change.deleted) || change.deleted < 0) {
    throw new CairnError("E_BAD_ARGUMENT", "a length is a non-negative integer");
  }
  checkPosition(length, codeAt, change.index, "index");
  checkPosition(length, codeAt, change.index + change.deleted, "index + length");
}

function checkPosition(
  length: number,
  codeAt: (i: number) => number,
  index: number,
  name: string,
): void {
  if (!Number.isSafeInteger(index) || index < 0 || index > length) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      `${name} must be an integer from 0 to the text's length (${length})`,
    );
  }
  if (index > 0 && index < length && isHigh(codeAt(index - 1)) && isLow(codeAt(index))) {
    throw new CairnError("E_BAD_ARGUMENT", `${name} ${index} splits a surrogate pair`);
  }
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** What starts the session of a base text's characters: no base64url digit, so no writer's. */
const BASE_MARK = "~";

/**
 * The session a base text's characters are named after (clocks from 1): "~" and the first 22
 * base64url digits of the SHA-256 of its UTF-8, as long as a session id (block.ts), and never one
 * ("~" is no base64url digit). Every replica derives it from the text alone, so a peer cannot
 * give other characters the names of a text's.
 */
export function baseSession(text: string): string {
  return BASE_MARK + toBase64Url(sha256(new TextEncoder().encode(text))).slice(0, 22);
}

/** Whether `session` names a base text's characters (baseSession), not a writer's. */
export function isBaseSession(session: string): boolean {
  return session.startsWith(BASE_MARK);
}

/** A base text as the insert of its characters: at the start, with no neighbours. */
function baseInsert(text: string): InsertOp {
  return { kind: "insert", clock: 1, text, left: null, right: null };
}

/** The character its session typed just before `id` (clock 0: none). */
function before(id: CharId): CharId {
  return { session: id.session, clock: id.clock - 1 };
}

function badEdit(why: string): CairnError {
  return new CairnError("E_BAD_COMMIT", `text edit refused: ${why}`);
}
