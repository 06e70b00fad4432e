/**
 * The order of a query's members. Every order ends with the item key as tie-break, so it is
 * total: each member has exactly one place, which a binary search finds again on removal.
 */
import type { FieldRecord } from "../core/commit.ts";
import { compareKeys, compareWire } from "./wire_order.ts";

/**
 * A query member: the item as it was when it last matched. The same object stays in the query
 * while the item keeps matching; each change replaces its `wire` (and `schema`) after the member
 * was found by the old ones, so the order always reads what the member was placed by.
 */
export interface Member<R> {
  readonly key: string;
  /** Its wire value (in the query schema's shape): a stored value, never mutated itself. */
  wire: FieldRecord;
  /** The schema id the item is stored under. */
  schema: string;
  /** The result element (e.g. an Item handle), built on first need. */
  view: R | undefined;
  /** Where it stands with the query's sorted list (see `Placing`). */
  placing: Placing;
}

/**
 * A member's standing with the sorted list of a query that places changes in batches (live_query
 * `#note` and `#place`). "Listed": in the list, where its `wire` places it; "queued": waiting in
 * the batch to be placed; a member that no longer matches stays in the member map as a tombstone,
 * taken up again if the item matches again.
 * - PLACED: matches, listed.
 * - ENTERING: matches, queued to enter.
 * - STAYING: matches, listed, queued (it left, then matched again at the same place).
 * - LEAVING: no longer matches, listed, queued to leave.
 * - GONE: no longer matches, never listed, queued (it entered and left in the same batch).
 * - MOVED: listed, queued to leave; out of the member map, where a new member for the item
 *   enters at its new place.
 * - OUT: a tombstone: no longer matches, neither listed nor queued.
 * - CLEARED: a tombstone cleared out of the member map.
 */
export type Placing =
  | typeof PLACED
  | typeof ENTERING
  | typeof STAYING
  | typeof LEAVING
  | typeof GONE
  | typeof MOVED
  | typeof OUT
  | typeof CLEARED;
export const PLACED = 0;
export const ENTERING = 1;
export const STAYING = 2;
export const LEAVING = 3;
export const GONE = 4;
export const MOVED = 5;
export const OUT = 6;
export const CLEARED = 7;

export type MemberOrder<R> = (a: Member<R>, b: Member<R>) => number;

/** The order by the given wire fields, then key; `desc` reverses all of it. */
export function fieldOrder<R>(fields: readonly string[], desc: boolean): MemberOrder<R> {
  const dir = desc ? -1 : 1;
  if (fields.length === 0) return (a, b) => dir * compareKeys(a.key, b.key);
  if (fields.length === 1) {
    const field = fields[0];
    return (a, b) => {
      const x = a.wire[field];
      const y = b.wire[field];
      if (typeof x === "number" && typeof y === "number" && x !== y) return x < y ? -dir : dir;
      const c = compareWire(x, y);
      return dir * (c !== 0 ? c : compareKeys(a.key, b.key));
    };
  }
  return (a, b) => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareWire(a.wire[fields[i]], b.wire[fields[i]]);
      if (c !== 0) return dir * c;
    }
    return dir * compareKeys(a.key, b.key);
  };
}

/**
 * The order by a caller's comparator of result elements, then key; `desc` reverses it. When the
 * comparator (or building an element) throws, `failed` is told and the two count as tied, so the
 * order still places every member (by key among such ties).
 */
export function comparatorOrder<R>(
  compare: (a: R, b: R) => number,
  view: (member: Member<R>) => R,
  desc: boolean,
  failed: (a: Member<R>, b: Member<R>, err: unknown) => void,
): MemberOrder<R> {
  const dir = desc ? -1 : 1;
  return (a, b) => {
    if (a === b) return 0;
    let c: number;
    try {
      c = compare(view(a), view(b));
    } catch (err) {
      failed(a, b, err);
      c = 0;
    }
    if (c < 0) return -dir;
    if (c > 0) return dir;
    return dir * compareKeys(a.key, b.key);
  };
}

/** Whether two wire values of an item sort the same by `fields` (so its place is unchanged). */
export function sameSortKey(fields: readonly string[], a: FieldRecord, b: FieldRecord): boolean {
  for (let i = 0; i < fields.length; i++) {
    const x = a[fields[i]];
    const y = b[fields[i]];
    if (x !== y && compareWire(x, y) !== 0) return false;
  }
  return true;
}
