/**
 * The value of an item as a pure function of its leaf set (docs/merge-rules.md): one leaf → its
 * value; several → a field-by-field merge of the leaves from their lowest common ancestor,
 * with every tie decided by stamps. Every peer holding the same commits computes the same value.
 */
import type { Commit, FieldRecord, WireValue } from "../core/commit.ts";
import type { ItemValue } from "../core/item_state.ts";
import { mergeField } from "../core/merge/mod.ts";
import { compareStamps, type MergeSide } from "../core/merge/types.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { Schema } from "../core/schema_types.ts";
import type { CommitGraph } from "./commit_graph.ts";

export interface MergedValue extends ItemValue {
  /**
   * False when a schema the merge needs is not registered here: the newest leaf's value stands
   * in until it is, and the item must be merged again then (Repository.remergeUnresolved).
   */
  readonly complete: boolean;
  /** The leaves' lowest common ancestor the merge started from (null: none), when it needed one. */
  readonly ancestor?: Commit | null;
}

/**
 * `isDocument(field)`: the field is a text field held as a document (repo/text_fields.ts), whose
 * text is the document's whatever the leaves: it is present when any live leaf has it, and its
 * value here is a stand-in the caller replaces with the document's text. `knownAncestor`: the
 * leaves' lowest common ancestor when the caller knows it (see Repository.#merged).
 */
export function mergeLeaves(
  graph: CommitGraph,
  leafCommits: readonly Commit[],
  registry: SchemaRegistry,
  isDocument: (field: string) => boolean = () => false,
  knownAncestor?: Commit | null,
): MergedValue {
  const leaves = [...leafCommits].sort(compareStamps);
  const newest = leaves[leaves.length - 1];
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
  if (!target) return { wire: graph.valueAt(newest), schema: newest.schema, complete: false };

  const ancestor = knownAncestor !== undefined
    ? knownAncestor
    : graph.lowestCommonAncestor(leaves) ?? null;
  const base = ancestor && inSchema(graph.valueAt(ancestor), ancestor.schema, target, registry);
  const sides = live.map((leaf) => ({
    stamp: leaf,
    value: inSchema(graph.valueAt(leaf), leaf.schema, target, registry) ?? {},
  }));

  const merged: FieldRecord = {};
  for (const field of target.fieldNames) {
    if (target.fields[field].type === "text" && isDocument(field)) {
      if (sides.some((side) => side.value[field] !== undefined)) merged[field] = "";
      continue;
    }
    const fieldSides: MergeSide<WireValue>[] = sides.map((side) => ({
      stamp: side.stamp,
      value: side.value[field],
    }));
    const value = mergeField(target.fields[field].type, base?.[field], fieldSides);
    if (value !== undefined) merged[field] = value;
  }
  return { wire: merged, schema: target.id, complete: true, ancestor };
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

/** A wire value written under `schemaId`, brought up to `target` (undefined stays undefined). */
function inSchema(
  wire: FieldRecord | undefined,
  schemaId: string,
  target: Schema,
  registry: SchemaRegistry,
): FieldRecord | undefined {
  if (wire === undefined || schemaId === target.id) return wire;
  const from = registry.get(schemaId);
  if (!from || from.ns !== target.ns) return undefined;
  return target.toWire(registry.upgrade(from.fromWire(wire), schemaId, target));
}
