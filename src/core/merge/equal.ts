/**
 * Wire-value equality for the merge rules, and the shortcut every collection rule takes first:
 * when the sides do not disagree, the result is known without merging anything.
 */
import type { MapScalar } from "../field_type.ts";
import type { MergeSide } from "./types.ts";

export type Same<V> = (a: V, b: V) => boolean;

/** Set wire values (sorted, unique) holding the same elements. */
export function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Map wire values with the same keys bound to the same scalars (key order ignored). */
export function sameScalarMaps(
  a: { readonly [key: string]: MapScalar },
  b: { readonly [key: string]: MapScalar },
): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (!Object.hasOwn(b, key) || a[key] !== b[key]) return false;
  return true;
}

/** Equality where absent (undefined) equals only absent. */
export function sameOrBothAbsent<V>(a: V | undefined, b: V | undefined, same: Same<V>): boolean {
  return a === b || (a !== undefined && b !== undefined && same(a, b));
}

/** Marks sides that changed the field in different ways. */
export const CONFLICT: unique symbol = Symbol("conflict");

/**
 * The result when nothing needs merging: `base` if no side changed it, or the one value every
 * changing side agrees on (which makes merging a side with a copy of itself a no-op).
 * CONFLICT when two sides changed it differently. Allocates nothing.
 */
export function agreedValue<V>(
  base: V | undefined,
  sides: readonly MergeSide<V>[],
  same: Same<V>,
): V | undefined | typeof CONFLICT {
  let agreed = base;
  let changed = false;
  for (const side of sides) {
    if (sameOrBothAbsent(side.value, base, same)) continue;
    if (!changed) {
      agreed = side.value;
      changed = true;
    } else if (!sameOrBothAbsent(side.value, agreed, same)) {
      return CONFLICT;
    }
  }
  return agreed;
}
