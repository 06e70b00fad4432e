/**
 * The in-memory state of a repository's heads, as plain data: what a checkpoint stores and a
 * repository restores from. Shared by repo/ (which produces and restores it) and storage/ (which
 * encodes it), so neither imports the other.
 */
import type { ChainTip } from "./block.ts";
import type { Commit, FieldRecord } from "./commit.ts";

export interface SnapshotItem {
  readonly key: string;
  readonly leaves: readonly Commit[];
  /** The current value; undefined when deleted. */
  readonly wire: FieldRecord | undefined;
  readonly schema: string;
  /** Deltas behind the single leaf since its last full value (Infinity: unknown). */
  readonly deltas: number;
}

export interface RepositorySnapshot {
  /** The own session's last commit seq. */
  readonly commitSeq: number;
  readonly tips: ReadonlyMap<string, ChainTip>;
  readonly items: readonly SnapshotItem[];
}
