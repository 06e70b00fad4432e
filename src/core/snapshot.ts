/**
 * The in-memory state of a repository's heads: what a checkpoint stores and a repository
 * restores from. Shared by repo/ (which produces and restores it) and storage/ (which encodes
 * and decodes it), so neither imports the other.
 */
import type { ChainTip } from "./block.ts";
import type { Commit, FieldRecord } from "./commit.ts";
import type { StoredRun, TextDoc } from "./text/text_doc.ts";

/**
 * Records that the layers above keep per item (the query layer's index entries and query
 * members), held with the item's state so that they are found without a lookup by key: for each
 * slot, its owner and its record side by side (query/attachments.ts). The repository hands the
 * array on from each state of a key to the next.
 */
export type Attachments = unknown[];

/**
 * One item's state: what a repository holds per key. Never changed once made, but for
 * `attached`, which is not part of the item's state but travels with it.
 */
export interface ItemSnapshot {
  /** The key's leaf commits. */
  readonly leaves: readonly Commit[];
  /** The current value (the leaves merged); undefined when deleted. */
  readonly wire: FieldRecord | undefined;
  readonly schema: string;
  /** Deltas behind the single leaf since its last full value (Infinity: unknown). */
  readonly deltas: number;
  /**
   * Whether the item exists, when that is known without decoding its value: set by states
   * restored from a checkpoint, whose `wire` decodes on first access. Otherwise `wire` tells.
   */
  readonly live?: boolean;
  attached?: Attachments;
}

/**
 * An item state with exactly one leaf, held without an array: what every local write leaves
 * behind, so a write allocates one object fewer. `leaves` makes an array each time it is read;
 * hot paths ask `soleLeaf` instead.
 */
export class SoleLeafState implements ItemSnapshot {
  readonly leaf: Commit;
  readonly wire: FieldRecord | undefined;
  readonly schema: string;
  readonly deltas: number;
  attached: Attachments | undefined = undefined;

  constructor(leaf: Commit, wire: FieldRecord | undefined, schema: string, deltas: number) {
    this.leaf = leaf;
    this.wire = wire;
    this.schema = schema;
    this.deltas = deltas;
  }

  get leaves(): readonly Commit[] {
    return [this.leaf];
  }
}

/** The leaf of a state that has exactly one, else undefined; makes no array. */
export function soleLeaf(state: ItemSnapshot): Commit | undefined {
  if (state instanceof SoleLeafState) return state.leaf;
  const leaves = state.leaves;
  return leaves.length === 1 ? leaves[0] : undefined;
}

export interface RepositorySnapshot {
  /** The own session's last commit seq. */
  readonly commitSeq: number;
  readonly tips: ReadonlyMap<string, ChainTip>;
  /** Every key (deleted ones included) with its state, in the repository's order. */
  readonly items: readonly (readonly [string, ItemSnapshot])[];
  /** Every text document (repo/text_fields.ts), its runs copied when the snapshot was taken. */
  readonly texts?: readonly TextSnapshot[];
}

/** One item's text field as a document of character runs. */
export interface TextSnapshot {
  readonly key: string;
  readonly field: string;
  readonly runs: readonly StoredRun[];
}

/**
 * The items of a snapshot read back from storage, kept in storage's own form: a key is found
 * and an item's state made only when asked for, so restoring makes no object per item.
 */
export interface RestoredItems {
  /** How many items (deleted ones included); entries are numbered 0 to count - 1. */
  readonly count: number;
  /** How many of them exist (are not deleted). */
  readonly liveCount: number;
  /** The entry of `key`, or -1; `hash`, when given, is its stringHash (core/string_hash.ts). */
  indexOf(key: string, hash?: number): number;
  keyAt(index: number): string;
  /** Whether entry `index` exists, without making its state. */
  isLive(index: number): boolean;
  /** The state of entry `index`: always the same object. `key` is its key, when at hand. */
  itemAt(index: number, key?: string): ItemSnapshot;
}

/** A snapshot read back from storage, ready to be taken over by a repository. */
export interface RestoredSnapshot {
  readonly commitSeq: number;
  readonly tips: ReadonlyMap<string, ChainTip>;
  readonly items: RestoredItems;
  /**
   * A leaf commit of the snapshot by session and seq, or undefined: the commit graph asks for
   * the ones it does not hold. Always the same object for the same leaf, the one its item's
   * `leaves` holds (graph walks compare commits by identity).
   */
  leaf(session: string, seq: number): Commit | undefined;
  readonly texts: RestoredTexts;
}

/** The text documents of a snapshot read back from storage, each made when first asked for. */
export interface RestoredTexts {
  /** The document of `key`'s `field`, made now; undefined when there is none. */
  text(key: string, field: string): TextDoc | undefined;
  /** Which documents there are: item key and field. */
  texts(): Iterable<readonly [string, string]>;
}
