/**
 * Every commit a repository holds, by id, with the two walks the engine needs: the value at a
 * commit (full values and field deltas) and the lowest common ancestor of a leaf set.
 *
 * Invariant kept by the repository on entry: a commit's parents are present, belong to the same
 * key, and have a smaller stamp (hlc, session, seq). So stamp order is a topological order.
 */
import { type Commit, commitId, type FieldRecord } from "../core/commit.ts";
import { StampHeap } from "./stamp_heap.ts";

export class CommitGraph {
  readonly #commits = new Map<string, Commit>();

  get size(): number {
    return this.#commits.size;
  }

  has(id: string): boolean {
    return this.#commits.has(id);
  }

  get(id: string): Commit | undefined {
    return this.#commits.get(id);
  }

  add(commit: Commit): void {
    this.#commits.set(commitId(commit), commit);
  }

  /**
   * The wire value at a commit: undefined for a tombstone. A delta applies to its first
   * parent's value (an empty record if that parent is a tombstone or absent).
   */
  valueAt(id: string): FieldRecord | undefined {
    const deltas: Commit[] = [];
    let commit = this.#commits.get(id);
    while (commit && commit.body.kind === "delta") {
      deltas.push(commit);
      const first = commit.parents[0];
      commit = first === undefined ? undefined : this.#commits.get(first);
    }
    if (deltas.length === 0) return commit?.body.kind === "value" ? commit.body.value : undefined;
    let value: FieldRecord = commit?.body.kind === "value" ? { ...commit.body.value } : {};
    for (let i = deltas.length - 1; i >= 0; i--) value = applyDelta(value, deltas[i]);
    return value;
  }

  /**
   * The lowest common ancestor of `leafIds`: walking back from all leaves in descending stamp
   * order, the first commit every leaf reaches. Because parents have smaller stamps than their
   * children, a commit is visited only after all its visited descendants, so the first commit
   * reached by all leaves has no common-ancestor descendant; among several such "lowest" ones
   * (criss-cross histories) the greatest stamp is chosen, the same on every peer.
   * Undefined when the leaves share no history (concurrent creates of one key).
   */
  lowestCommonAncestor(leafIds: readonly string[]): string | undefined {
    const everyone = (1n << BigInt(leafIds.length)) - 1n;
    const reachedBy = new Map<string, bigint>();
    const frontier = new StampHeap();
    const visit = (id: string, mask: bigint) => {
      const known = reachedBy.get(id);
      if (known === undefined) {
        const commit = this.#commits.get(id);
        if (!commit) return;
        reachedBy.set(id, mask);
        frontier.push(commit);
      } else reachedBy.set(id, known | mask);
    };
    leafIds.forEach((id, i) => visit(id, 1n << BigInt(i)));
    while (frontier.size > 0) {
      const commit = frontier.pop()!;
      const id = commitId(commit);
      const mask = reachedBy.get(id)!;
      if (mask === everyone) return id;
      for (const parent of commit.parents) visit(parent, mask);
    }
    return undefined;
  }
}

function applyDelta(value: FieldRecord, delta: Commit): FieldRecord {
  if (delta.body.kind !== "delta") return value;
  for (const field of delta.body.unset) delete value[field];
  for (const field in delta.body.set) value[field] = delta.body.set[field];
  return value;
}
