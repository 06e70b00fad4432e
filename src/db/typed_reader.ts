/**
 * Typed access to an item's wire value: reads convert (and upgrade an older schema version,
 * lazily, on first read), writes validate and produce the new wire value.
 *
 * The typed values of a whole item (toObject(), and reads that upgrade an older version) are
 * cached per wire object and version read. A wire object is never mutated after it is stored — every change stores
 * a new one — so the cache can never serve a stale value.
 */
import type { FieldRecord } from "../core/commit.ts";
import { CairnError } from "../core/errors.ts";
import type { FieldType } from "../core/field_type.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import { checkTextEdit } from "../core/text/text_doc.ts";
import { copyRecord } from "../core/text/text_record.ts";
import type { FieldDef, Schema } from "../core/schema_types.ts";
import type { ItemValue } from "../core/item_state.ts";
import type { Repository } from "../repo/repository.ts";
import { describeShort } from "./arguments.ts";

/** Field types whose typed value is their wire value: read straight from the wire record. */
const SAME_AS_WIRE: ReadonlySet<FieldType> = new Set([
  "string",
  "number",
  "boolean",
  "text",
  "counter",
]);

type TypedValues = Readonly<Record<string, unknown>>;

const NO_FIELDS: FieldRecord = Object.freeze({}) as FieldRecord;
const NO_NAMES: string[] = Object.freeze([]) as unknown as string[];

export class TypedReader {
  readonly #registry: SchemaRegistry;
  readonly #cache = new WeakMap<FieldRecord, CachedValues>();

  constructor(registry: SchemaRegistry) {
    this.#registry = registry;
  }

  /**
   * One field's typed value. A set, date or map read from an item stored under `schema` is made
   * for this read, not kept: the caller may change it, and reading every item's field once does
   * not leave a typed copy of every value behind (toObject() keeps one, for a stable identity).
   */
  field(repo: Repository, key: string, schema: Schema, field: string): unknown {
    const current = this.#live(repo, key);
    const def = fieldDef(schema, field);
    if (current.schema !== schema.id) {
      return this.#typed(current.wire!, current.schema, schema)[field];
    }
    const wire = current.wire![field];
    if (SAME_AS_WIRE.has(def.type) || wire === undefined) return wire;
    return schema.fieldFromWire(field, wire);
  }

  values(repo: Repository, key: string, schema: Schema): TypedValues {
    const current = this.#live(repo, key);
    return this.#typed(current.wire!, current.schema, schema);
  }

  /** Sets one field: the common update, kept free of per-call objects beyond the commit's own. */
  writeField(repo: Repository, key: string, schema: Schema, field: string, value: unknown): void {
    if (typeof field !== "string") fieldDef(schema, field); // refused before it is a property key
    const current = this.#live(repo, key);
    if (current.schema !== schema.id) {
      return this.#writeUpgraded(repo, key, schema, current, { [field]: value });
    }
    const wire = schema.checkFieldWire(field, value as never);
    const next = copyRecord(current.wire!);
    if (wire === undefined) {
      delete next[field];
      repo.writeChange(key, schema.id, next, NO_FIELDS, [field]);
    } else {
      next[field] = wire;
      repo.writeChange(key, schema.id, next, { [field]: wire }, NO_NAMES);
    }
  }

  write(repo: Repository, key: string, schema: Schema, changes: Record<string, unknown>): void {
    const current = this.#live(repo, key);
    if (current.schema !== schema.id) {
      return this.#writeUpgraded(repo, key, schema, current, changes);
    }
    const set: FieldRecord = {};
    const unset: string[] = [];
    for (const field in changes) {
      const wire = schema.checkFieldWire(field, changes[field] as never);
      if (wire === undefined) unset.push(field);
      else set[field] = wire;
    }
    // Nothing to change is nothing to commit: an empty update leaves no trace in the history.
    if (unset.length === 0 && isEmpty(set)) return;
    const next = Object.assign(copyRecord(current.wire!), set);
    for (const field of unset) delete next[field];
    repo.writeChange(key, schema.id, next, set, unset);
  }

  /**
   * Edits a text field by position (Item.insertText, deleteText): at `index`, `deleted` code units
   * removed, then `inserted` put there. A value under an older schema version is upgraded first.
   */
  editText(
    repo: Repository,
    key: string,
    schema: Schema,
    field: string,
    index: number,
    deleted: number,
    inserted: unknown,
  ): void {
    const def = fieldDef(schema, field);
    if (def.type !== "text") {
      throw new CairnError("E_WRONG_TYPE", `${schema.id}.${field} is not a text field`);
    }
    // Lone surrogates are refused, as in every string written (docs/api.md, "Strings").
    if (typeof inserted !== "string" || !inserted.isWellFormed()) {
      throw new CairnError(
        "E_WRONG_TYPE",
        `text to insert must be a well-formed string (no lone surrogates)`,
      );
    }
    if (deleted === 0 && inserted.length === 0) {
      // Nothing to change (as an empty update): checked, then nothing is committed.
      const text = this.field(repo, key, schema, field);
      checkTextEdit(typeof text === "string" ? text : "", { index, deleted, inserted });
      return;
    }
    const current = this.#live(repo, key);
    if (current.schema !== schema.id) {
      // Checked against the upgraded text before the upgrade is written: a refused edit writes
      // nothing.
      const upgraded = this.#typed(current.wire!, current.schema, schema)[field];
      const change = { index, deleted, inserted };
      checkTextEdit(typeof upgraded === "string" ? upgraded : "", change);
      this.#writeUpgraded(repo, key, schema, current, {});
    }
    repo.editText(key, schema.id, field, { index, deleted, inserted });
  }

  /** The stored value follows another version: write the whole upgraded value under this one. */
  #writeUpgraded(
    repo: Repository,
    key: string,
    schema: Schema,
    current: ItemValue,
    changes: Record<string, unknown>,
  ): void {
    const upgraded: Record<string, unknown> = {
      ...this.#typed(current.wire!, current.schema, schema),
    };
    for (const field in changes) {
      if (changes[field] === undefined) delete upgraded[field];
      else upgraded[field] = changes[field];
    }
    repo.writeValue(key, schema.id, schema.createWire(upgraded as never));
  }

  #live(repo: Repository, key: string): ItemValue {
    const current = repo.value(key);
    if (!current) throw notFound(repo, key);
    return current;
  }

  #typed(wire: FieldRecord, schemaId: string, target: Schema): TypedValues {
    // One entry per version read: a value read through two versions (useItem with v1 beside
    // one with the newest) must give each the same object every time. Nearly every value is
    // read through one version only, kept without a map.
    const cached = this.#cache.get(wire);
    if (cached?.schema === target) return cached.values;
    const other = cached?.others?.get(target);
    if (other !== undefined) return other;
    const source = this.#registry.get(schemaId);
    if (!source) {
      throw new CairnError(
        "E_UNKNOWN_SCHEMA",
        `schema ${schemaId} is not registered in this database`,
      );
    }
    const values = Object.freeze(this.#registry.upgrade(source.fromWire(wire), schemaId, target));
    if (cached === undefined) this.#cache.set(wire, { schema: target, values });
    else (cached.others ??= new Map()).set(target, values);
    return values;
  }
}

/** A wire value's typed values as the version first read, and as any other versions read. */
interface CachedValues {
  readonly schema: Schema;
  readonly values: TypedValues;
  others?: Map<Schema, TypedValues>;
}

/**
 * The declaration of `field` in `schema`, or E_UNKNOWN_FIELD. A caller's field name may be
 * anything: only a string is looked up (an object without a prototype cannot even be turned into
 * a property key).
 */
function fieldDef(schema: Schema, field: unknown): FieldDef {
  const def = typeof field === "string" && Object.hasOwn(schema.fields, field)
    ? schema.fields[field]
    : undefined;
  if (def === undefined) {
    throw new CairnError("E_UNKNOWN_FIELD", `${schema.id} has no field ${describeShort(field)}`);
  }
  return def;
}

function isEmpty(record: FieldRecord): boolean {
  for (const _ in record) return false;
  return true;
}

function notFound(repo: Repository, key: string): CairnError {
  return new CairnError("E_NOT_FOUND", `no item ${key} in ${repo.path} (deleted or never created)`);
}
