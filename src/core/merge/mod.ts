/**
 * The per-field merge rules (docs/merge-rules.md) and `mergeField`, which picks
 * the rule for a field's declared type. Values are wire forms and are trusted to match the type
 * (the schema layer checks them).
 */
import type { WireValue } from "../commit.ts";
import type { FieldType } from "../field_type.ts";
import { mergeCounter } from "./counter.ts";
import { mergeLastWriterWins, type ScalarWire } from "./lww.ts";
import { type MapWire, mergeMap } from "./map.ts";
import { mergeSet } from "./set.ts";
import { mergeText } from "./text.ts";
import type { MergeSide } from "./types.ts";

export { mergeCounter } from "./counter.ts";
export { mergeLastWriterWins, type ScalarWire } from "./lww.ts";
export { type MapWire, mergeMap } from "./map.ts";
export { mergeSet } from "./set.ts";
export { mergeText, type TextEdit, textEdits } from "./text.ts";
export { compareStamps, type FieldMerge, type MergeSide, type Stamp } from "./types.ts";

/** Merges one field of the given type from its base value and every leaf's value. */
export function mergeField(
  type: FieldType,
  base: WireValue | undefined,
  sides: readonly MergeSide<WireValue>[],
): WireValue | undefined {
  switch (type) {
    case "string":
    case "number":
    case "boolean":
    case "date":
      return mergeLastWriterWins(
        base as ScalarWire | undefined,
        sides as readonly MergeSide<ScalarWire>[],
      );
    case "set":
      return mergeSet(base as string[] | undefined, sides as readonly MergeSide<string[]>[]);
    case "map":
      return mergeMap(base as MapWire | undefined, sides as readonly MergeSide<MapWire>[]);
    case "text":
      return mergeText(base as string | undefined, sides as readonly MergeSide<string>[]);
    case "counter":
      return mergeCounter(base as number | undefined, sides as readonly MergeSide<number>[]);
  }
}
