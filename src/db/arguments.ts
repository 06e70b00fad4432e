/**
 * Shape checks for the arguments of the public entry points (database, repository and item
 * handles). Callers are not always TypeScript, and a `TypeError` from deep inside the engine, or
 * worse a wrong argument silently taken as a default, tells them nothing: every check here fails
 * with a `CairnError` naming the argument (E_BAD_ARGUMENT unless the docs give another code),
 * before anything is read or changed.
 */
import { CairnError } from "../core/errors.ts";
import { isPlainObject } from "../core/wire_validation.ts";

/** Longest item key: keys are stored in every commit and index entry. */
export const MAX_KEY_LENGTH = 512;

export function badArgument(message: string): CairnError {
  return new CairnError("E_BAD_ARGUMENT", message);
}

/** A key for a new item: a non-empty, well-formed string of at most MAX_KEY_LENGTH characters. */
export function checkNewKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw badArgument(`an item key is a non-empty string of at most ${MAX_KEY_LENGTH} characters`);
  }
  // A lone surrogate cannot be encoded in a block: peers would refuse every block after it.
  if (!key.isWellFormed()) {
    throw badArgument(`an item key must be well-formed UTF-16 (no lone surrogates)`);
  }
  return key;
}

/**
 * A key to look up. Any string will do (one no item has finds nothing); anything else is a
 * mistake worth reporting rather than a miss.
 */
export function checkLookupKey(key: unknown): string {
  if (typeof key !== "string") throw badArgument(`an item key is a string, got ${typeOf(key)}`);
  return key;
}

/**
 * An options object: undefined (all defaults) or a plain object with only the `allowed` names.
 * An unknown name is refused: a misspelt option silently ignored is a bug found much later.
 */
export function checkOptions<T extends object>(
  options: unknown,
  what: string,
  allowed: readonly string[],
): Partial<T> {
  if (options === undefined) return {};
  if (!isPlainObject(options)) throw badArgument(`${what} is an object, got ${typeOf(options)}`);
  for (const name of Object.keys(options)) {
    if (!allowed.includes(name)) {
      throw badArgument(`${what} has no option ${JSON.stringify(name)} (known: ${allowed})`);
    }
  }
  return options as Partial<T>;
}

export function checkListener<F>(listener: F, what: string): F {
  if (typeof listener !== "function") {
    throw badArgument(`${what} takes a function, got ${typeOf(listener)}`);
  }
  return listener;
}

/** An event name `on` takes: one of `events`. */
export function checkEvent(event: unknown, events: readonly string[]): void {
  if (!events.includes(event as string)) throw badArgument(`unknown event ${describeShort(event)}`);
}

/** A version vector: `{ [session]: last block seq held }`, each seq a non-negative integer. */
export function checkVersionVector(since: unknown): Record<string, number> | undefined {
  if (since === undefined) return undefined;
  if (!isPlainObject(since)) {
    throw badArgument(`a version vector is an object of block seqs, got ${typeOf(since)}`);
  }
  for (const session in since) {
    const seq = since[session];
    if (!Number.isSafeInteger(seq) || (seq as number) < 0) {
      throw badArgument(`version vector entry ${JSON.stringify(session)} is not a block seq`);
    }
  }
  return since as Record<string, number>;
}

/**
 * What importBlocks takes: an iterable of frames (an array, a Set, a generator). A frame that
 * is not bytes is the peer's problem, reported per frame like any other bad block; a list that
 * is not a list is the caller's.
 */
export function checkFrames(frames: unknown): Iterable<unknown> {
  if (
    typeof frames !== "object" || frames === null ||
    typeof (frames as Iterable<unknown>)[Symbol.iterator] !== "function"
  ) {
    throw badArgument(`importBlocks takes an iterable of Uint8Array frames, got ${typeOf(frames)}`);
  }
  return frames as Iterable<unknown>;
}

/** The field changes `update` takes: a plain object of field values. */
export function checkChanges(changes: unknown, schemaId: string): Record<string, unknown> {
  if (!isPlainObject(changes)) {
    throw new CairnError(
      "E_WRONG_TYPE",
      `${schemaId}: update takes an object of field values, got ${typeOf(changes)}`,
    );
  }
  return changes;
}

/** Names a value's type for a message: "null", "number", "an array", "a Map". */
export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value !== "object") return typeof value;
  const name = Object.getPrototypeOf(value)?.constructor?.name;
  return typeof name === "string" && name !== "Object" ? `a ${name}` : "an object";
}

/** A caller's value in a message, never throwing (JSON.stringify throws on a BigInt). */
export function describeShort(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value.slice(0, 40)) : typeOf(value);
}
