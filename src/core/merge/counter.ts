/**
 * Counters add: each side's change is an increment (side − base, absent counting as 0), and the
 * result is base plus every increment. Two peers that each add 1 to 5 give 7, not 6. A sum past
 * the largest finite number stays at it (±Number.MAX_VALUE): a counter is always finite.
 */
import { compareStamps, type FieldMerge } from "./types.ts";

export const mergeCounter: FieldMerge<number> = (base, sides) => {
  const origin = base ?? 0;
  let changes = 0;
  let changedValue = origin;
  let present = base !== undefined;
  for (const side of sides) {
    if (side.value !== undefined) present = true;
    if ((side.value ?? 0) === origin) continue;
    changedValue = side.value ?? 0;
    changes++;
  }
  if (!present) return undefined;
  if (changes === 0) return origin;
  if (changes === 1) return changedValue;
  // Floating-point addition is not associative: adding in stamp order keeps the sum
  // independent of the order the sides arrive in.
  const changed = sides.filter((side) => (side.value ?? 0) !== origin);
  changed.sort((a, b) => compareStamps(a.stamp, b.stamp));
  // Saturating at each step, in that order, keeps every replica's result the same and finite.
  let total = origin;
  for (const side of changed) total = saturate(total + ((side.value ?? 0) - origin));
  return total;
};

/** ±Infinity as ±Number.MAX_VALUE. (No NaN can come: `total` is finite, the increment not NaN.) */
function saturate(sum: number): number {
  return Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, sum));
}
