/**
 * Maps merge per key, last writer wins: for each key, of the sides that changed it (set it,
 * replaced its value or removed it), the one with the greatest stamp decides; keys nobody
 * changed keep their base value. So concurrent edits of different keys all survive. An absent
 * map counts as empty; the result is absent only when the field is absent everywhere.
 */
import type { MapScalar } from "../field_type.ts";
import { agreedValue, CONFLICT, sameScalarMaps } from "./equal.ts";
import { compareStamps, type FieldMerge, type Stamp } from "./types.ts";

export type MapWire = { [key: string]: MapScalar };

const EMPTY: MapWire = Object.freeze({});

export const mergeMap: FieldMerge<MapWire> = (base, sides) => {
  const agreed = agreedValue(base, sides, sameScalarMaps);
  if (agreed !== CONFLICT) return agreed ?? (base === undefined ? undefined : {});

  const origin = base ?? EMPTY;
  const keys = new Set(Object.keys(origin));
  for (const side of sides) for (const key of Object.keys(side.value ?? EMPTY)) keys.add(key);

  const entries: [string, MapScalar][] = [];
  for (const key of [...keys].sort()) {
    const before = valueAt(origin, key);
    let value = before;
    let winner: Stamp | undefined;
    for (const side of sides) {
      const candidate = valueAt(side.value ?? EMPTY, key);
      if (candidate === before) continue;
      if (winner === undefined || compareStamps(side.stamp, winner) > 0) {
        winner = side.stamp;
        value = candidate;
      }
    }
    if (value !== undefined) entries.push([key, value]);
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays an ordinary key.
  return Object.fromEntries(entries);
};

function valueAt(map: MapWire, key: string): MapScalar | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}
