/**
 * Stand-in for `node:assert/strict` in the browser test bundle: the subset the suite uses,
 * with Node's strict semantics (Object.is for primitives; deep equality compares prototypes,
 * own enumerable keys, Map/Set contents, typed arrays and Dates).
 */
export class AssertionError extends Error {
  override name = "AssertionError";
}

function fail(message: string | Error | undefined, fallback: string): never {
  if (message instanceof Error) throw message;
  throw new AssertionError(message ?? fallback);
}

function show(value: unknown): string {
  try {
    return JSON.stringify(
      value,
      (_k, v) =>
        v instanceof Map ? { Map: [...v] } : v instanceof Set ? { Set: [...v] } : typeof v ===
            "bigint"
          ? `${v}n`
          : v,
    ) ?? String(value);
  } catch {
    return String(value);
  }
}

function deepEqual(a: unknown, b: unknown, seen = new Map<object, object>()): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (a instanceof Date) return a.getTime() === (b as Date).getTime();
  if (ArrayBuffer.isView(a)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(
      (b as ArrayBufferView).buffer,
      (b as ArrayBufferView).byteOffset,
      (b as ArrayBufferView).byteLength,
    );
    return x.length === y.length && x.every((v, i) => v === y[i]);
  }
  if (a instanceof Map) {
    const m = b as Map<unknown, unknown>;
    if (a.size !== m.size) return false;
    for (const [k, v] of a) if (!m.has(k) || !deepEqual(v, m.get(k), seen)) return false;
    return true;
  }
  if (a instanceof Set) {
    const s = b as Set<unknown>;
    if (a.size !== s.size) return false;
    for (const v of a) if (!s.has(v)) return false;
    return true;
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  for (const k of keysA) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], seen)) {
      return false;
    }
  }
  return true;
}

type ErrorMatcher =
  | RegExp
  | ((err: unknown) => boolean)
  | Record<string, unknown>
  | (new (...a: never[]) => unknown);

function matches(err: unknown, expected: ErrorMatcher | undefined): boolean {
  if (expected === undefined) return true;
  // As node:assert: a pattern is tested against the error's string form, "Name: message".
  if (expected instanceof RegExp) return expected.test(String(err));
  if (typeof expected === "function") {
    const isErrorClass = expected === Error || expected.prototype instanceof Error;
    if (isErrorClass) return err instanceof (expected as new () => unknown);
    return (expected as (e: unknown) => boolean)(err) === true;
  }
  for (const [k, v] of Object.entries(expected)) {
    const actual = (err as Record<string, unknown>)?.[k];
    if (v instanceof RegExp ? !v.test(String(actual)) : !deepEqual(actual, v)) return false;
  }
  return true;
}

function ok(value: unknown, message?: string | Error): asserts value {
  if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
}

const assert = Object.assign(ok, {
  ok,
  AssertionError,
  equal(actual: unknown, expected: unknown, message?: string | Error) {
    if (!Object.is(actual, expected)) fail(message, `${show(actual)} !== ${show(expected)}`);
  },
  notEqual(actual: unknown, expected: unknown, message?: string | Error) {
    if (Object.is(actual, expected)) fail(message, `expected values to differ: ${show(actual)}`);
  },
  deepEqual(actual: unknown, expected: unknown, message?: string | Error) {
    if (!deepEqual(actual, expected)) {
      fail(message, `not deep-equal:\n  actual:   ${show(actual)}\n  expected: ${show(expected)}`);
    }
  },
  notDeepEqual(actual: unknown, expected: unknown, message?: string | Error) {
    if (deepEqual(actual, expected)) fail(message, `expected values not to be deep-equal`);
  },
  match(actual: string, pattern: RegExp, message?: string | Error) {
    if (!pattern.test(actual)) fail(message, `${show(actual)} does not match ${pattern}`);
  },
  fail(message?: string | Error): never {
    return fail(message, "failed");
  },
  throws(fn: () => unknown, expected?: ErrorMatcher, message?: string) {
    try {
      fn();
    } catch (err) {
      if (!matches(err, expected)) {
        fail(message, `unexpected error: ${show((err as Error)?.message ?? err)}`);
      }
      return;
    }
    fail(message, "expected the function to throw");
  },
  async rejects(
    fnOrPromise: Promise<unknown> | (() => Promise<unknown>),
    expected?: ErrorMatcher,
    message?: string,
  ) {
    try {
      await (typeof fnOrPromise === "function" ? fnOrPromise() : fnOrPromise);
    } catch (err) {
      if (!matches(err, expected)) {
        fail(message, `unexpected rejection: ${show((err as Error)?.message ?? err)}`);
      }
      return;
    }
    fail(message, "expected a rejection");
  },
  async doesNotReject(fnOrPromise: Promise<unknown> | (() => Promise<unknown>)) {
    await (typeof fnOrPromise === "function" ? fnOrPromise() : fnOrPromise);
  },
  doesNotThrow(fn: () => unknown) {
    fn();
  },
});

export default assert;
export const strict = assert;
