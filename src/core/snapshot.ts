/**
 * The in-memory state of a repository's heads: what a checkpoint stores and a repository
 * restores from. Shared by repo/ (which produces and restores it) and storage/ (which encodes
 * and decodes it), so neither imports the other.
 */
import type { ChainTip } from "./block.ts";
import type { Commit, FieldRecord } from "./commit.ts";
import type { ItemState } from "./item_state.ts";
import type { StoredRun, TextDoc } from "./text/text_doc.ts";

export interface RepositorySnapshot {
  /** The own session's last commit seq. */
  readonly commitSeq: number;
  readonly tips: ReadonlyMap<string, ChainTip>;
  /** Every key (deleted ones included) with its state, in the repository's order. */
  readonly items: readonly (readonly [string, ItemState])[];
  /** Every text document (repo/text_fields.ts), its runs copied when the snapshot was taken. */
  readonly texts?: readonly TextSnapshot[];
  /**
   * The keys of items that wait for a schema not registered (their concurrent versions merge,
   * or their text fields read as text, once it is): merged again when it is. "all": any item
   * may (none was registered), and each is looked at when one is.
   */
  readonly unresolved?: ReadonlySet<string> | "all";
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
  itemAt(index: number, key?: string): ItemState;
  /**
   * Reads `fields` of entry `index`'s stored value into `into` (undefined for a field it lacks),
   * without making its state or decoding the rest, when the entry exists and is stored under
   * `schema`; otherwise returns false and reads nothing. Pass the same `fields` array each time:
   * what it takes to read them is kept for it.
   */
  readFields?(index: number, schema: string, fields: readonly string[], into: FieldRecord): boolean;
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
  /** The keys of items that waited for a schema, or "all" (RepositorySnapshot.unresolved). */
  readonly unresolved: readonly string[] | "all";
}

/** The text documents of a snapshot read back from storage, each made when first asked for. */
export interface RestoredTexts {
  /** The document of `key`'s `field`, made now; undefined when there is none. */
  text(key: string, field: string): TextDoc | undefined;
  /** Whether there is a document of `key`'s `field` (none is made). */
  has(key: string, field: string): boolean;
  /** Which documents there are: item key and field. */
  texts(): Iterable<readonly [string, string]>;
}
