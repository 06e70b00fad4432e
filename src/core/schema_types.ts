/**
 * The type-level half of schemas: how a schema definition's field declarations turn into the
 * TypeScript types of its values, so `defineSchema({...})` needs no hand-written interface.
 */
import type { FieldRecord, WireValue } from "./commit.ts";
import type { FieldType, MapScalar } from "./field_type.ts";

/** The typed (in-memory) form of each field type; see field_type.ts for the wire forms. */
export interface TypedValueByType {
  string: string;
  number: number;
  boolean: boolean;
  date: Date;
  set: ReadonlySet<string>;
  map: ReadonlyMap<string, MapScalar>;
  text: string;
  counter: number;
}

export type TypedValue<T extends FieldType> = TypedValueByType[T];

/** What `validate` returns: `false` or a message rejects the value, anything else accepts it. */
export type ValidationResult = boolean | string;

interface FieldDefOf<T extends FieldType> {
  readonly type: T;
  /** A required field must be present in every value (a default satisfies it). */
  readonly required?: boolean;
  /** Used by `create` when the field is absent; a function is called once per created value. */
  readonly default?: TypedValue<T> | (() => TypedValue<T>);
  readonly validate?: (value: TypedValue<T>) => ValidationResult;
}

/** One field's declaration; a union over the types so `validate` and `default` get typed. */
export type FieldDef = { [T in FieldType]: FieldDefOf<T> }[FieldType];

export type FieldDefs = { readonly [name: string]: FieldDef };

/**
 * Turns a value of the previous schema version into a value of this one. `old` holds typed
 * values (Sets, Maps, Dates) and must not be mutated; the result is checked like `create` input.
 */
export type UpgradeFn = (
  old: Readonly<Record<string, unknown>>,
  fromVersion: number,
) => Readonly<Record<string, unknown>>;

export interface SchemaDef<F extends FieldDefs> {
  /** Namespace shared by all versions of one kind of item, e.g. "task". */
  readonly ns: string;
  readonly version: number;
  readonly fields: F;
  /** Fields the query layer keeps sorted indexes for. */
  readonly indexes?: readonly (keyof F & string)[];
  /** How to read a value written under version `version - 1` (see SchemaRegistry.upgrade). */
  readonly upgrade?: UpgradeFn;
}

/**
 * A definition that names the version it upgrades from (`from`: the schema of `version - 1`, same
 * `ns`), so `upgrade` is typed from that version's values to this version's create input.
 */
export interface SchemaUpgradeDef<F extends FieldDefs, P extends FieldDefs>
  extends Omit<SchemaDef<F>, "upgrade"> {
  readonly from: Schema<P>;
  readonly upgrade?: (old: ValuesOf<P>, fromVersion: number) => CreateInputOf<F>;
}

export type TypedOf<D> = D extends { readonly type: infer T extends FieldType } ? TypedValue<T>
  : never;

type IsRequired<D> = D extends { readonly required: true } ? true : false;
type HasDefault<D> = D extends { readonly default: unknown } ? true : false;

/** Fields every stored value has. */
type PresentKeys<F> = { [K in keyof F]: IsRequired<F[K]> extends true ? K : never }[keyof F];
/** Fields `create` cannot fill in by itself. */
type MandatoryInputKeys<F> = {
  [K in keyof F]: IsRequired<F[K]> extends true ? HasDefault<F[K]> extends true ? never : K
    : never;
}[keyof F];

/** Flattens an intersection so editors show one object type. */
type Simplify<T> = { [K in keyof T]: T[K] } & unknown;

export type ValuesOf<F> = Simplify<
  & { readonly [K in PresentKeys<F>]: TypedOf<F[K]> }
  & { readonly [K in Exclude<keyof F, PresentKeys<F>>]?: TypedOf<F[K]> }
>;

export type CreateInputOf<F> = Simplify<
  & { [K in MandatoryInputKeys<F>]: TypedOf<F[K]> }
  & { [K in Exclude<keyof F, MandatoryInputKeys<F>>]?: TypedOf<F[K]> }
>;

/**
 * A defined, frozen schema. Its methods convert between the three forms of an item's value:
 * caller input, typed values (what reads return) and wire records (what commits carry).
 */
export interface Schema<F extends FieldDefs = FieldDefs> {
  /** `${ns}@${version}`, the id commits carry. */
  readonly id: string;
  readonly ns: string;
  readonly version: number;
  readonly fields: F;
  /** Field names in definition order. */
  readonly fieldNames: readonly (keyof F & string)[];
  readonly indexes: readonly (keyof F & string)[];
  readonly upgrade: UpgradeFn | undefined;

  /** Checks caller input and returns a fresh values object with defaults applied. */
  create(input: CreateInputOf<F>): ValuesOf<F>;
  /** `toWire(create(input))` in one pass, without the intermediate typed copy (the write path). */
  createWire(input: CreateInputOf<F>): FieldRecord;
  /** `fieldToWire(checkField(name, value))` in one pass; undefined unsets the field. */
  checkFieldWire<K extends keyof F & string>(
    name: K,
    value: TypedOf<F[K]> | undefined,
  ): WireValue | undefined;
  /** Checks one field's new value for an update; `undefined` unsets the field. */
  checkField<K extends keyof F & string>(
    name: K,
    value: TypedOf<F[K]> | undefined,
  ): TypedOf<F[K]> | undefined;
  /** Canonical wire form of values produced by `create`, `checkField` or `fromWire`. */
  toWire(values: ValuesOf<F>): FieldRecord;
  /** Typed values from an untrusted wire record; a mismatch is E_CORRUPT_ENCODING. */
  fromWire(record: unknown): ValuesOf<F>;
  fieldToWire<K extends keyof F & string>(name: K, value: TypedOf<F[K]>): WireValue;
  fieldFromWire<K extends keyof F & string>(name: K, wire: unknown): TypedOf<F[K]>;
}

/**
 * Any schema, whatever its fields: for APIs that accept every schema (register, `create`'s type
 * parameter). `Schema<F>` is invariant in `F` (F appears under `keyof` and in inputs), so a
 * concrete schema is not a `Schema<FieldDefs>`; `any` here is the one honest way to say "some F".
 */
// deno-lint-ignore no-explicit-any
export type AnySchema = Schema<any>;

/** Fields of a schema type, or of a field-definitions type itself. */
export type FieldsOf<S> = S extends Schema<infer F> ? F : S;

/** The typed values of an item following schema `S` (e.g. `Values<typeof Task>`). */
export type Values<S> = ValuesOf<FieldsOf<S>>;
/** What `S.create` accepts: required fields without a default are mandatory. */
export type CreateInput<S> = CreateInputOf<FieldsOf<S>>;
export type FieldName<S> = keyof FieldsOf<S> & string;
export type FieldValue<S, K extends FieldName<S>> = TypedOf<FieldsOf<S>[K]>;
/**
 * What reading field `K` returns: its value, or `undefined` when the field is not required (an
 * optional field may be absent, unset, or never set — a default only fills in `create`).
 */
export type FieldRead<S, K extends FieldName<S>> = K extends PresentKeys<FieldsOf<S>>
  ? FieldValue<S, K>
  : FieldValue<S, K> | undefined;
