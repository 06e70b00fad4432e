/**
 * Shared vocabulary of the per-field merge rules (docs/merge-rules.md).
 *
 * When an item has several leaf commits, its value is merged field by field from the value at
 * the leaves' lowest common ancestor (`base`) and each leaf's value (`sides`). Every rule is a
 * pure function whose result does not depend on the order of `sides`: ties are broken by the
 * sides' stamps, so every peer computes the same value from the same commits.
 */

/** When and by whom a side was written; a total order: hlc, then session, then seq. */
export interface Stamp {
  readonly hlc: number;
  readonly session: string;
  readonly seq: number;
}

export function compareStamps(a: Stamp, b: Stamp): number {
  if (a.hlc !== b.hlc) return a.hlc < b.hlc ? -1 : 1;
  if (a.session !== b.session) return a.session < b.session ? -1 : 1;
  return a.seq - b.seq;
}

/** One leaf's value of the field (wire form); undefined when the field is absent there. */
export interface MergeSide<V> {
  readonly value: V | undefined;
  readonly stamp: Stamp;
}

/** Merges one field; undefined means the field is absent in the result. */
export type FieldMerge<V> = (base: V | undefined, sides: readonly MergeSide<V>[]) => V | undefined;
