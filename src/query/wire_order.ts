/**
 * One total order over wire values, shared by sorting and indexes, so that a query sorted by a
 * field and an index on that field agree on where every value goes:
 *
 *   missing < null < false < true < numbers < strings < arrays (sets) < objects (maps)
 *
 * Numbers compare numerically (dates are epoch milliseconds on the wire), strings by UTF-16 code
 * units (JavaScript's `<`), arrays element by element, objects by their JSON text.
 */
import type { WireValue } from "../core/commit.ts";

/** Position of a value's kind in the order above. */
export function wireRank(value: WireValue | undefined): number {
  switch (typeof value) {
    case "undefined":
      return 0;
    case "boolean":
      return 2;
    case "number":
      return 3;
    case "string":
      return 4;
    default:
      return value === null ? 1 : Array.isArray(value) ? 5 : 6;
  }
}

/** -1, 0 or 1 as `a` sorts before, with, or after `b`. */
export function compareWire(a: WireValue | undefined, b: WireValue | undefined): number {
  if (a === b) return 0;
  const ta = typeof a;
  if (ta === typeof b && (ta === "number" || ta === "string")) {
    return (a as number) < (b as number) ? -1 : 1;
  }
  const ra = wireRank(a);
  const rb = wireRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (ra === 2) return a ? 1 : -1; // booleans, not equal
  if (ra === 5) return compareArrays(a as WireValue[], b as WireValue[]);
  if (ra === 6) {
    const x = JSON.stringify(a);
    const y = JSON.stringify(b);
    return x === y ? 0 : x < y ? -1 : 1;
  }
  return 0; // null and null
}

function compareArrays(a: WireValue[], b: WireValue[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareWire(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Orders two keys (the tie-break of every query order). */
export function compareKeys(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
