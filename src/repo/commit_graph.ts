/**
 * Every commit a repository holds, by id, with the two walks the engine needs: the value at a
 * commit (full values and field deltas) and the lowest common ancestor of a leaf set.
 *
 * Invariant kept by the repository on entry: a commit's parents are present, belong to the same
 * key, and have a smaller stamp (hlc, session, seq). So stamp order is a topological order.
 */
import type { Block } from "../core/block.ts";
import { type Commit, commitId, type FieldRecord, parseCommitId } from "../core/commit.ts";
import { HeldBlock } from "./held_blocks.ts";
import { StampHeap } from "./stamp_heap.ts";

/**
 * How many values at delta commits the graph keeps: enough for the leaves of an item many peers
 * edited at once (each import merges every leaf again; X05 has 1,540), small in memory (a shallow
 * copy of a record each).
 */
const REMEMBERED_DELTA_VALUES = 4096;

export class CommitGraph {
  /**
   * Commits per session, at index seq - 1. A session's commit seqs are contiguous (block chains
   * check it), so these arrays stay dense; and indexing by number avoids hashing a fresh id
   * string per write, which cost more than the rest of a write together.
   */
  readonly #bySession = new Map<string, (Commit | HeldBlock)[]>();
  /** Where commits this graph does not hold may still be found: a restored snapshot's leaves. */
  #missing: ((session: string, seq: number) => Commit | undefined) | undefined;
  /** Values at delta commits lately asked for, oldest first (see #rememberDeltaValue). */
  readonly #deltaValues = new Map<string, FieldRecord>();
  /** Per watched item, how many of its commits were added since it was first watched. */
  readonly #addedTo = new Map<string, number>();

  /**
   * Counts the commits added to item `key` from now on (see addedTo), until `unwatch(key)`: a
   * reader that kept the count knows whether anything of the item entered since
   * (repo/author_view.ts). Kept for the few items watched, not for every item.
   */
  watch(key: string): void {
    if (!this.#addedTo.has(key)) this.#addedTo.set(key, 0);
  }

  unwatch(key: string): void {
    this.#addedTo.delete(key);
  }

  /** How many commits of item `key` were added since it was watched: 0 if it is not. */
  addedTo(key: string): number {
    return this.#addedTo.get(key) ?? 0;
  }

  has(id: string): boolean {
    const parsed = parseCommitId(id);
    return parsed !== undefined && this.holds(parsed.session, parsed.seq);
  }

  /** has() for a commit at hand: its id is not written and parsed again. */
  holds(session: string, seq: number): boolean {
    return this.#bySession.get(session)?.[seq - 1] !== undefined ||
      this.#found(session, seq) !== undefined;
  }

  get(id: string): Commit | undefined {
    const parsed = parseCommitId(id);
    if (!parsed) return undefined;
    const entry = this.#bySession.get(parsed.session)?.[parsed.seq - 1];
    if (entry instanceof HeldBlock) return entry.decode(parsed.seq);
    return entry ?? this.#found(parsed.session, parsed.seq);
  }

  /**
   * Commits not added are looked up with `find` (and added once found), so a repository
   * restored from a snapshot need not add every leaf up front.
   */
  findMissingIn(find: (session: string, seq: number) => Commit | undefined): void {
    this.#missing = find;
  }

  #found(session: string, seq: number): Commit | undefined {
    const commit = this.#missing?.(session, seq);
    if (commit) this.add(commit);
    return commit;
  }

  add(commit: Commit): void {
    if (this.#addedTo.size > 0) {
      const added = this.#addedTo.get(commit.key);
      if (added !== undefined) this.#addedTo.set(commit.key, added + 1);
    }
    let commits = this.#bySession.get(commit.session);
    if (!commits) this.#bySession.set(commit.session, commits = []);
    commits[commit.seq - 1] = commit;
  }

  /**
   * From now on holds an added block's commits as the held block's body, decoded when a walk
   * needs one, when the block can decode them and their seqs leave no gap; else keeps the
   * objects. History kept this way costs its encoding (about 75 bytes for a one-field update)
   * instead of a commit object with its parents array, id string and change record (about 300
   * bytes of heap), and the objects a write made die young instead of filling the old
   * generation, where every major GC marks them again.
   */
  keepEncoded(block: Block, held: HeldBlock): void {
    const { session, commits } = block;
    const firstSeq = commits[0].seq;
    const entries = this.#bySession.get(session);
    const gapless = commits[commits.length - 1].seq - firstSeq === commits.length - 1;
    if (!held.decodable || !entries || !gapless) return;
    for (const commit of commits) {
      if (entries[commit.seq - 1] === commit) entries[commit.seq - 1] = held;
    }
  }

  /**
   * The wire value at a commit: undefined for a tombstone. A delta applies to its first
   * parent's value (an empty record if that parent is a tombstone or absent); the record given
   * for a delta is the caller's own, the one given for a full value is the commit's.
   */
  valueAt(at: Commit): FieldRecord | undefined {
    return this.#valueAt(at, true);
  }

  /**
   * The wire value at a commit, for reading only: it may be a record the graph keeps (see
   * #rememberDeltaValue), which the caller must not change. A merge reads the value at every
   * leaf, again at each commit that adds one: copying each would cost a record per leaf per
   * commit.
   */
  readValueAt(at: Commit): FieldRecord | undefined {
    return this.#valueAt(at, false);
  }

  #valueAt(at: Commit, copyKnown: boolean): FieldRecord | undefined {
    const deltas: Commit[] = [];
    let commit: Commit | undefined = at;
    let known: FieldRecord | undefined;
    while (commit && commit.kind === "delta") {
      known = this.#deltaValues.get(commitId(commit));
      if (known) break;
      deltas.push(commit);
      const first: string | undefined = commit.parents[0];
      commit = first === undefined ? undefined : this.#reached(first);
    }
    if (!known && deltas.length === 0) return commit?.kind === "value" ? commit.value : undefined;
    if (known && deltas.length === 0 && !copyKnown) return known;
    let value: FieldRecord = known
      ? { ...known }
      : commit?.kind === "value"
      ? { ...commit.value }
      : {};
    for (let i = deltas.length - 1; i >= 0; i--) value = applyDelta(value, deltas[i]);
    if (deltas.length > 0) this.#rememberDeltaValue(commitId(at), value);
    return value;
  }

  /**
   * The first parent a walk to a delta's value reached. It must be held: started from an empty
   * record instead, the value would silently lack every field set before (a repository restored
   * from a snapshot reads its history before anything walks past the snapshot's leaves).
   */
  #reached(id: string): Commit {
    const commit = this.get(id);
    if (commit === undefined) {
      throw new Error(`a value past commit ${id} needs history not read yet`);
    }
    return commit;
  }

  /**
   * Keeps a copy of the value at a delta commit, among the last REMEMBERED_DELTA_VALUES asked for. Merging N
   * commits of a peer one by one asks for the value at each, whose first parent is the one
   * asked for before, and for the value at the same local leaf each time: without this, each
   * walked its delta chain back to a full value, N times over a chain up to N long (X04's two
   * users: two thousand-commit chains made each import quadratic). Values are immutable
   * functions of history, so a copy never goes stale; deltas replace whole fields, so a shallow
   * copy is enough to keep callers from changing it.
   */
  #rememberDeltaValue(id: string, value: FieldRecord): void {
    this.#deltaValues.set(id, { ...value });
    if (this.#deltaValues.size > REMEMBERED_DELTA_VALUES) {
      this.#deltaValues.delete(this.#deltaValues.keys().next().value!);
    }
  }

  /**
   * The lowest common ancestor of `leafIds`: walking back from all leaves in descending stamp
   * order, the first commit every leaf reaches. Because parents have smaller stamps than their
   * children, a commit is visited only after all its visited descendants, so the first commit
   * reached by all leaves has no common-ancestor descendant; among several such "lowest" ones
   * (criss-cross histories) the greatest stamp is chosen, the same on every peer.
   * Undefined when the leaves share no history (concurrent creates of one key). The bit masks
   * say which leaves reach a commit; BigInt keeps any number of leaves correct, and merges are
   * rare enough that its cost does not matter. Commits are told apart by id: one decoded from
   * history is a new object each time it is reached.
   */
  lowestCommonAncestor(leaves: readonly Commit[]): Commit | undefined {
    const everyone = (1n << BigInt(leaves.length)) - 1n;
    const reachedBy = new Map<string, bigint>();
    const frontier = new StampHeap();
    const visit = (commit: Commit | undefined, mask: bigint) => {
      if (!commit) return;
      const id = commitId(commit);
      const known = reachedBy.get(id);
      if (known === undefined) frontier.push(commit);
      reachedBy.set(id, (known ?? 0n) | mask);
    };
    leaves.forEach((leaf, i) => visit(leaf, 1n << BigInt(i)));
    while (frontier.size > 0) {
      const commit = frontier.pop()!;
      const mask = reachedBy.get(commitId(commit))!;
      if (mask === everyone) return commit;
      for (const parent of commit.parents) visit(this.get(parent), mask);
    }
    return undefined;
  }
}

/** Applies a delta commit's change to `value`, in place; any other commit leaves it as it is. */
export function applyDelta(value: FieldRecord, delta: Commit): FieldRecord {
  if (delta.kind !== "delta") return value;
  for (const field of delta.unset) delete value[field];
  for (const field in delta.set) value[field] = delta.set[field];
  return value;
}
