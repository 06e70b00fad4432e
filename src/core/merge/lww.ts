/**
 * Last writer wins, for scalar fields (string, number, boolean, date as epoch ms): of the sides
 * that changed the value (setting, replacing or removing it), the one with the greatest stamp
 * wins. Stamps order by hybrid logical clock, then session, then sequence, so every peer picks
 * the same winner. If no side changed the value, the base stays.
 */
import { compareStamps, type FieldMerge, type MergeSide } from "./types.ts";

export type ScalarWire = string | number | boolean;

export const mergeLastWriterWins: FieldMerge<ScalarWire> = (base, sides) => {
  let winner: MergeSide<ScalarWire> | undefined;
  for (const side of sides) {
    if (side.value === base) continue;
    if (winner === undefined || compareStamps(side.stamp, winner.stamp) > 0) winner = side;
  }
  return winner === undefined ? base : winner.value;
};
