/**
 * A reference implementation of query semantics for the oracle tests: filters evaluated on typed
 * values (what `toObject()` returns), the documented order, computed from scratch with no index
 * and no incremental state. Written independently of src/query/ on purpose.
 */
import type { AnySchema, RepositoryHandle } from "cairndb";

export type Random = () => number;
export const int = (rng: Random, min: number, max: number) =>
  min + Math.floor(rng() * (max - min + 1));
export const pick = <T>(rng: Random, list: readonly T[]): T =>
  list[Math.floor(rng() * list.length)];
export const chance = (rng: Random, p: number) => rng() < p;

type Typed = Readonly<Record<string, unknown>>;
type Filter = { readonly [field: string]: unknown };

/** A typed value as a comparable plain value: Date → ms, Set → sorted array. */
function plainValue(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (value instanceof Set) return [...value].sort();
  return value;
}

function rank(v: unknown): number {
  if (v === undefined) return 0;
  if (v === null) return 1;
  if (typeof v === "boolean") return 2;
  if (typeof v === "number") return 3;
  if (typeof v === "string") return 4;
  return Array.isArray(v) ? 5 : 6;
}

/** The documented total order of field values. */
export function compareValues(a: unknown, b: unknown): number {
  const x = plainValue(a);
  const y = plainValue(b);
  const rx = rank(x);
  const ry = rank(y);
  if (rx !== ry) return rx - ry;
  if (rx === 5) {
    const xs = x as unknown[];
    const ys = y as unknown[];
    for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
      const c = compareValues(xs[i], ys[i]);
      if (c !== 0) return c;
    }
    return xs.length - ys.length;
  }
  if (x === y) return 0;
  return (x as number) < (y as number) ? -1 : 1;
}

function matchesCondition(value: unknown, condition: unknown): boolean {
  const ops = condition !== null && typeof condition === "object" && !(condition instanceof Date)
    ? condition as Record<string, unknown>
    : { eq: condition };
  const v = plainValue(value);
  for (const [op, raw] of Object.entries(ops)) {
    if (raw === undefined) continue;
    const operand = plainValue(raw);
    const comparable = (typeof v === "number" || typeof v === "string") &&
      typeof v === typeof operand;
    let ok: boolean;
    switch (op) {
      case "eq":
        ok = v === operand;
        break;
      case "ne":
        ok = v !== operand;
        break;
      case "gt":
        ok = comparable && (v as number) > (operand as number);
        break;
      case "gte":
        ok = comparable && (v as number) >= (operand as number);
        break;
      case "lt":
        ok = comparable && (v as number) < (operand as number);
        break;
      case "lte":
        ok = comparable && (v as number) <= (operand as number);
        break;
      case "in":
        ok = (operand as unknown[]).some((o) => plainValue(o) === v);
        break;
      case "has":
        ok = Array.isArray(v) && v.includes(operand);
        break;
      case "prefix":
        ok = typeof v === "string" && v.startsWith(operand as string);
        break;
      default:
        throw new Error(`reference: unknown operator ${op}`);
    }
    if (!ok) return false;
  }
  return true;
}

export function matchesFilter(values: Typed, filter: Filter): boolean {
  for (const [name, condition] of Object.entries(filter)) {
    if (condition === undefined) continue;
    if (name === "and") {
      if (!(condition as Filter[]).every((sub) => matchesFilter(values, sub))) return false;
    } else if (name === "or") {
      if (!(condition as Filter[]).some((sub) => matchesFilter(values, sub))) return false;
    } else if (!matchesCondition(values[name], condition)) return false;
  }
  return true;
}

export interface ReferenceQuery {
  readonly schema: AnySchema;
  readonly where?: Filter | ((values: Typed) => boolean);
  readonly sortBy?: readonly string[];
  /** A comparator of typed values instead of sort fields (ties still go by key). */
  readonly compare?: (a: Typed, b: Typed) => number;
  readonly desc?: boolean;
  readonly limit?: number;
}

/** The keys a query must return, in order, computed by a full scan from scratch. */
export function referenceKeys(repo: RepositoryHandle, query: ReferenceQuery): string[] {
  const rows: { key: string; values: Typed }[] = [];
  for (const key of repo.keys()) {
    const item = repo.get(key, query.schema);
    if (!item) continue;
    const values = item.toObject() as Typed;
    const where = query.where;
    if (typeof where === "function" ? !where(values) : where && !matchesFilter(values, where)) {
      continue;
    }
    rows.push({ key, values });
  }
  const fields = query.sortBy ?? [];
  const dir = query.desc ? -1 : 1;
  rows.sort((a, b) => {
    if (query.compare) {
      const c = Math.sign(query.compare(a.values, b.values));
      if (c !== 0) return dir * c;
    }
    for (const field of fields) {
      const c = compareValues(a.values[field], b.values[field]);
      if (c !== 0) return dir * c;
    }
    return dir * (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  });
  const keys = rows.map((row) => row.key);
  return query.limit === undefined ? keys : keys.slice(0, query.limit);
}

/** An environment variable, where the runtime has one (not in the browser). */
export function envInteger(name: string): number | undefined {
  try {
    const g = globalThis as {
      process?: { env?: Record<string, string | undefined> };
      Deno?: { env: { get(name: string): string | undefined } };
    };
    const text = g.process?.env?.[name] ?? g.Deno?.env.get(name);
    return text !== undefined && /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
  } catch {
    return undefined;
  }
}
