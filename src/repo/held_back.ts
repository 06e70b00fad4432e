/**
 * Commits held back: read from the repository's own log, or imported, but not applied, because
 * an ancestor is missing — lost with a damaged log record — or is itself held back. Damage then
 * costs only the items whose history passes through the lost commits: every other commit of the
 * same blocks applies. A held-back commit applies as soon as its missing parents arrive (a peer
 * that holds the lost block sends it back through the normal exchange), and so do the commits
 * that waited for it.
 */
import { type Commit, commitId } from "../core/commit.ts";

export class HeldBackCommits {
  /** Held-back commits by id. */
  readonly #commits = new Map<string, Commit>();
  /** A parent's id → the held-back commits that wait for it. */
  readonly #waiting = new Map<string, Commit[]>();

  get size(): number {
    return this.#commits.size;
  }

  // Both look at the size first: a lookup hashes the id, a fresh string on every import (see
  // "Item keys are never hashed by V8 on the write path" in docs/architecture.md), and this set
  // is empty unless storage was damaged.
  has(id: string): boolean {
    return this.#commits.size > 0 && this.#commits.has(id);
  }

  get(id: string): Commit | undefined {
    return this.#commits.size > 0 ? this.#commits.get(id) : undefined;
  }

  /** How many items have commits held back. */
  items(): number {
    const keys = new Set<string>();
    for (const commit of this.#commits.values()) keys.add(commit.key);
    return keys.size;
  }

  /** Holds `commit` back until `parent` (missing or itself held back) has been applied. */
  hold(commit: Commit, parent: string): void {
    this.#commits.set(commitId(commit), commit);
    const waiting = this.#waiting.get(parent);
    if (waiting) waiting.push(commit);
    else this.#waiting.set(parent, [commit]);
  }

  /**
   * The commits that waited for `id`, now applied, taken out of this set. A commit with another
   * parent still missing must be held again by the caller.
   */
  release(id: string): Commit[] {
    const waiting = this.#waiting.get(id);
    if (!waiting) return [];
    this.#waiting.delete(id);
    for (const commit of waiting) this.#commits.delete(commitId(commit));
    return waiting;
  }
}
