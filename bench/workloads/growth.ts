/**
 * G01–G06, "How cost grows": the rows where the size of the database matters most (first open,
 * memory, bytes on disk, writing everything, reading everything cold, a scan just after open),
 * each at 10k, 100k and 1M items. Each runs the side code of the row it is named after, on
 * signed Cairn and the runtime's SQLite baseline, in Deno and Node (a million items in one
 * browser page's OPFS is not what this table is about). docs/benchmarks.md turns them into a
 * table of growth factors, flagging what grows faster than the database.
 */
import { countLabel } from "../lib/format.ts";
import type { Variant } from "../lib/types.ts";
import { readCold, writeAll } from "./bulk.ts";
import type { SqlBenchWorkload } from "./common.ts";
import { disk } from "./disk.ts";
import { openFull } from "./lifecycle.ts";
import { memory, memoryVariantsAt } from "./memory.ts";
import { filterFreshOpen, filterVariant } from "./queries.ts";

/** 10k, 100k, 1M items; in quick mode (the CI smoke test) small sizes a factor of 10 apart. */
export function growthSizes(quick: boolean): number[] {
  return quick ? [100, 1_000, 10_000] : [10_000, 100_000, 1_000_000];
}

const items = (n: number) => `${countLabel(n)} items`;

/** The row `base` measured at every growth size, with the variant each size makes. */
function grown(
  base: SqlBenchWorkload,
  id: string,
  title: string,
  variantsAt: (items: number, quick: boolean) => Variant[],
): SqlBenchWorkload {
  return {
    ...base,
    id,
    title,
    family: "growth",
    // Full sample counts at 1M items would take minutes a row: 7 samples (3 for memory, 1 for
    // a size) after one warm-up.
    scale: base.scale === "us" || base.scale === "ms" ? "long" : base.scale,
    variants: (quick) => growthSizes(quick).flatMap((n) => variantsAt(n, quick)),
    runtimes: ["deno", "node"],
    contenders: ["cairn", "sqlite-wal"], // the baseline on Deno and on Node
    fairness: `${base.fairness} The same sides as ${base.id.split(".")[0]}, at three sizes.`,
  };
}

export const GROWTH: readonly SqlBenchWorkload[] = [
  grown(openFull, "G01.v1", "Open, fresh process", (n) => [
    { label: items(n), items: n, fresh: 1 },
  ]),
  grown(memory, "G02.v2", "Memory per item", (n) => memoryVariantsAt(n)),
  grown(disk, "G03.v1", "Bytes on disk per item", (n) => [{ label: items(n), items: n }]),
  grown(writeAll, "G04.v1", "Write all items + close", (n) => [
    { label: items(n), items: n, close: 1 },
  ]),
  grown(readCold, "G05.v2", "Read all items, cold", (n) => [{ label: items(n), items: n }]),
  grown(
    filterFreshOpen,
    "G06.v3",
    "Open + filter query, no index",
    (n, quick) => [filterVariant(n, n / 100, quick)],
  ),
];
