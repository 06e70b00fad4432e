/**
 * The public shapes of queries, typed from the schema when the query names one: field names are
 * checked, operands have the field's typed form (a Date for a date field, a string for `has` on a
 * set field), and sort fields must exist.
 */
import type { AnySchema, FieldName, FieldValue } from "../core/schema_types.ts";

/** Operators shared by scalar fields. */
export interface EqualityCondition<T> {
  readonly eq?: T;
  readonly ne?: T;
  readonly in?: readonly T[];
}

export interface RangeCondition<T> extends EqualityCondition<T> {
  readonly gt?: T;
  readonly gte?: T;
  readonly lt?: T;
  readonly lte?: T;
}

export interface StringCondition extends RangeCondition<string> {
  readonly prefix?: string;
}

export interface SetCondition {
  readonly has?: string;
}

/** Every operator, for queries without a schema (or fields of unknown type). */
export interface AnyCondition {
  readonly eq?: FilterScalar;
  readonly ne?: FilterScalar;
  readonly in?: readonly FilterScalar[];
  readonly gt?: number | string | Date;
  readonly gte?: number | string | Date;
  readonly lt?: number | string | Date;
  readonly lte?: number | string | Date;
  readonly has?: string;
  readonly prefix?: string;
}

/** A value a filter can compare a field with. */
export type FilterScalar = string | number | boolean | Date;

/** The condition a field of typed value `T` accepts: an operator object or a value (= `eq`). */
export type FieldCondition<T> = [T] extends [ReadonlySet<string>] ? SetCondition
  : [T] extends [ReadonlyMap<string, unknown>] ? never
  : [T] extends [string] ? StringCondition | string
  : [T] extends [number] ? RangeCondition<number> | number
  : [T] extends [Date] ? RangeCondition<Date> | Date
  : [T] extends [boolean] ? EqualityCondition<boolean> | boolean
  : AnyCondition | FilterScalar;

/** A declarative filter over the fields of schema `S`; `and` / `or` combine filters. */
export type Filter<S extends AnySchema> = string extends FieldName<S> ? UntypedFilter
  :
    & { readonly [K in FieldName<S>]?: FieldCondition<FieldValue<S, K>> }
    & { readonly and?: readonly Filter<S>[]; readonly or?: readonly Filter<S>[] };

/** A filter over any fields (a query without a schema). */
export interface UntypedFilter {
  readonly [field: string]: AnyCondition | FilterScalar | readonly UntypedFilter[] | undefined;
}

export interface QueryOptions<S extends AnySchema, R> {
  /** Only items of this schema's namespace; values of other versions are read upgraded. */
  readonly schema?: S;
  /** A declarative filter (compiled, can use an index) or a predicate over result items. */
  readonly where?: Filter<S> | ((item: R) => boolean);
  /** A field, several fields (then by the next on ties), or a comparator of result items. */
  readonly sortBy?: FieldName<S> | readonly FieldName<S>[] | ((a: R, b: R) => number);
  /** Reverses the order (ties between equal sort values are broken by key, reversed too). */
  readonly desc?: boolean;
  /** At most this many results (a non-negative integer). */
  readonly limit?: number;
  /** Names the query for pooling: the same id on one repository returns the same live query. */
  readonly id?: string;
}

/** How long a live query stays open (`repo.query(options, lifetime)`). */
export interface QueryLifetime {
  /**
   * Open only while held (`query.hold()`): it closes a second after nothing holds it any more,
   * or after it was last asked for if nothing held it by then (not while its first evaluation
   * runs in slices), unless a call without `whileHeld` returned it too. What `useQuery` asks for,
   * so that a query no component shows does not stay.
   */
  readonly whileHeld?: boolean;
}

/** How an index served (part of) a query: which field, and what was asked of it. */
export interface IndexLookup {
  readonly index: string;
  readonly use: "eq" | "has" | "range" | "prefix";
}

/** How a query's results were computed the last time they were computed from scratch. */
export interface QueryPlan {
  /**
   * The indexed field that supplied the candidates, or null for a scan of every item. An `or`
   * served by a union of lookups on several fields names them all: "count | title".
   */
  readonly index: string | null;
  /** What was asked of the index: "eq", "has", "range", "prefix", "union" (an `or`); null for a scan. */
  readonly use: IndexLookup["use"] | "union" | null;
  /** Every index lookup whose candidates were used: one, one per `or` branch, none for a scan. */
  readonly lookups: readonly IndexLookup[];
  /** "index", "scan" (synchronous), or "sliced scan" (browser: in slices, see `ready`). */
  readonly mode: "index" | "scan" | "sliced scan";
  /** Items the filter was applied to. */
  readonly examined: number;
  /** Items that matched (before `limit`). */
  readonly matched: number;
}
