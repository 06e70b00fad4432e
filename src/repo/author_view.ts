/**
 * What the author of a commit had seen of its item's text fields when it made it: the characters
 * inserted by the commits it followed (its ancestors) and by the commit itself. TextDoc.check asks
 * it whether the author had seen an insert's origins, and any characters standing between them
 * (which only edits made concurrently at one place, or a hostile writer, put there); it must
 * answer the same on every replica, whatever concurrent text each holds.
 *
 * It is worked out from the other side, once per commit and only when asked: the commits of the
 * item held here (applied, or earlier in the commit's block) that the commit did not follow — the
 * concurrent ones. History is walked newest first from the item's leaves and from the commit's
 * parents at once (stamp order is a topological order: commit_graph.ts) until everything left to
 * walk is an ancestor of the commit, so the walk covers the history made concurrently, not the
 * item's whole history. A character present here that no concurrent commit inserted was inserted
 * by an ancestor or by the commit: its author had seen it.
 *
 * What was worked out for the item's last commit is kept (ViewMemos) and taken over by the next
 * commit when nothing but that one entered since: a commit whose only parent it is
 * has the same concurrent commits (one writer's catch-up: N commits made beside N others walked
 * those N each), and one with the same parents has those and that commit (many writers' edits of
 * one version, X05: each walked all the others).
 *
 * A base text's characters (text_ops.ts) are the exception: several commits may carry one base,
 * so that a concurrent commit carries it does not mean the author lacked it. For those the
 * commit's own operations and its ancestors are searched, all of them: a rare case (the first
 * edits of one old string, made concurrently), met only when base characters stand between an
 * insert's origins.
 */
import { type Commit, commitId } from "../core/commit.ts";
import type { AuthorView } from "../core/text/text_doc.ts";
import { baseSession, isBaseSession } from "../core/text/text_doc.ts";
import type { TextOp } from "../core/text/text_ops.ts";
import { StampHeap } from "./stamp_heap.ts";

/** What the view reads of the repository. */
export interface ViewSources {
  /** The item's leaves applied here. */
  leaves(key: string): readonly Commit[];
  /** An applied commit. */
  get(id: string): Commit | undefined;
  /**
   * How many commits of item `key` entered (or are earlier in the block) since its memo was
   * first kept: growing while it is kept. Commits of other items change nothing a view of this
   * one works out.
   */
  entered(key: string): number;
  /** The commits of the block that come before this one and will apply with it, by id. */
  readonly earlier: ReadonlyMap<string, Commit>;
  /** A commit's text operations on `field` (none when it does not edit it). */
  opsOf(commit: Commit, field: string): readonly TextOp[];
  /** What was worked out for earlier commits, per item. */
  readonly memos: ViewMemos;
}

/** Per field, per session, the characters the concurrent commits inserted (sorted, merged). */
type Unseen = Map<string, Map<string, Stretch[]>>;

/**
 * What was worked out for a commit: the answers, and how many commits had entered when it was
 * asked. The next view that takes it over owns it and may add to it; the view it was made for
 * is done by then (a view serves one commit's check).
 */
interface ViewMemo {
  readonly commit: Commit;
  readonly entered: number;
  readonly concurrent: Commit[];
  readonly unseen: Unseen;
}

/** Items whose last view is kept: a few, for the items whose commits are entering now. */
const MEMO_ITEMS = 64;

/** Counts the commits entering an item while it has a memo (CommitGraph.watch). */
export interface EnteredCounter {
  watch(key: string): void;
  unwatch(key: string): void;
}

/** The last view worked out per item, for the next commit of the item to take over. */
export class ViewMemos {
  readonly #byKey = new Map<string, ViewMemo>();
  readonly #counter: EnteredCounter;

  constructor(counter: EnteredCounter) {
    this.#counter = counter;
  }

  get(key: string): ViewMemo | undefined {
    return this.#byKey.get(key);
  }

  /**
   * Keeps `memo` for `key`, whose commits are counted from now on (an item not counted yet
   * counts 0 until then, which `memo.entered` was read as).
   */
  set(key: string, memo: ViewMemo): void {
    this.#counter.watch(key);
    this.#byKey.delete(key);
    this.#byKey.set(key, memo);
    if (this.#byKey.size > MEMO_ITEMS) {
      const oldest = this.#byKey.keys().next().value!;
      this.#byKey.delete(oldest);
      this.#counter.unwatch(oldest);
    }
  }
}

/** A stretch of one session's clocks, `from` up to (not including) `end`. */
interface Stretch {
  readonly from: number;
  readonly end: number;
}

/** A walk's marks: reached from the commit's parents, or from what this replica holds. */
const FOLLOWED = 1;
const HELD = 2;

export class CommitView {
  readonly #commit: Commit;
  readonly #sources: ViewSources;
  #concurrent: Commit[] | undefined;
  #unseenByField: Unseen | undefined;
  readonly #fields = new Map<string, AuthorView>();
  /** #carriesBase's answers, by field and base. */
  readonly #bases = new Map<string, boolean>();

  constructor(commit: Commit, sources: ViewSources) {
    this.#commit = commit;
    this.#sources = sources;
    this.#takeOver();
  }

  /** What the author had seen of `field`. */
  field(field: string): AuthorView {
    let view = this.#fields.get(field);
    if (view === undefined) {
      let unseen: Map<string, Stretch[]> | undefined;
      const unseenOf = (session: string) => {
        if (unseen === undefined) {
          this.#concurrentCommits();
          unseen = this.#unseenByField!.get(field);
          if (unseen === undefined) this.#unseenByField!.set(field, unseen = this.#unseen(field));
        }
        return unseen.get(session);
      };
      // A base's characters, which a concurrent commit may carry too: seen if the author had it.
      const hadBase = (session: string) =>
        isBaseSession(session) && this.#carriesBase(field, session);
      view = {
        sawAny: (session, from, end) => !covers(unseenOf(session), from, end) || hadBase(session),
        sawAll: (session, from, end) => !overlaps(unseenOf(session), from, end) || hadBase(session),
      };
      this.#fields.set(field, view);
    }
    return view;
  }

  /** Per session, the characters of `field` the concurrent commits inserted. */
  #unseen(field: string): Map<string, Stretch[]> {
    const unseen = new Map<string, Stretch[]>();
    const add = (session: string, stretch: Stretch) => {
      const stretches = unseen.get(session);
      if (stretches === undefined) unseen.set(session, [stretch]);
      else stretches.push(stretch);
    };
    for (const commit of this.#concurrentCommits()) {
      for (const op of this.#sources.opsOf(commit, field)) {
        if (op.kind === "insert") {
          add(commit.session, { from: op.clock, end: op.clock + op.text.length });
        } else if (op.kind === "base") {
          add(baseSession(op.text), { from: 1, end: 1 + op.text.length });
        }
      }
    }
    for (const [session, stretches] of unseen) unseen.set(session, merged(stretches));
    return unseen;
  }

  /** Adds what `commit` inserted to every field's unseen characters worked out so far. */
  #addUnseen(commit: Commit): void {
    for (const [field, unseen] of this.#unseenByField!) {
      for (const op of this.#sources.opsOf(commit, field)) {
        if (op.kind === "insert") {
          insertStretch(unseen, commit.session, op.clock, op.clock + op.text.length);
        } else if (op.kind === "base") {
          insertStretch(unseen, baseSession(op.text), 1, 1 + op.text.length);
        }
      }
    }
  }

  /** The commits of the item held here, or earlier in the block, that the commit did not follow. */
  #concurrentCommits(): readonly Commit[] {
    if (this.#concurrent === undefined) {
      this.#concurrent = this.#walk();
      this.#unseenByField = new Map();
      this.#remember();
    }
    return this.#concurrent;
  }

  /**
   * Takes over the memo of the item's last commit when only that one entered since and this
   * commit is its child or its sibling; done for every commit that edits text, asked or not, so
   * that a run of them keeps it.
   * A commit that edits no text has no view: the next one after it walks again.
   */
  #takeOver(): void {
    const { key, parents } = this.#commit;
    const memo = this.#sources.memos.get(key);
    if (memo === undefined || this.#sources.entered(key) !== memo.entered + 1) return;
    if (!this.#entered(memo.commit)) return;
    const last = commitId(memo.commit);
    if (parents.length === 1 && parents[0] === last) {
      // Its only parent: the same concurrent commits.
      this.#concurrent = memo.concurrent;
      this.#unseenByField = memo.unseen;
    } else if (sameMembers(parents, memo.commit.parents)) {
      // A sibling: that commit is concurrent to this one too.
      this.#concurrent = memo.concurrent;
      this.#unseenByField = memo.unseen;
      this.#concurrent.push(memo.commit);
      this.#addUnseen(memo.commit);
    } else return;
    this.#remember();
  }

  /**
   * Whether `commit`, the very one a memo was made for, entered: not just one with its id, which
   * a refused block's commit shares with its signer's next block at that seq. Having entered last,
   * it is earlier in this block or a leaf of its item.
   */
  #entered(commit: Commit): boolean {
    return this.#sources.earlier.get(commitId(commit)) === commit ||
      this.#sources.leaves(commit.key).includes(commit);
  }

  #remember(): void {
    const { key } = this.#commit;
    this.#sources.memos.set(key, {
      commit: this.#commit,
      entered: this.#sources.entered(key),
      concurrent: this.#concurrent!,
      unseen: this.#unseenByField!,
    });
  }

  /** The concurrent commits, found by walking history (see the top of this file). */
  #walk(): Commit[] {
    const { key, parents } = this.#commit;
    const marks = new Map<string, number>();
    const frontier = new StampHeap();
    /** Commits in the frontier not known to be followed: the walk ends when there are none. */
    let open = 0;
    const visit = (commit: Commit | undefined, mark: number) => {
      if (commit === undefined) return; // history lost to damage: nothing to walk
      const id = commitId(commit);
      const known = marks.get(id);
      if (known === undefined) {
        frontier.push(commit);
        if (mark === HELD) open++;
      } else if (known === HELD && (mark & FOLLOWED) !== 0) open--;
      marks.set(id, (known ?? 0) | mark);
    };
    for (const parent of parents) visit(this.#get(parent), FOLLOWED);
    for (const leaf of this.#sources.leaves(key)) visit(leaf, HELD);
    for (const commit of this.#sources.earlier.values()) {
      if (commit.key === key) visit(commit, HELD);
    }
    const concurrent: Commit[] = [];
    while (open > 0) {
      const commit = frontier.pop()!;
      // Parents are stamped before their children, so every commit that reaches this one has
      // been walked: its mark is final.
      const mark = marks.get(commitId(commit))!;
      if (mark === HELD) {
        open--;
        concurrent.push(commit);
      }
      for (const parent of commit.parents) visit(this.#get(parent), mark);
    }
    return concurrent;
  }

  /**
   * Whether the commit, or one it followed, carries the base text whose characters are
   * `session`'s. Asked once per field and base: the answer walks all the commit's history.
   */
  #carriesBase(field: string, session: string): boolean {
    const asked = `${field}\u0000${session}`;
    let carries = this.#bases.get(asked);
    if (carries === undefined) this.#bases.set(asked, carries = this.#findBase(field, session));
    return carries;
  }

  #findBase(field: string, session: string): boolean {
    const carries = (commit: Commit) =>
      this.#sources.opsOf(commit, field).some((op) =>
        op.kind === "base" && baseSession(op.text) === session
      );
    if (carries(this.#commit)) return true;
    const walked = new Set<string>();
    const queue = [...this.#commit.parents];
    while (queue.length > 0) {
      const id = queue.pop()!;
      if (walked.has(id)) continue;
      walked.add(id);
      const commit = this.#get(id);
      if (commit === undefined) continue;
      if (carries(commit)) return true;
      queue.push(...commit.parents);
    }
    return false;
  }

  #get(id: string): Commit | undefined {
    return this.#sources.earlier.get(id) ?? this.#sources.get(id);
  }
}

/** Whether `a` and `b` (without repeats) hold the same ids. */
function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}

/** Adds the stretch of `session`'s clocks from `from` to `end` to `unseen`, kept merged. */
function insertStretch(
  unseen: Map<string, Stretch[]>,
  session: string,
  from: number,
  end: number,
): void {
  const stretches = unseen.get(session);
  if (stretches === undefined) unseen.set(session, [{ from, end }]);
  else unseen.set(session, merged([...stretches, { from, end }]));
}

/** `stretches` sorted, with those that touch or overlap made one. */
function merged(stretches: Stretch[]): Stretch[] {
  stretches.sort((a, b) => a.from - b.from);
  const joined: Stretch[] = [];
  for (const stretch of stretches) {
    const last = joined[joined.length - 1];
    if (last !== undefined && stretch.from <= last.end) {
      joined[joined.length - 1] = { from: last.from, end: Math.max(last.end, stretch.end) };
    } else joined.push(stretch);
  }
  return joined;
}

/** Whether `stretches` (merged) hold any clock from `from` up to `end`. */
function overlaps(stretches: readonly Stretch[] | undefined, from: number, end: number): boolean {
  if (stretches === undefined) return false;
  // The first stretch ending after `from` is the only one that can start before `end`.
  let low = 0;
  let high = stretches.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (stretches[mid].end <= from) low = mid + 1;
    else high = mid;
  }
  return low < stretches.length && stretches[low].from < end;
}

/** Whether `stretches` (merged) hold every clock from `from` up to `end`. */
function covers(stretches: readonly Stretch[] | undefined, from: number, end: number): boolean {
  if (stretches === undefined) return false;
  // The last stretch starting at or before `from` is the only one that can hold it.
  let low = 0;
  let high = stretches.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (stretches[mid].from <= from) low = mid;
    else high = mid - 1;
  }
  const stretch = stretches[low];
  return stretch.from <= from && stretch.end >= end;
}
