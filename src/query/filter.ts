/**
 * Declarative filters: `{ count: { gt: 10 }, tags: { has: "x" }, or: [...] }`, compiled once
 * into a closure over an item's wire record, so a scan calls one function per item and allocates
 * nothing. Operands are typed values (a Date for a date field) and are turned into their wire
 * form at compile time (a Date becomes epoch milliseconds).
 *
 * Semantics (docs/queries.md): the fields of one object and the operators of one condition are
 * ANDed; `and: [...]` ANDs filters, `or: [...]` ORs them. A missing field fails every operator
 * except `ne`. Range operators (`gt`, `gte`, `lt`, `lte`) compare numbers with numbers and
 * strings with strings (by UTF-16 code units); a value of another type never matches them.
 */
import type { FieldRecord, WireValue } from "../core/commit.ts";
import { CairnError } from "../core/errors.ts";
import type { FieldType } from "../core/field_type.ts";
import type { FieldDefs } from "../core/schema_types.ts";

/** A filter as given, before compilation (the typed forms are in types.ts). */
export type FilterInput = { readonly [field: string]: unknown };

export type WirePredicate = (wire: FieldRecord) => boolean;

/** What an index can serve: one ANDed condition on one field, in wire values. */
export type IndexTerm =
  | { readonly field: string; readonly kind: "eq"; readonly values: readonly WireValue[] }
  | { readonly field: string; readonly kind: "has"; readonly values: readonly WireValue[] }
  | { readonly field: string; readonly kind: "prefix"; readonly prefix: string }
  | {
    readonly field: string;
    readonly kind: "range";
    readonly lower?: Bound;
    readonly upper?: Bound;
  };

export interface Bound {
  readonly value: number | string;
  readonly inclusive: boolean;
}

/**
 * What the index planner can use of a filter: conditions every match satisfies (`terms`: the top
 * level and nested `and`), and `or` groups, each a list of branches every match satisfies at
 * least one of.
 */
export interface FilterShape {
  readonly terms: readonly IndexTerm[];
  readonly ors: readonly (readonly FilterShape[])[];
}

export interface CompiledFilter extends FilterShape {
  readonly test: WirePredicate;
  /** Every field `test` reads: it answers the same on a record holding just these. */
  readonly reads: readonly string[];
}

interface ShapeBuilder extends FilterShape {
  readonly terms: IndexTerm[];
  readonly ors: FilterShape[][];
}

const OPERATORS = new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "has", "prefix"]);

/** Operators each field type accepts (when the query names a schema). */
const ALLOWED: Record<FieldType, ReadonlySet<string>> = {
  string: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "prefix"]),
  text: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "prefix"]),
  number: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in"]),
  counter: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in"]),
  date: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in"]),
  boolean: new Set(["eq", "ne", "in"]),
  set: new Set(["has"]),
  map: new Set(),
};

const ALWAYS: WirePredicate = () => true;
const NEVER: WirePredicate = () => false;

/** Compiles `filter`; with `fields` (the query's schema), field names and operand types are checked. */
export function compileFilter(filter: unknown, fields?: FieldDefs): CompiledFilter {
  const shape: ShapeBuilder = { terms: [], ors: [] };
  const reads = new Set<string>();
  const test = compileObject(filter, fields, shape, reads);
  return { test, terms: shape.terms, ors: shape.ors, reads: [...reads] };
}

/**
 * How deep `and` and `or` may nest. Beyond any filter written by hand; it stops a filter that
 * contains itself with E_BAD_ARGUMENT rather than a RangeError from the stack.
 */
const MAX_FILTER_DEPTH = 64;

/** Compiles one filter object; what an index can serve of it goes into `shape`. */
function compileObject(
  filter: unknown,
  fields: FieldDefs | undefined,
  shape: ShapeBuilder,
  reads: Set<string>,
  depth = 0,
): WirePredicate {
  if (!isPlainObject(filter)) throw bad("a filter is an object of field conditions");
  if (depth > MAX_FILTER_DEPTH) {
    throw bad(
      `"and" and "or" nest over ${MAX_FILTER_DEPTH} deep (does the filter contain itself?)`,
    );
  }
  const parts: WirePredicate[] = [];
  for (const name of Object.keys(filter)) {
    const condition = (filter as FilterInput)[name];
    if (condition === undefined) continue;
    if (name === "and" || name === "or") {
      if (!Array.isArray(condition)) throw bad(`"${name}" takes an array of filters`);
      if (name === "and") {
        parts.push(
          all(condition.map((sub) => compileObject(sub, fields, shape, reads, depth + 1))),
        );
      } else {
        const branches = condition.map((): ShapeBuilder => ({ terms: [], ors: [] }));
        parts.push(
          any(condition.map((sub, i) => compileObject(sub, fields, branches[i], reads, depth + 1))),
        );
        shape.ors.push(branches);
      }
    } else {
      reads.add(name);
      parts.push(compileField(name, condition, fields, shape.terms));
    }
  }
  return all(parts);
}

function compileField(
  field: string,
  condition: unknown,
  fields: FieldDefs | undefined,
  terms: IndexTerm[],
): WirePredicate {
  const type = fieldType(field, fields);
  const ops: Record<string, unknown> = isPlainObject(condition)
    ? condition as Record<string, unknown>
    : { eq: condition };
  const parts: WirePredicate[] = [];
  let lower: Bound | undefined;
  let upper: Bound | undefined;
  /** Bounds of two types (a number and a string): no value is of both, so nothing matches. */
  let mixed = false;
  for (const op of Object.keys(ops)) {
    const operand = ops[op];
    if (operand === undefined) continue;
    if (!OPERATORS.has(op)) throw bad(`unknown operator "${op}" on field ${field}`);
    if (type && !ALLOWED[type].has(op)) {
      throw bad(`operator "${op}" does not apply to ${type} field ${field}`);
    }
    switch (op) {
      case "eq":
      case "ne": {
        const value = scalar(operand, field, op, type);
        parts.push(op === "eq" ? (w) => w[field] === value : (w) => w[field] !== value);
        if (op === "eq") terms.push({ field, kind: "eq", values: [value] });
        break;
      }
      case "in": {
        if (!Array.isArray(operand)) throw bad(`"in" on field ${field} takes an array`);
        const values = [...new Set(operand.map((v) => scalar(v, field, op, type)))];
        const set = new Set<WireValue>(values);
        parts.push((w) => set.has(w[field]));
        terms.push({ field, kind: "eq", values });
        break;
      }
      case "has": {
        if (typeof operand !== "string") throw bad(`"has" on field ${field} takes a string`);
        parts.push((w) => sortedIncludes(w[field], operand));
        terms.push({ field, kind: "has", values: [operand] });
        break;
      }
      case "prefix": {
        if (typeof operand !== "string") throw bad(`"prefix" on field ${field} takes a string`);
        parts.push((w) => {
          const v = w[field];
          return typeof v === "string" && v.startsWith(operand);
        });
        terms.push({ field, kind: "prefix", prefix: operand });
        break;
      }
      default: { // gt, gte, lt, lte: gathered into one range
        const value = scalar(operand, field, op, type);
        if (typeof value !== "number" && typeof value !== "string") {
          throw bad(`"${op}" on field ${field} takes a number, string or Date`);
        }
        const bound = { value, inclusive: op === "gte" || op === "lte" };
        mixed ||= [lower, upper].some((other) => other && typeof other.value !== typeof value);
        if (op[0] === "g") lower = tighter(lower, bound, 1);
        else upper = tighter(upper, bound, -1);
      }
    }
  }
  if (lower || upper) {
    if (mixed) parts.push(NEVER);
    else parts.push(rangeTest(field, lower, upper));
    terms.push({ field, kind: "range", lower, upper });
  }
  return all(parts);
}

/**
 * Of two bounds on one side, the one that admits less (`side` 1 for lower, -1 for upper); of two
 * types, the later (the range then matches nothing: see `mixed`).
 */
function tighter(current: Bound | undefined, next: Bound, side: 1 | -1): Bound {
  if (!current || typeof current.value !== typeof next.value) return next;
  if (current.value === next.value) {
    return current.inclusive && !next.inclusive ? next : current;
  }
  return (next.value > current.value) === (side === 1) ? next : current;
}

function rangeTest(field: string, lower?: Bound, upper?: Bound): WirePredicate {
  const kind = typeof (lower ?? upper)!.value;
  const lo = lower?.value;
  const hi = upper?.value;
  if (lower && upper) {
    if (lower.inclusive && upper.inclusive) {
      return (w) => {
        const v = w[field];
        return typeof v === kind && v! >= lo! && v! <= hi!;
      };
    }
    if (lower.inclusive) {
      return (w) => {
        const v = w[field];
        return typeof v === kind && v! >= lo! && v! < hi!;
      };
    }
    if (upper.inclusive) {
      return (w) => {
        const v = w[field];
        return typeof v === kind && v! > lo! && v! <= hi!;
      };
    }
    return (w) => {
      const v = w[field];
      return typeof v === kind && v! > lo! && v! < hi!;
    };
  }
  if (lower) {
    return lower.inclusive
      ? (w) => {
        const v = w[field];
        return typeof v === kind && v! >= lo!;
      }
      : (w) => {
        const v = w[field];
        return typeof v === kind && v! > lo!;
      };
  }
  return upper!.inclusive
    ? (w) => {
      const v = w[field];
      return typeof v === kind && v! <= hi!;
    }
    : (w) => {
      const v = w[field];
      return typeof v === kind && v! < hi!;
    };
}

/** An operand in wire form: a Date becomes epoch ms; only scalars are accepted. */
function scalar(operand: unknown, field: string, op: string, type?: FieldType): WireValue {
  let value = operand;
  if (value instanceof Date) {
    value = value.getTime();
    if (!Number.isFinite(value)) throw bad(`"${op}" on field ${field}: invalid Date`);
    if (type && type !== "date") throw bad(`"${op}" on ${type} field ${field} takes no Date`);
  }
  switch (typeof value) {
    case "number":
      if (!Number.isFinite(value)) throw bad(`"${op}" on field ${field}: not a finite number`);
      if (type && type !== "number" && type !== "counter" && type !== "date") break;
      return value === 0 ? 0 : value; // -0 is written as 0
    case "string":
      if (type && type !== "string" && type !== "text") break;
      return value;
    case "boolean":
      if (type && type !== "boolean") break;
      return value;
  }
  throw bad(`"${op}" on ${type ?? "the"} field ${field} got ${describe(operand)}`);
}

function fieldType(field: string, fields: FieldDefs | undefined): FieldType | undefined {
  if (!fields) return undefined;
  if (!Object.hasOwn(fields, field)) {
    throw new CairnError("E_UNKNOWN_FIELD", `the query's schema has no field ${field}`);
  }
  return fields[field].type;
}

/** Whether the sorted string array `set` (a set field's wire value) holds `element`. */
function sortedIncludes(set: WireValue | undefined, element: string): boolean {
  if (!Array.isArray(set)) return false;
  let lo = 0;
  let hi = set.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = set[mid] as string;
    if (v === element) return true;
    if (v < element) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

function all(parts: WirePredicate[]): WirePredicate {
  if (parts.length === 0) return ALWAYS;
  if (parts.length === 1) return parts[0];
  if (parts.length === 2) {
    const [a, b] = parts;
    return (w) => a(w) && b(w);
  }
  return (w) => {
    for (let i = 0; i < parts.length; i++) if (!parts[i](w)) return false;
    return true;
  };
}

function any(parts: WirePredicate[]): WirePredicate {
  if (parts.length === 0) return NEVER;
  if (parts.length === 1) return parts[0];
  return (w) => {
    for (let i = 0; i < parts.length; i++) if (parts[i](w)) return true;
    return false;
  };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Set) return "a Set";
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

function bad(message: string): CairnError {
  return new CairnError("E_BAD_ARGUMENT", message);
}

/**
 * A stable text for a declarative query part (filter, sort fields): object keys sorted, Dates as
 * `{"$date":ms}`. Two filters with the same text select the same items; used to pool queries.
 */
export function canonicalText(value: unknown): string {
  if (value instanceof Date) return `{"$date":${value.getTime()}}`;
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).filter((k) => (value as FilterInput)[k] !== undefined).sort();
    return `{${
      keys.map((k) => `${JSON.stringify(k)}:${canonicalText((value as FilterInput)[k])}`).join(",")
    }}`;
  }
  if (typeof value === "number" && Object.is(value, -0)) return "0";
  return JSON.stringify(value) ?? String(value);
}
