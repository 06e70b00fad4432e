/**
 * The value of an item as a pure function of its leaf set (docs/merge-rules.md): one leaf → its
 * value; several → a field-by-field merge of the leaves from their lowest common ancestor,
 * with every tie decided by stamps. Every peer holding the same commits computes the same value.
 */
import { type Commit, commitId, type FieldRecord, type WireValue } from "../core/commit.ts";
import { CairnError, isCairnError } from "../core/errors.ts";
import type { ItemValue } from "../core/item_state.ts";
import { mergeField } from "../core/merge/mod.ts";
import { compareStamps, type MergeSide } from "../core/merge/types.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { Schema } from "../core/schema_types.ts";
import type { CommitGraph } from "./commit_graph.ts";
import { textFieldNames, withEditsAsEmptyText } from "./text_fields.ts";

export interface MergedValue extends ItemValue {
  /**
   * False when the merge cannot be made here yet — a schema it needs is not registered, an
   * upgrade throws, or a value does not match its schema: the newest leaf's value stands in, and
   * the item is merged again when schemas are registered (Repository.remergeUnresolved).
   */
  readonly complete: boolean;
  /** The leaves' lowest common ancestor the merge started from (null: none), when it needed one. */
  readonly ancestor?: Commit | null;
  /**
   * The merge itself, when every leaf is live and shares the ancestor: a leaf that starts from
   * that ancestor too can be added to it (LeafMerge.add) instead of merging every leaf again.
   */
  readonly merge?: LeafMerge;
}

/**
 * `isDocument(field)`: the field is a text field held as a document (repo/text_fields.ts), whose
 * text is the document's whatever the leaves: it is present when any live leaf has it, and its
 * value here is a stand-in the caller replaces with the document's text. `knownAncestor`: the
 * leaves' lowest common ancestor when the caller knows it (see Repository.#merged).
 */
export function mergeLeaves(
  graph: CommitGraph,
  leaves: readonly Commit[],
  registry: SchemaRegistry,
  isDocument: (field: string) => boolean = () => false,
  knownAncestor?: Commit | null,
): MergedValue {
  // The rules do not depend on the order of the sides; only the newest leaf matters here. (No
  // sort: an item with L concurrent leaves is merged again at each commit that adds one.)
  let newest = leaves[0];
  for (const leaf of leaves) if (compareStamps(leaf, newest) > 0) newest = leaf;
  // Whether the item exists is decided by the newest leaf: a delete after (by stamp) a
  // concurrent edit wins; an edit after a concurrent delete brings the item back.
  if (newest.kind === "delete") {
    return { wire: undefined, schema: newest.schema, complete: true };
  }
  const live = leaves.filter((leaf) => leaf.kind !== "delete");
  if (live.length === 1) {
    return { wire: graph.valueAt(newest), schema: newest.schema, complete: true };
  }

  const target = targetSchema(live, registry);
  if (!target) return unmerged(graph, newest);
  const ancestor = knownAncestor !== undefined
    ? knownAncestor
    : graph.lowestCommonAncestor(leaves) ?? null;
  try {
    // Values read, never changed: the merged record is a new one.
    const base = ancestor === null
      ? undefined
      : inSchema(graph.readValueAt(ancestor), ancestor.schema, target, registry);
    const merge = new LeafMerge(ancestor, target, base, isDocument);
    for (const leaf of live) {
      merge.add(leaf, inSchema(graph.readValueAt(leaf), leaf.schema, target, registry));
    }
    const wire = merge.result();
    if (wire === undefined) return unmerged(graph, newest);
    const reusable = ancestor !== null && live.length === leaves.length &&
      live.length >= KEPT_FROM_LEAVES;
    return {
      wire,
      schema: target.id,
      complete: true,
      ancestor,
      merge: reusable ? merge : undefined,
    };
  } catch (err) {
    // An upgrade that throws, or the ancestor's version or one in between not registered: the
    // commits are held all the same, and the item waits as it does for an unknown schema (as for
    // a value its schema refuses, above).
    if (isCairnError(err)) return unmerged(graph, newest);
    throw err;
  }
}

/** The value of a merge that cannot be made yet: the newest leaf's, to be merged again later. */
function unmerged(graph: CommitGraph, newest: Commit): MergedValue {
  return { wire: graph.valueAt(newest), schema: newest.schema, complete: false };
}

/**
 * Merges of fewer leaves are not kept for adding to: merging a handful again costs little, and a
 * kept merge costs memory for as long as the item stays merged (after an offline sync, that may
 * be many items of two leaves each).
 */
const KEPT_FROM_LEAVES = 4;

const NO_SIDES: readonly MergeSide<WireValue>[] = [];

/**
 * A field-by-field merge of leaves from their common ancestor's value (`base`), built up one leaf
 * at a time. Per field it keeps only the leaves whose value there is not the very value of base:
 * every rule passes over such a side (it changed nothing), so merging just the others gives the
 * same result (docs/merge-rules.md). A leaf that changed one field of many then costs one side,
 * and N concurrent leaves that each change a text document (X05's many users) cost no side at
 * all: adding a leaf costs a pass over the fields, not over every leaf again.
 */
export class LeafMerge {
  readonly ancestor: Commit | null;
  readonly target: Schema;
  readonly #base: FieldRecord | undefined;
  /** Which of the target's fields were text documents when the merge began. */
  readonly #documents: readonly boolean[];
  /** Per field, the sides that changed it (made when the first one comes). */
  readonly #changed: (MergeSide<WireValue>[] | undefined)[];
  /** Per document field, whether some leaf has it. */
  readonly #present: boolean[];

  constructor(
    ancestor: Commit | null,
    target: Schema,
    base: FieldRecord | undefined,
    isDocument: (field: string) => boolean,
  ) {
    this.ancestor = ancestor;
    this.target = target;
    this.#base = base;
    this.#documents = target.fieldNames.map((field) =>
      target.fields[field].type === "text" && isDocument(field)
    );
    this.#changed = target.fieldNames.map(() => undefined);
    this.#present = target.fieldNames.map(() => false);
  }

  /**
   * Whether a leaf `leaf` may be added: live, under the target schema, starting from the
   * ancestor, with every text field still a document exactly where it was one.
   */
  accepts(leaf: Commit, isDocument: (field: string) => boolean): boolean {
    if (this.ancestor === null || leaf.kind === "delete" || leaf.schema !== this.target.id) {
      return false;
    }
    if (leaf.parents.length !== 1 || leaf.parents[0] !== commitId(this.ancestor)) return false;
    const { fieldNames, fields } = this.target;
    return fieldNames.every((field, i) =>
      fields[field].type !== "text" || isDocument(field) === this.#documents[i]
    );
  }

  /** Adds a live leaf, its value brought to the target schema (undefined: no fields). */
  add(stamp: Commit, value: FieldRecord | undefined): void {
    const fieldNames = this.target.fieldNames;
    for (let i = 0; i < fieldNames.length; i++) {
      const side = value?.[fieldNames[i]];
      if (this.#documents[i]) {
        if (side !== undefined) this.#present[i] = true;
      } else if (side !== this.#base?.[fieldNames[i]]) {
        (this.#changed[i] ??= []).push({ stamp, value: side });
      }
    }
  }

  /**
   * The merged value of the leaves added so far; undefined when a value to merge does not match
   * the target schema (see #sidesMatch), so the merge cannot be made.
   */
  result(): FieldRecord | undefined {
    const { fieldNames, fields } = this.target;
    const merged: FieldRecord = {};
    for (let i = 0; i < fieldNames.length; i++) {
      const field = fieldNames[i];
      if (this.#documents[i]) {
        if (this.#present[i]) merged[field] = "";
        continue;
      }
      const sides = this.#changed[i] ?? NO_SIDES;
      if (sides.length > 0 && !this.#sidesMatch(field, sides)) return undefined;
      const value = mergeField(fields[field].type, this.#base?.[field], sides);
      if (value !== undefined) merged[field] = value;
    }
    return merged;
  }

  /**
   * Whether the base value and every side of `field` match the target schema. A value imported
   * under a schema not registered then was never checked, and the merge rules trust their
   * input: a string for a set merged as its characters, a number for one threw a TypeError.
   */
  #sidesMatch(field: string, sides: readonly MergeSide<WireValue>[]): boolean {
    const base = this.#base?.[field];
    try {
      if (base !== undefined) this.target.fieldFromWire(field, base);
      for (const { value } of sides) {
        if (value !== undefined) this.target.fieldFromWire(field, value);
      }
      return true;
    } catch (err) {
      if (isCairnError(err)) return false;
      throw err;
    }
  }
}

/** The newest registered version among the leaves' schemas, if all share a namespace and are known. */
function targetSchema(leaves: readonly Commit[], registry: SchemaRegistry): Schema | undefined {
  let target: Schema | undefined;
  for (const leaf of leaves) {
    const schema = registry.get(leaf.schema);
    if (!schema || (target && schema.ns !== target.ns)) return undefined;
    if (!target || schema.version > target.version) target = schema;
  }
  return target;
}

/**
 * A wire value written under `schemaId`, brought up to `target` (undefined stays undefined; a
 * value of another namespace counts as none). E_UNKNOWN_SCHEMA when `schemaId` is not registered:
 * only the ancestor's can be, and merging from no base would differ from the merge made once it is.
 */
function inSchema(
  wire: FieldRecord | undefined,
  schemaId: string,
  target: Schema,
  registry: SchemaRegistry,
): FieldRecord | undefined {
  if (wire === undefined || schemaId === target.id) return wire;
  const from = registry.get(schemaId);
  if (!from) throw new CairnError("E_UNKNOWN_SCHEMA", `${schemaId} is not registered`);
  if (from.ns !== target.ns) return undefined;
  // A text field holding edits stands as empty: the merge needs only its presence, and its text
  // is its document's, put in afterwards (TextFields.overlay). Empty, not that text, keeps the
  // merge a function of the commits alone.
  const values = from.fromWire(withEditsAsEmptyText(wire, textFieldNames(from)));
  return target.toWire(registry.upgrade(values, schemaId, target));
}
