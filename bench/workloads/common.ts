/** Sizes and small helpers the workload modules share. */
import type { CairnCtx } from "../contenders/cairn.ts";
import type { TextCtx } from "../contenders/text.ts";
import { countLabel } from "../lib/format.ts";
import type { SqlCtx } from "../lib/sql.ts";
import { NotApplicable, type SqlWorkload, type Variant, type Workload } from "../lib/types.ts";

export type BenchWorkload = Workload<CairnCtx, SqlCtx, TextCtx>;
export type SqlBenchWorkload = SqlWorkload<CairnCtx, SqlCtx>;

/** "100k items" in a full run; small enough for the CI smoke test in quick mode. */
export function big(quick: boolean): number {
  return quick ? 5_000 : 100_000;
}

export function itemsLabel(n: number): string {
  return `${countLabel(n)} items`;
}

/** The one variant of rows over a big repository: "100k items". */
export function allItems(quick: boolean): Variant[] {
  return [{ label: itemsLabel(big(quick)), items: big(quick) }];
}

/** Shortest time one per-operation sample runs, so a coarse clock still resolves it. */
export function minSampleMs(quick: boolean): number {
  return quick ? 2 : 10;
}

/** In-memory SQLite has nothing to reopen: rows about reopening do not apply to it. */
export function requirePersistent(ctx: SqlCtx): void {
  if (!ctx.engine.persistent) {
    throw new NotApplicable("in-memory database: there is nothing to reopen");
  }
}

/**
 * A side's fresh-process runner; n/a where the runtime has none (the browser, SQLite WASM in
 * memory).
 */
export function freshProcess<T>(run: T | undefined): T {
  if (!run) {
    throw new NotApplicable(
      "measured in a fresh process, which the bench starts on Deno and Node only (a fresh page " +
        "per sample is not wired into the browser runner): a figure taken in the page would " +
        "count what earlier rows left behind",
    );
  }
  return run;
}

/** Heap bytes in use after a full GC; a row where they cannot be measured does not apply. */
export async function heap(ctx: { gc(): void; heapBytes(): Promise<number | undefined> }) {
  ctx.gc();
  const bytes = await ctx.heapBytes();
  if (bytes === undefined) throw new NotApplicable("heap size is not measurable here");
  return bytes;
}

/** Rows that measure bytes per item of a big repository (memory, disk): no ratio, no clock. */
export const PER_ITEM = {
  family: "footprint",
  unit: "B/item",
  better: "lower",
  scale: "memory",
  comparable: false,
  variants: allItems,
} as const;

export const SQLITE_PK = "primary-key index on id; prepared statements";
export const CAIRN_MAP = "none (items map by key)";
