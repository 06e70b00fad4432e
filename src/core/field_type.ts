/**
 * The field types a schema can declare. Each has a typed in-memory form (what `get` returns),
 * a wire form (what commits carry) and a merge rule (core/merge/):
 *
 * | type    | typed value                     | wire value                         | merge            |
 * |---------|---------------------------------|------------------------------------|------------------|
 * | string  | string                          | string                             | last writer wins |
 * | number  | number (finite)                 | number (-0 written as 0)           | last writer wins |
 * | boolean | boolean                         | boolean                            | last writer wins |
 * | date    | Date                            | epoch milliseconds (number)        | last writer wins |
 * | set     | ReadonlySet<string>             | sorted, unique string[]            | per element      |
 * | map     | ReadonlyMap<string, MapScalar>  | object, keys sorted                | per key, LWW     |
 * | text    | string                          | string                             | per character    |
 * | counter | number                          | number                             | increments add   |
 */
export type FieldType =
  | "string"
  | "number"
  | "boolean"
  | "date"
  | "set"
  | "map"
  | "text"
  | "counter";

export const FIELD_TYPES: readonly FieldType[] = [
  "string",
  "number",
  "boolean",
  "date",
  "set",
  "map",
  "text",
  "counter",
];

/** Values a map field may hold per key. */
export type MapScalar = string | number | boolean | null;
