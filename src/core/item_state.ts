/**
 * An item's state — what a repository holds per key — and the part of it its readers see. Shared
 * by repo/ (which makes states), query/ and db/ (which read them) and storage/ (which stores and
 * restores them in checkpoints).
 */
import type { Commit, FieldRecord } from "./commit.ts";

/**
 * Records that the query layer keeps per item (its index entries and query members), held with
 * the item's state so that they are found without a lookup by key. Opaque below the query layer:
 * only query/attachments.ts makes, reads and fills them; the repository hands them on, unread,
 * from each state of a key to the next.
 */
export interface Attachments {
  readonly [filledByQueryLayer]: never;
}

/** Makes `Attachments` a type of its own that no other value has by accident. */
declare const filledByQueryLayer: unique symbol;

/**
 * An item's value as its readers see it (typed reads, queries, indexes): the wire value and the
 * schema it follows. An ItemState is one; so is a merge's result.
 */
export interface ItemValue {
  /** Wire value; undefined when the item is deleted. */
  readonly wire: FieldRecord | undefined;
  /** Schema id the value follows. */
  readonly schema: string;
  /** Records the query layer keeps with the item (see `Attachments`). */
  attached?: Attachments;
}

/**
 * One item's state: what a repository holds per key, and what a checkpoint stores of it
 * (core/snapshot.ts). Replaced whole on every change, never changed once made, but for
 * `attached`, which is not part of the item's state but travels with it. A local write leaves a
 * SoleLeafState; states restored from a checkpoint decode value and leaves on first access, so
 * code that only asks whether an item exists reads `live` first.
 */
export interface ItemState extends ItemValue {
  /** The key's leaf commits. */
  readonly leaves: readonly Commit[];
  /** The current value (the leaves merged); undefined when deleted. */
  readonly wire: FieldRecord | undefined;
  /** Deltas behind the single leaf since its last full value (Infinity: unknown). */
  readonly deltas: number;
  /**
   * Whether the item exists, when that is known without decoding its value: set by states
   * restored from a checkpoint, whose `wire` decodes on first access. Otherwise `wire` tells.
   */
  readonly live?: boolean;
}

/**
 * An item state with exactly one leaf, held without an array: what every local write leaves
 * behind, so a write allocates one object fewer. `leaves` makes an array each time it is read;
 * hot paths ask `soleLeaf` instead.
 */
export class SoleLeafState implements ItemState {
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
export function soleLeaf(state: ItemState): Commit | undefined {
  if (state instanceof SoleLeafState) return state.leaf;
  const leaves = state.leaves;
  return leaves.length === 1 ? leaves[0] : undefined;
}
