/**
 * Sets merge per element: an element any side added is in the result, an element any side
 * removed (relative to base) is not. So concurrent adds of different elements all survive, and
 * a removal is never undone by a side that simply kept the element. An absent set counts as
 * empty; the result is absent only when the field is absent everywhere.
 */
import { agreedValue, CONFLICT, sameStrings } from "./equal.ts";
import type { FieldMerge } from "./types.ts";

export const mergeSet: FieldMerge<string[]> = (base, sides) => {
  const agreed = agreedValue(base, sides, sameStrings);
  if (agreed !== CONFLICT) return agreed ?? (base === undefined ? undefined : []);

  const inBase = new Set(base);
  const added = new Set<string>();
  const removed = new Set<string>();
  for (const side of sides) {
    const inSide = new Set(side.value);
    for (const element of inSide) if (!inBase.has(element)) added.add(element);
    for (const element of inBase) if (!inSide.has(element)) removed.add(element);
  }
  const result: string[] = [];
  for (const element of inBase) if (!removed.has(element)) result.push(element);
  for (const element of added) result.push(element);
  return result.sort();
};
