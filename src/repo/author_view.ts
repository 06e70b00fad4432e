/**
 * What the author of a commit had seen of its item's text fields when it made it: the characters
 * inserted by the commits it followed (its ancestors) and by the commit itself. TextDoc.check asks
 * it when an insert of the commit has characters standing between its origins, which only edits
 * made concurrently at one place (or a hostile writer) cause; it must answer the same on every
 * replica, whatever concurrent text each holds.
 *
 * It is worked out from the other side, once per commit and only when asked: the commits of the
 * item held here (applied, or earlier in the commit's block) that the commit did not follow — the
 * concurrent ones. History is walked newest first from the item's leaves and from the commit's
 * parents at once (stamp order is a topological order: commit_graph.ts) until everything left to
 * walk is an ancestor of the commit, so the walk covers the history made concurrently, not the
 * item's whole history. A character present here that no concurrent commit inserted was inserted
 * by an ancestor or by the commit: its author had seen it.
 *
 * A base text's characters (text_ops.ts) are the exception: several commits may carry one base,
 * so that a concurrent commit carries it does not mean the author lacked it. For those the
 * commit's own operations and its ancestors are searched, all of them: a rare case (the first
 * edits of one old string, made concurrently), met only when base characters stand between an
 * insert's origins.
 */
import { type Commit, commitId } from "../core/commit.ts";
import type { AuthorView } from "../core/text/text_doc.ts";
import { baseSession } from "../core/text/text_doc.ts";
import type { TextOp } from "../core/text/text_ops.ts";
import { StampHeap } from "./stamp_heap.ts";

/** What the view reads of the repository. */
export interface ViewSources {
  /** The item's leaves applied here. */
  leaves(key: string): readonly Commit[];
  /** An applied commit. */
  get(id: string): Commit | undefined;
  /** The commits of the block that come before this one and will apply with it, by id. */
  readonly earlier: ReadonlyMap<string, Commit>;
  /** A commit's text operations on `field` (none when it does not edit it). */
  opsOf(commit: Commit, field: string): readonly TextOp[];
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
  readonly #fields = new Map<string, AuthorView>();

  constructor(commit: Commit, sources: ViewSources) {
    this.#commit = commit;
    this.#sources = sources;
  }

  /** What the author had seen of `field`. */
  field(field: string): AuthorView {
    let view = this.#fields.get(field);
    if (view === undefined) {
      let unseen: Map<string, Stretch[]> | undefined;
      view = {
        sawAny: (session, from, end) => {
          unseen ??= this.#unseen(field);
          if (!covers(unseen.get(session), from, end)) return true;
          return session.startsWith("~") && this.#carriesBase(field, session);
        },
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
    for (const stretches of unseen.values()) stretches.sort((a, b) => a.from - b.from);
    return unseen;
  }

  /** The commits of the item held here, or earlier in the block, that the commit did not follow. */
  #concurrentCommits(): Commit[] {
    if (this.#concurrent !== undefined) return this.#concurrent;
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
    return this.#concurrent = concurrent;
  }

  /** Whether the commit, or one it followed, carries the base text whose characters are `session`'s. */
  #carriesBase(field: string, session: string): boolean {
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

/** Whether `stretches` (sorted, not overlapping) hold every clock from `from` up to `end`. */
function covers(stretches: readonly Stretch[] | undefined, from: number, end: number): boolean {
  if (stretches === undefined) return false;
  let next = from;
  for (const stretch of stretches) {
    if (stretch.end <= next) continue;
    if (stretch.from > next) return false;
    next = stretch.end;
    if (next >= end) return true;
  }
  return next >= end;
}
