/**
 * Where a declarative query's candidates come from: one index lookup, a union of lookups (an
 * `or` whose every branch an index can serve), or nothing (the caller scans). Candidates are a
 * superset of the matches; the caller applies the whole filter to each.
 *
 * Of the filter's shape (filter.ts), any one ANDed condition is enough: every match satisfies it.
 * An `or` group is enough only when each of its branches is served, since a match may satisfy
 * any one of them. The plan with the fewest index entries to visit wins.
 */
import type { FilterShape, IndexTerm } from "./filter.ts";
import type { FieldIndex } from "./sorted_index.ts";
import type { QueryPlan } from "./types.ts";

export interface Lookup {
  readonly index: FieldIndex;
  readonly term: IndexTerm;
}

export interface AccessPlan {
  /** One lookup, or one per served `or` branch (their union holds every match). */
  readonly lookups: readonly Lookup[];
  /** Index entries the lookups visit: the most candidates they can yield. */
  readonly estimate: number;
}

/** The cheapest way the indexes `indexOf` gives can serve `shape`, or undefined. */
export function planAccess(
  shape: FilterShape,
  indexOf: (field: string) => FieldIndex | undefined,
): AccessPlan | undefined {
  let best: AccessPlan | undefined;
  for (const term of shape.terms) {
    const index = indexOf(term.field);
    if (index === undefined) continue;
    const estimate = index.estimate(term);
    if (best === undefined || estimate < best.estimate) {
      best = { lookups: [{ index, term }], estimate };
    }
  }
  for (const branches of shape.ors) {
    const union = planUnion(branches, indexOf);
    if (union !== undefined && (best === undefined || union.estimate < best.estimate)) best = union;
  }
  return best;
}

/** Every branch served (each by its own cheapest plan), or undefined. */
function planUnion(
  branches: readonly FilterShape[],
  indexOf: (field: string) => FieldIndex | undefined,
): AccessPlan | undefined {
  if (branches.length === 0) return undefined; // matches nothing: a scan says so at no risk
  const lookups: Lookup[] = [];
  let estimate = 0;
  for (const branch of branches) {
    const plan = planAccess(branch, indexOf);
    if (plan === undefined) return undefined;
    lookups.push(...plan.lookups);
    estimate += plan.estimate;
  }
  return { lookups, estimate };
}

/** The keys of the plan's candidates, each once. */
export function candidateKeys(plan: AccessPlan): Iterable<string> {
  const { lookups } = plan;
  if (lookups.length === 1) return lookups[0].index.candidates(lookups[0].term);
  const keys = new Set<string>();
  for (const { index, term } of lookups) {
    for (const key of index.candidates(term)) keys.add(key);
  }
  return keys;
}

/** What `explain()` shows of an index plan (`matched` is filled in by the query). */
export function indexPlan(plan: AccessPlan, examined: number): QueryPlan {
  const lookups = plan.lookups.map(({ index, term }) => ({ index: index.field, use: term.kind }));
  return {
    index: [...new Set(lookups.map((lookup) => lookup.index))].join(" | "),
    use: lookups.length === 1 ? lookups[0].use : "union",
    lookups,
    mode: "index",
    examined,
    matched: 0,
  };
}

/** What `explain()` shows of a scan of every item. */
export function scanPlan(mode: "scan" | "sliced scan", examined: number): QueryPlan {
  return { index: null, use: null, lookups: [], mode, examined, matched: 0 };
}
