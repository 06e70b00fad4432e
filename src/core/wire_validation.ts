/**
 * Shape checks for decoded bytes. Everything read from disk or the network goes through here
 * before the engine sees it, so the rest of the code can trust the types.
 */
import { CairnError } from "./errors.ts";
import type { FieldRecord, WireValue } from "./commit.ts";

/** Deepest nesting a wire value may have; deeper input is treated as hostile. */
export const MAX_WIRE_DEPTH = 64;

export function corrupt(message: string, cause?: unknown): CairnError {
  return new CairnError("E_CORRUPT_ENCODING", message, cause === undefined ? undefined : { cause });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function assertWireValue(
  value: unknown,
  where: string,
  depth = 0,
): asserts value is WireValue {
  if (depth > MAX_WIRE_DEPTH) throw corrupt(`${where}: nested deeper than ${MAX_WIRE_DEPTH}`);
  if (value === null || typeof value === "boolean" || typeof value === "string") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw corrupt(`${where}: number is not finite`);
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) assertWireValue(value[i], `${where}[${i}]`, depth + 1);
    return;
  }
  if (isPlainObject(value)) {
    for (const key in value) assertWireValue(value[key], `${where}.${key}`, depth + 1);
    return;
  }
  throw corrupt(`${where}: unsupported value of type ${describeType(value)}`);
}

export function assertFieldRecord(value: unknown, where: string): asserts value is FieldRecord {
  if (!isPlainObject(value)) throw corrupt(`${where}: expected a record of fields`);
  assertWireValue(value, where);
}

export function assertString(value: unknown, where: string): asserts value is string {
  if (typeof value !== "string") throw corrupt(`${where}: expected a string`);
}

export function assertNonEmptyString(value: unknown, where: string): asserts value is string {
  if (typeof value !== "string" || value.length === 0) {
    throw corrupt(`${where}: expected a non-empty string`);
  }
}

export function assertPositiveInteger(value: unknown, where: string): asserts value is number {
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw corrupt(`${where}: expected a positive integer`);
  }
}

export function assertNonNegativeInteger(value: unknown, where: string): asserts value is number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw corrupt(`${where}: expected a non-negative integer`);
  }
}

export function assertStringArray(value: unknown, where: string): asserts value is string[] {
  if (!Array.isArray(value)) throw corrupt(`${where}: expected an array of strings`);
  for (let i = 0; i < value.length; i++) assertString(value[i], `${where}[${i}]`);
}

function describeType(value: unknown): string {
  if (typeof value !== "object" || value === null) return typeof value;
  return Object.getPrototypeOf(value)?.constructor?.name ?? "object";
}
