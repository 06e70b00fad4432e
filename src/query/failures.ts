/**
 * What a query's own code threw: its `where` predicate or its `sortBy` comparator. Such a throw
 * never fails the write (or the evaluation) that ran it. The item then counts as not matching (a
 * predicate) or the two items as tied, ordered by key (a comparator), and the error is kept:
 *
 * - as state: the items the predicate throws for as last evaluated, so `LiveQuery.error` is what a
 *   fresh evaluation would find, and clears once no item fails any more;
 * - as an event: once per batch, the batch's last error goes to the `onError` listeners, or is
 *   reported as uncaught when there are none and nobody read `error` since it was thrown (the
 *   app saw it there: React's useQuery reads it in the render that made the query, before it
 *   can listen), so it is never lost silently.
 *
 * Errors are built only when read or reported: a scan whose predicate throws for every item
 * records the thrown values, not one CairnError per item.
 */
import { CairnError } from "../core/errors.ts";

interface Failure {
  /** What threw, for the message: "the where predicate … for item k1". */
  readonly what: string;
  readonly cause: unknown;
  /** A predicate's failure, which `error` shows (a comparator's it does not). */
  readonly predicate: boolean;
}

interface CurrentError {
  readonly key: string;
  readonly cause: unknown;
  /** How many items failed. */
  readonly count: number;
  readonly error: CairnError;
}

export class QueryFailures {
  /** Thrown values of the items the predicate currently throws for, by key. */
  #byKey: Map<string, unknown> | undefined;
  #lastKey: string | undefined;
  /** The error `current` last built, and what from: the same error until those change. */
  #current: CurrentError | undefined;
  /** The batch's last failure, until `report`. */
  #unreported: Failure | undefined;
  /** `current` was read since the batch's last failure, a predicate's: the app saw it. */
  #seen = false;
  readonly #listeners = new Set<(error: CairnError) => void>();

  /** The item is evaluated again: whatever its predicate threw before no longer holds. */
  forget(key: string): void {
    if (this.#byKey !== undefined && this.#byKey.size !== 0) this.#byKey.delete(key);
  }

  predicateThrew(key: string, cause: unknown): void {
    (this.#byKey ??= new Map()).set(key, cause);
    this.#lastKey = key;
    this.#unreported = {
      what: `the where predicate threw for item ${key}`,
      cause,
      predicate: true,
    };
    this.#seen = false;
  }

  comparatorThrew(a: string, b: string, cause: unknown): void {
    this.#unreported = {
      what: `the sortBy comparator threw comparing items ${a} and ${b}`,
      cause,
      predicate: false,
    };
    this.#seen = false;
  }

  /** An error for an item the predicate throws for now (the latest such), else undefined. */
  get current(): CairnError | undefined {
    const byKey = this.#byKey;
    if (byKey === undefined || byKey.size === 0) return undefined;
    if (this.#unreported?.predicate) this.#seen = true;
    let key = this.#lastKey!;
    if (!byKey.has(key)) key = byKey.keys().next().value!;
    const cause = byKey.get(key);
    const count = byKey.size;
    const known = this.#current;
    if (known?.key === key && known.cause === cause && known.count === count) return known.error;
    const others = count - 1;
    const what = `the where predicate throws for item ${key}${
      others > 0 ? ` (and ${others} other item${others > 1 ? "s" : ""})` : ""
    }`;
    const error = queryError({ what, cause });
    this.#current = { key, cause, count, error };
    return error;
  }

  /** True when something threw since the last `report`. */
  get unreported(): boolean {
    return this.#unreported !== undefined;
  }

  /**
   * Hands the batch's last failure to the listeners, or, with none, reports it as uncaught unless
   * the app has read it or (`uncaught` false) no code could listen.
   */
  report(uncaught = true): void {
    const failure = this.#unreported;
    if (failure === undefined) return;
    this.#unreported = undefined;
    const error = queryError(failure);
    if (this.#listeners.size === 0 && !this.#seen && uncaught) reportUncaught(error);
    for (const listener of [...this.#listeners]) {
      try {
        listener(error);
      } catch (err) {
        reportUncaught(err);
      }
    }
  }

  listen(listener: (error: CairnError) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The query closed: nothing more is reported. */
  close(): void {
    this.#listeners.clear();
    this.#unreported = undefined;
  }
}

function queryError({ what, cause }: Pick<Failure, "what" | "cause">): CairnError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new CairnError("E_QUERY_FAILED", `${what}: ${reason}`, { cause });
}

/** Throws `err` from a fresh microtask: the runtime reports it as uncaught, nothing else stops. */
export function reportUncaught(err: unknown): void {
  queueMicrotask(() => {
    throw err;
  });
}
