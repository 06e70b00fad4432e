/**
 * Schemas: what fields an item has, how caller input is checked, and how typed values convert
 * to and from the wire form commits carry (field_type.ts has the table of forms).
 *
 * `create` and `checkField` sit on the write path, so each field is compiled once at define
 * time into a record holding its type codec, validator and default; checking a value is then a
 * few direct calls with no per-call allocation besides the copies the semantics require.
 */
import type { FieldRecord, WireValue } from "./commit.ts";
import { CairnError } from "./errors.ts";
import { FIELD_TYPES, type FieldType, type MapScalar } from "./field_type.ts";
import type {
  AnySchema,
  CreateInputOf,
  FieldDef,
  FieldDefs,
  Schema,
  SchemaDef,
  SchemaUpgradeDef,
  UpgradeFn,
  ValuesOf,
} from "./schema_types.ts";
import { corrupt, isPlainObject } from "./wire_validation.ts";

export type {
  CreateInput,
  CreateInputOf,
  FieldDef,
  FieldDefs,
  FieldName,
  FieldValue,
  Schema,
  SchemaDef,
  SchemaUpgradeDef,
  TypedValue,
  TypedValueByType,
  UpgradeFn,
  ValidationResult,
  Values,
  ValuesOf,
} from "./schema_types.ts";

// ---------------------------------------------------------------------------------------------
// Type codecs: one per field type, shared by every schema.

/** What a codec returns for a value that does not have its type; cheaper than throwing. */
const REJECT: unique symbol = Symbol("reject");
type Rejected = typeof REJECT;

interface TypeCodec {
  /** What the type accepts, for error messages. */
  readonly expected: string;
  /** Checks a caller's typed value; returns the value to store (a private copy) or REJECT. */
  accept(value: unknown): unknown;
  /** A caller's value straight in its canonical wire form (no typed copy), or REJECT. */
  checkedWire(value: unknown): WireValue | Rejected;
  /** Canonical wire form of a value `accept` returned. */
  toWire(typed: unknown): WireValue;
  /** Typed value from an untrusted wire value, or REJECT. */
  fromWire(wire: unknown): unknown;
  /** Whether fromWire takes an untrusted wire value, asked without making the typed value. */
  isWire(wire: unknown): boolean;
}

/** Largest |ms| a Date can hold (ECMA-262 TimeClip). */
const MAX_EPOCH_MS = 8.64e15;

/** -0 becomes 0 so the msgpack and JSON encodings of a value are the same bytes every time. */
function canonicalNumber(n: number): number {
  return n === 0 ? 0 : n;
}

function canonicalScalar(value: MapScalar): MapScalar {
  return typeof value === "number" ? canonicalNumber(value) : value;
}

/**
 * A caller's string. One with a lone UTF-16 surrogate is refused (E_WRONG_TYPE): MessagePack
 * cannot carry it, so it would be stored as U+FFFD and read back other than written — and a
 * block holding it would not decode to the bytes it was signed as. Refusing it tells the writer;
 * replacing it silently did not.
 */
function acceptString(value: unknown): string | Rejected {
  return typeof value === "string" && value.isWellFormed() ? value : REJECT;
}

/** A stored or received string: kept readable whatever it holds (see wellFormed). */
function stringFromWire(value: unknown): string | Rejected {
  return typeof value === "string" ? wellFormed(value) : REJECT;
}

/**
 * Lone UTF-16 surrogates become U+FFFD. Only for strings read from storage or peers, which cannot
 * hold one from this version (writes refuse them): a JSONL log written by hand could.
 */
function wellFormed(text: string): string {
  return text.isWellFormed() ? text : text.toWellFormed();
}

function acceptFiniteNumber(value: unknown): number | Rejected {
  return typeof value === "number" && Number.isFinite(value) ? canonicalNumber(value) : REJECT;
}

function acceptBoolean(value: unknown): boolean | Rejected {
  return typeof value === "boolean" ? value : REJECT;
}

function identity(value: unknown): WireValue {
  return value as WireValue;
}

function isMapScalar(value: unknown): value is MapScalar {
  return value === null || typeof value === "string" || typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value));
}

/** "__proto__" would turn into a prototype assignment when the map is written as an object. */
function isMapKey(key: unknown): key is string {
  return typeof key === "string" && key !== "__proto__";
}

/** A string a caller may write: see acceptString. */
function isWellFormedString(value: unknown): value is string {
  return typeof value === "string" && value.isWellFormed();
}

function isStringSet(value: unknown): value is ReadonlySet<string> {
  if (!(value instanceof Set)) return false;
  for (const element of value) if (!isWellFormedString(element)) return false;
  return true;
}

/** A caller's map: keys and string values well-formed (see acceptString). */
function isScalarMap(value: unknown): value is ReadonlyMap<string, MapScalar> {
  if (!(value instanceof Map)) return false;
  for (const [key, entry] of value) {
    if (!isMapKey(key) || !key.isWellFormed() || !isMapScalar(entry)) return false;
    if (typeof entry === "string" && !entry.isWellFormed()) return false;
  }
  return true;
}

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

function isEpochMs(value: unknown): value is number {
  return Number.isInteger(value) && Math.abs(value as number) <= MAX_EPOCH_MS;
}

function copyScalarMap(
  entries: Iterable<readonly [string, MapScalar]>,
): ReadonlyMap<string, MapScalar> {
  const copy = new Map<string, MapScalar>();
  for (const [key, entry] of entries) copy.set(key, canonicalScalar(entry));
  return copy;
}

/** A checked map (isScalarMap) in wire form: a record with its keys in sorted order. */
function mapToWire(map: ReadonlyMap<string, MapScalar>): WireValue {
  const keys = Array.from(map.keys()).sort();
  const record: { [key: string]: WireValue } = {};
  for (const key of keys) record[key] = canonicalScalar(map.get(key) as MapScalar);
  return record;
}

/**
 * A Set of well-formed strings in wire form (sorted), or REJECT for anything else, in one pass
 * over the elements: `Array.from` copies a Set out without an iterator result per element,
 * which a `for…of` over it left for the garbage collector (~40 bytes per create).
 */
function stringSetWire(value: unknown): WireValue | Rejected {
  if (!(value instanceof Set)) return REJECT;
  const elements: unknown[] = Array.from(value);
  for (let i = 0; i < elements.length; i++) {
    if (!isWellFormedString(elements[i])) return REJECT;
  }
  const strings = elements as string[];
  sortStrings(strings);
  return strings;
}

/** Largest array sorted by insertion: below this the built-in sort's call costs more. */
const INSERTION_SORT_MAX = 8;

/** Sorts strings in place in code-unit order, as `Array.prototype.sort()` does. */
function sortStrings(strings: string[]): void {
  if (strings.length > INSERTION_SORT_MAX) {
    strings.sort();
    return;
  }
  for (let i = 1; i < strings.length; i++) {
    const next = strings[i];
    let j = i - 1;
    for (; j >= 0 && strings[j] > next; j--) strings[j + 1] = strings[j];
    strings[j + 1] = next;
  }
}

function isMapWire(wire: unknown): wire is { [key: string]: MapScalar } {
  if (!isPlainObject(wire)) return false;
  for (const key in wire) if (!isMapKey(key) || !isMapScalar(wire[key])) return false;
  return true;
}

function mapFromWire(wire: unknown): ReadonlyMap<string, MapScalar> | Rejected {
  if (!isMapWire(wire)) return REJECT;
  const map = new Map<string, MapScalar>();
  for (const key in wire) {
    const entry = wire[key];
    // Made well-formed, so the typed map is one a caller could write (see wellFormed).
    map.set(
      wellFormed(key),
      typeof entry === "string" ? wellFormed(entry) : canonicalScalar(entry),
    );
  }
  return map;
}

function isStringSetWire(wire: unknown): wire is string[] {
  if (!Array.isArray(wire)) return false;
  for (let i = 0; i < wire.length; i++) if (typeof wire[i] !== "string") return false;
  return true;
}

function stringSetFromWire(wire: unknown): ReadonlySet<string> | Rejected {
  // Made well-formed, so the typed set is one a caller could write (see wellFormed).
  return isStringSetWire(wire) ? new Set(wire.map(wellFormed)) : REJECT;
}

/** isWire for the codecs whose fromWire makes no object: whether it takes the value. */
function takenBy(fromWire: (wire: unknown) => unknown): (wire: unknown) => boolean {
  return (wire) => fromWire(wire) !== REJECT;
}

const STRING_CODEC: TypeCodec = {
  expected: "a string",
  accept: acceptString,
  checkedWire: acceptString,
  toWire: (typed) => wellFormed(typed as string),
  fromWire: stringFromWire,
  isWire: (wire) => typeof wire === "string",
};

const NUMBER_CODEC: TypeCodec = {
  expected: "a finite number",
  accept: acceptFiniteNumber,
  checkedWire: acceptFiniteNumber,
  toWire: (typed) => canonicalNumber(typed as number),
  fromWire: acceptFiniteNumber,
  isWire: takenBy(acceptFiniteNumber),
};

const CODECS: Readonly<Record<FieldType, TypeCodec>> = {
  string: STRING_CODEC,
  text: STRING_CODEC,
  number: NUMBER_CODEC,
  counter: NUMBER_CODEC,
  boolean: {
    expected: "a boolean",
    accept: acceptBoolean,
    checkedWire: acceptBoolean,
    toWire: identity,
    fromWire: acceptBoolean,
    isWire: takenBy(acceptBoolean),
  },
  date: {
    expected: "a valid Date",
    accept: (value) => isValidDate(value) ? new Date(value.getTime()) : REJECT,
    checkedWire: (value) => isValidDate(value) ? value.getTime() : REJECT,
    toWire: (typed) => (typed as Date).getTime(),
    fromWire: (wire) => isEpochMs(wire) ? new Date(wire) : REJECT,
    isWire: isEpochMs,
  },
  set: {
    expected: "a Set of strings",
    accept: (value) => isStringSet(value) ? new Set(value) : REJECT,
    checkedWire: stringSetWire,
    toWire: (typed) => stringSetWire(typed) as WireValue,
    fromWire: stringSetFromWire,
    isWire: isStringSetWire,
  },
  map: {
    expected: 'a Map from string keys (not "__proto__") to string, finite number, boolean or null',
    accept: (value) => isScalarMap(value) ? copyScalarMap(value) : REJECT,
    checkedWire: (value) => isScalarMap(value) ? mapToWire(value) : REJECT,
    toWire: (typed) => mapToWire(typed as ReadonlyMap<string, MapScalar>),
    fromWire: mapFromWire,
    isWire: isMapWire,
  },
};

// ---------------------------------------------------------------------------------------------
// Error messages

/** Names a value in an error message: its type and, where short, the value itself. */
function describe(value: unknown): string {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) return "a string with a lone surrogate (not well-formed UTF-16)";
      return value.length > 40 ? "a long string" : `string ${JSON.stringify(value)}`;
    case "number":
      return Number.isFinite(value) ? `number ${value}` : String(value);
    case "boolean":
    case "bigint":
      return `${typeof value} ${value}`;
    case "object":
      return describeObject(value);
    default:
      return typeof value;
  }
}

function describeObject(value: object | null): string {
  if (value === null) return "null";
  if (value instanceof Date) return isValidDate(value) ? "a Date" : "an invalid Date";
  if (value instanceof Set) {
    for (const element of value) {
      if (!isWellFormedString(element)) return `a Set containing ${describe(element)}`;
    }
    return "a Set";
  }
  if (value instanceof Map) {
    for (const [key, entry] of value) {
      if (!isMapKey(key) || !key.isWellFormed()) return `a Map with key ${describe(key)}`;
      if (!isMapScalar(entry) || (typeof entry === "string" && !entry.isWellFormed())) {
        return `a Map whose "${key}" is ${describe(entry)}`;
      }
    }
    return "a Map";
  }
  if (Array.isArray(value)) return "an array";
  return isPlainObject(value) ? "an object" : `a ${value.constructor?.name ?? "object"}`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------
// Compiled fields

type Validator = (value: never) => unknown;

interface CompiledField {
  readonly name: string;
  /** `task@1 field "title"`, precomputed for error messages. */
  readonly label: string;
  readonly codec: TypeCodec;
  readonly required: boolean;
  /** A typed constant (already accepted) or a function producing one. */
  readonly default: unknown;
  readonly validate: Validator | undefined;
}

function wrongType(field: CompiledField, value: unknown): CairnError {
  return new CairnError(
    "E_WRONG_TYPE",
    `${field.label} expects ${field.codec.expected}, got ${describe(value)}`,
  );
}

function requiredMissing(field: CompiledField): CairnError {
  return new CairnError("E_REQUIRED_FIELD", `${field.label} is required`);
}

/** Type check, private copy and `validate`: the whole check of one caller-supplied value. */
function checkValue(field: CompiledField, value: unknown): unknown {
  const accepted = field.codec.accept(value);
  if (accepted === REJECT) throw wrongType(field, value);
  runValidator(field, accepted);
  return accepted;
}

/** A caller's value checked and turned straight into its wire form, with no typed copy. */
function checkToWire(field: CompiledField, value: unknown): WireValue {
  const wire = field.codec.checkedWire(value);
  if (wire === REJECT) throw wrongType(field, value);
  runValidator(field, value);
  return wire;
}

function runValidator(field: CompiledField, value: unknown): void {
  if (field.validate === undefined) return;
  const verdict = field.validate(value as never);
  if (verdict === false || typeof verdict === "string") {
    const reason = typeof verdict === "string" ? verdict : "failed validation";
    throw new CairnError("E_INVALID_VALUE", `${field.label}: ${reason}`);
  }
}

function defaultValue(field: CompiledField): unknown {
  if (field.default === undefined) throw requiredMissing(field);
  const value = typeof field.default === "function" ? field.default() : field.default;
  return checkValue(field, value);
}

function decodeField(field: CompiledField, wire: unknown): unknown {
  const typed = field.codec.fromWire(wire);
  if (typed === REJECT) throw notItsWire(field);
  return typed;
}

function notItsWire(field: CompiledField): CairnError {
  return corrupt(`${field.label} expects the wire form of ${field.codec.expected}`);
}

// ---------------------------------------------------------------------------------------------
// Schema definitions

const DEF_KEYS: ReadonlySet<string> = new Set([
  "ns",
  "version",
  "fields",
  "indexes",
  "upgrade",
  "from",
]);
const FIELD_DEF_KEYS: ReadonlySet<string> = new Set(["type", "required", "default", "validate"]);

function badSchema(where: string, message: string): CairnError {
  return new CairnError("E_BAD_SCHEMA", `${where}: ${message}`);
}

function assertKnownKeys(value: object, allowed: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) throw badSchema(where, `unknown option "${key}"`);
  }
}

/**
 * Names that a plain object inherits ("constructor", "toString", "__proto__", ...) would make
 * `values[name]` read the prototype when the field is absent, so they cannot be field names.
 */
function isReservedName(name: string): boolean {
  return name in Object.prototype;
}

function checkHeader(def: SchemaDef<FieldDefs>): string {
  if (!isPlainObject(def)) throw badSchema("schema definition", "expected an object");
  const { ns, version } = def;
  if (typeof ns !== "string" || ns.length === 0 || ns.includes("@") || !ns.isWellFormed()) {
    throw badSchema(
      "schema definition",
      'ns must be a non-empty string without "@" (well-formed: no lone surrogates)',
    );
  }
  if (!Number.isSafeInteger(version) || version < 1) {
    throw badSchema(`schema "${ns}"`, "version must be a positive integer");
  }
  const id = `${ns}@${version}`;
  assertKnownKeys(def, DEF_KEYS, id);
  if (def.upgrade !== undefined && typeof def.upgrade !== "function") {
    throw badSchema(id, "upgrade must be a function");
  }
  if (def.upgrade !== undefined && version === 1) {
    throw badSchema(id, "version 1 has no previous version to upgrade from");
  }
  const from = (def as { from?: unknown }).from;
  if (from !== undefined) {
    const previous = `${ns}@${version - 1}`;
    if (!(from instanceof CompiledSchema) || from.id !== previous) {
      const given = from instanceof CompiledSchema ? from.id : "not a schema";
      throw badSchema(
        id,
        `from must be the schema ${previous}, which this version follows (got ${given})`,
      );
    }
  }
  return id;
}

function checkFieldDef(schemaId: string, name: string, def: FieldDef): void {
  const where = `${schemaId} field "${name}"`;
  if (name.length === 0) throw badSchema(schemaId, "field names must be non-empty");
  if (!name.isWellFormed()) throw badSchema(where, "a field name must not hold a lone surrogate");
  if (isReservedName(name)) throw badSchema(where, "this name is reserved by JavaScript objects");
  if (!isPlainObject(def)) throw badSchema(where, "expected a field declaration object");
  assertKnownKeys(def, FIELD_DEF_KEYS, where);
  if (!FIELD_TYPES.includes(def.type)) {
    throw badSchema(where, `unknown type ${describe(def.type)}; use one of ${FIELD_TYPES}`);
  }
  if (def.required !== undefined && typeof def.required !== "boolean") {
    throw badSchema(where, "required must be a boolean");
  }
  if (def.validate !== undefined && typeof def.validate !== "function") {
    throw badSchema(where, "validate must be a function");
  }
}

/** Checks one field declaration and returns its compiled form and its frozen public copy. */
function compileField(
  schemaId: string,
  name: string,
  def: FieldDef,
): { compiled: CompiledField; frozen: FieldDef } {
  checkFieldDef(schemaId, name, def);
  const withoutDefault: CompiledField = {
    name,
    label: `${schemaId} field "${name}"`,
    codec: CODECS[def.type],
    required: def.required === true,
    default: undefined,
    validate: def.validate as Validator | undefined,
  };
  const compiled = Object.freeze({
    ...withoutDefault,
    default: compileDefault(withoutDefault, def.default),
  });
  // The public copy shows the private copy of a constant default, not the caller's instance.
  const frozen = Object.freeze(
    compiled.default === undefined ? { ...def } : { ...def, default: compiled.default },
  ) as FieldDef;
  return { compiled, frozen };
}

/** A constant default is checked (and copied) now; a function default on each use. */
function compileDefault(field: CompiledField, given: unknown): unknown {
  if (given === undefined || typeof given === "function") return given;
  try {
    return checkValue(field, given);
  } catch (err) {
    throw badSchema(field.label, `invalid default (${messageOf(err)})`);
  }
}

function compileIndexes(
  schemaId: string,
  indexes: unknown,
  fields: ReadonlyMap<string, CompiledField>,
): readonly string[] {
  if (indexes === undefined) return Object.freeze([]);
  if (!Array.isArray(indexes)) throw badSchema(schemaId, "indexes must be an array of field names");
  for (let i = 0; i < indexes.length; i++) {
    const name = indexes[i];
    if (typeof name !== "string" || !fields.has(name)) {
      throw badSchema(schemaId, `index ${describe(name)} is not a field`);
    }
    if (indexes.indexOf(name) !== i) throw badSchema(schemaId, `index "${name}" is listed twice`);
  }
  return Object.freeze([...indexes]);
}

function byName(a: CompiledField, b: CompiledField): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

class CompiledSchema {
  readonly id: string;
  readonly ns: string;
  readonly version: number;
  readonly fields: FieldDefs;
  readonly fieldNames: readonly string[];
  readonly indexes: readonly string[];
  readonly upgrade: UpgradeFn | undefined;
  readonly #fields: ReadonlyMap<string, CompiledField>;
  /** Sorted by name: the canonical field order of wire records. */
  readonly #wireOrder: readonly CompiledField[];
  /** Fields `create` must fill in when the input lacks them. */
  readonly #filledFields: readonly CompiledField[];
  readonly #requiredFields: readonly CompiledField[];

  constructor(def: SchemaDef<FieldDefs>) {
    this.id = checkHeader(def);
    this.ns = def.ns;
    this.version = def.version;
    this.upgrade = def.upgrade;
    if (!isPlainObject(def.fields)) throw badSchema(this.id, "fields must be a plain object");
    const compiled = new Map<string, CompiledField>();
    const publicDefs: Record<string, FieldDef> = {};
    for (const name of Object.keys(def.fields)) {
      const field = compileField(this.id, name, def.fields[name]);
      compiled.set(name, field.compiled);
      publicDefs[name] = field.frozen;
    }
    this.fields = Object.freeze(publicDefs);
    this.fieldNames = Object.freeze([...compiled.keys()]);
    this.indexes = compileIndexes(this.id, def.indexes, compiled);
    this.#fields = compiled;
    const all = [...compiled.values()].sort(byName);
    this.#wireOrder = all;
    this.#filledFields = all.filter((f) => f.required || f.default !== undefined);
    this.#requiredFields = all.filter((f) => f.required);
    Object.freeze(this);
  }

  create(input: unknown): Record<string, unknown> {
    // A plain object only: an array, a Map or a Date would pass for "no fields given".
    if (!isPlainObject(input)) {
      throw new CairnError("E_WRONG_TYPE", `${this.id} expects an object of field values`);
    }
    const values: Record<string, unknown> = {};
    for (const name in input) {
      const field = this.#field(name);
      const value = (input as Record<string, unknown>)[name];
      if (value !== undefined) values[name] = checkValue(field, value);
    }
    for (const field of this.#filledFields) {
      if (values[field.name] === undefined) values[field.name] = defaultValue(field);
    }
    return values;
  }

  createWire(input: unknown): FieldRecord {
    // A plain object only: an array, a Map or a Date would pass for "no fields given".
    if (!isPlainObject(input)) {
      throw new CairnError("E_WRONG_TYPE", `${this.id} expects an object of field values`);
    }
    for (const name in input) this.#field(name);
    const record: FieldRecord = {};
    for (const field of this.#wireOrder) {
      const value = (input as Record<string, unknown>)[field.name];
      if (value !== undefined) record[field.name] = checkToWire(field, value);
      else if (field.required || field.default !== undefined) {
        record[field.name] = field.codec.toWire(defaultValue(field));
      }
    }
    return record;
  }

  checkFieldWire(name: string, value: unknown): WireValue | undefined {
    const field = this.#field(name);
    if (value !== undefined) return checkToWire(field, value);
    if (field.required) throw requiredMissing(field);
    return undefined;
  }

  checkField(name: string, value: unknown): unknown {
    const field = this.#field(name);
    if (value !== undefined) return checkValue(field, value);
    if (field.required) throw requiredMissing(field);
    return undefined;
  }

  toWire(values: Readonly<Record<string, unknown>>): FieldRecord {
    const record: FieldRecord = {};
    for (const field of this.#wireOrder) {
      const value = values[field.name];
      if (value !== undefined) record[field.name] = field.codec.toWire(value);
    }
    return record;
  }

  fromWire(record: unknown): Record<string, unknown> {
    const wire = this.#wireRecord(record);
    const values: Record<string, unknown> = {};
    for (const name in wire) values[name] = decodeField(this.#storedField(name), wire[name]);
    this.#checkRequired(values);
    return values;
  }

  /** Throws as fromWire would, without making the typed values. */
  checkWire(record: unknown): void {
    const wire = this.#wireRecord(record);
    for (const name in wire) this.checkFieldWireForm(name, wire[name]);
    this.#checkRequired(wire);
  }

  /** Throws as fieldFromWire would, without making the typed value. */
  checkFieldWireForm(name: string, wire: unknown): void {
    const field = this.#storedField(name);
    if (!field.codec.isWire(wire)) throw notItsWire(field);
  }

  #wireRecord(record: unknown): Record<string, unknown> {
    if (!isPlainObject(record)) throw corrupt(`${this.id}: expected a record of fields`);
    return record;
  }

  #checkRequired(values: Record<string, unknown>): void {
    for (const field of this.#requiredFields) {
      if (values[field.name] === undefined) throw corrupt(`${field.label} is missing`);
    }
  }

  fieldToWire(name: string, value: unknown): WireValue {
    return this.#field(name).codec.toWire(value);
  }

  fieldFromWire(name: string, wire: unknown): unknown {
    return decodeField(this.#storedField(name), wire);
  }

  #field(name: string): CompiledField {
    const field = this.#fields.get(name);
    if (field === undefined) {
      throw new CairnError("E_UNKNOWN_FIELD", `${this.id} has no field ${fieldNameText(name)}`);
    }
    return field;
  }

  /** Like #field, for names read from disk or peers, where a stranger means corrupt data. */
  #storedField(name: string): CompiledField {
    const field = this.#fields.get(name);
    if (field === undefined) throw corrupt(`${this.id} has no field "${name}"`);
    return field;
  }
}

/**
 * A caller's field name in a message. It may be anything: a Symbol or an object without a
 * prototype would make a template literal throw a TypeError instead of the CairnError.
 */
function fieldNameText(name: unknown): string {
  return typeof name === "string" ? JSON.stringify(name) : describe(name);
}

/**
 * @internal Throws as `schema.fromWire(record)` would, without making its typed values: an
 * import checks every commit's value so, and a Set or Date made per field and thrown away was
 * most of that check's cost.
 */
export function checkWireRecord(schema: AnySchema, record: unknown): void {
  if (schema instanceof CompiledSchema) schema.checkWire(record);
  else schema.fromWire(record);
}

/** @internal `schema.fieldFromWire(name, wire)`'s check, without making the typed value. */
export function checkWireField(schema: AnySchema, name: string, wire: unknown): void {
  if (schema instanceof CompiledSchema) schema.checkFieldWireForm(name, wire);
  else schema.fieldFromWire(name, wire);
}

/**
 * Defines a schema. The definition is checked now (a mistake is E_BAD_SCHEMA) and compiled for
 * fast checks; the result is frozen. Field types are inferred from the literal, no `as const`.
 */
export function defineSchema<const F extends FieldDefs, const P extends FieldDefs>(
  def: SchemaUpgradeDef<F, P>,
): Schema<F>;
export function defineSchema<const F extends FieldDefs>(def: SchemaDef<F>): Schema<F>;
export function defineSchema<const F extends FieldDefs>(
  def: SchemaDef<F> | SchemaUpgradeDef<F, FieldDefs>,
): Schema<F> {
  // SchemaDef is invariant in F (`keyof F` in indexes), and the constructor checks it all anyway.
  const loose = def as unknown as SchemaDef<FieldDefs>;
  return new CompiledSchema(loose) as unknown as Schema<F>;
}

// ---------------------------------------------------------------------------------------------
// Registry and upgrades

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

function sameDefault(schema: Schema, name: string, a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || typeof a === "function" || typeof b === "function") {
    return false;
  }
  const wire = (value: unknown) => JSON.stringify(schema.fieldToWire(name, value as never));
  return wire(a) === wire(b);
}

function sameField(schema: Schema, name: string, a: FieldDef, b: FieldDef): boolean {
  return a.type === b.type && (a.required === true) === (b.required === true) &&
    a.validate === b.validate &&
    sameDefault(schema, name, a.default, b.default);
}

/** Equal ids, fields, indexes, and the very same validate/default/upgrade functions. */
function sameDefinition(a: Schema, b: Schema): boolean {
  return a.id === b.id && a.upgrade === b.upgrade && sameList(a.indexes, b.indexes) &&
    sameList([...a.fieldNames].sort(), [...b.fieldNames].sort()) &&
    a.fieldNames.every((name) => sameField(a, name, a.fields[name], b.fields[name]));
}

function unknownSchema(id: string, why: string): CairnError {
  return new CairnError("E_UNKNOWN_SCHEMA", `${id} is not registered (${why})`);
}

/** One upgrade step: `schema.upgrade` (or the old values unchanged) checked as `create` input. */
function upgradeStep(
  schema: Schema,
  old: Readonly<Record<string, unknown>>,
  fromVersion: number,
): Readonly<Record<string, unknown>> {
  try {
    const next = schema.upgrade === undefined ? old : schema.upgrade(old, fromVersion);
    return schema.create(next as CreateInputOf<FieldDefs>);
  } catch (cause) {
    throw new CairnError(
      "E_UPGRADE_FAILED",
      `upgrading ${schema.ns}@${fromVersion} to ${schema.id}: ${messageOf(cause)}`,
      { cause },
    );
  }
}

/** All schemas the database knows, by id and by namespace. */
export class SchemaRegistry {
  readonly #byId = new Map<string, Schema>();
  readonly #latest = new Map<string, Schema>();

  /**
   * Adds a schema. Registering it (or an identical definition) again is a no-op; a different
   * definition under an id already known is E_BAD_SCHEMA.
   */
  register<F extends FieldDefs>(schema: Schema<F>): Schema<F> {
    if (!(schema instanceof CompiledSchema)) {
      throw badSchema("register", "expected a schema made by defineSchema");
    }
    const known = this.#byId.get(schema.id);
    if (known !== undefined) {
      if (known === schema || sameDefinition(known, schema)) return schema;
      throw badSchema(schema.id, "already registered with a different definition");
    }
    this.#byId.set(schema.id, schema);
    const latest = this.#latest.get(schema.ns);
    if (latest === undefined || latest.version < schema.version) {
      this.#latest.set(schema.ns, schema);
    }
    return schema;
  }

  get(id: string): Schema | undefined {
    return this.#byId.get(id);
  }

  /** How many schemas are registered (none: a sync server's database). */
  get size(): number {
    return this.#byId.size;
  }

  /** Whether any registered schema declares a field named `name` (what `createIndex` accepts). */
  hasField(name: string): boolean {
    for (const schema of this.#byId.values()) {
      if (Object.hasOwn(schema.fields, name)) return true;
    }
    return false;
  }

  /** The highest registered version of a namespace. */
  latest(ns: string): Schema | undefined {
    return this.#latest.get(ns);
  }

  /**
   * Brings values written under `fromSchemaId` up to `toSchema` by applying each later
   * version's `upgrade` in turn (v1→v2→v3), checking every step's result like `create` input.
   * Values already at `toSchema` are returned as they are.
   */
  upgrade<F extends FieldDefs>(
    values: Readonly<Record<string, unknown>>,
    fromSchemaId: string,
    toSchema: Schema<F>,
  ): ValuesOf<F> {
    if (fromSchemaId === toSchema.id) return values as ValuesOf<F>;
    let current = values;
    for (const step of this.#steps(fromSchemaId, toSchema as unknown as Schema)) {
      current = upgradeStep(step, current, step.version - 1);
    }
    return current as ValuesOf<F>;
  }

  /** The schemas after `fromSchemaId` up to and including `to`; all must be known. */
  #steps(fromSchemaId: string, to: Schema): Schema[] {
    const from = this.#byId.get(fromSchemaId);
    if (from === undefined) throw unknownSchema(fromSchemaId, `needed to upgrade to ${to.id}`);
    if (from.ns !== to.ns || from.version > to.version) {
      throw new CairnError("E_UPGRADE_FAILED", `cannot turn ${from.id} into ${to.id}`);
    }
    const steps: Schema[] = [];
    for (let version = from.version + 1; version < to.version; version++) {
      const id = `${to.ns}@${version}`;
      const step = this.#byId.get(id);
      if (step === undefined) throw unknownSchema(id, `needed to upgrade ${from.id} to ${to.id}`);
      steps.push(step);
    }
    steps.push(to);
    return steps;
  }
}
