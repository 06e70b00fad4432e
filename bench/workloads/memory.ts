/**
 * M01: memory held per item, measured in a fresh process (bench/fresh/probe.ts) so that nothing
 * an earlier row or sample left behind counts: just after opening N items, and after reading
 * every value; heap and RSS each.
 */
import { type CairnCtx, filledRepo } from "../contenders/cairn.ts";
import type { FreshReply, MemoryPoint, MemoryReply } from "../fresh/protocol.ts";
import { countLabel } from "../lib/format.ts";
import { freshDatabase, type SqlCtx, uniqueName } from "../lib/sql.ts";
import { NotApplicable, side, type Variant } from "../lib/types.ts";
import { big, freshProcess, PER_ITEM, requirePersistent, SqlBenchWorkload } from "./common.ts";

type Point = keyof MemoryReply;
type Measure = keyof MemoryPoint;

const POINTS: readonly [Point, string][] = [
  ["afterOpen", "after open"],
  ["afterRead", "every value read"],
];
const MEASURES: readonly [Measure, string][] = [["heap", "heap"], ["rss", "RSS"]];

/** "100k items · after open · heap", for each point and measure. */
export function memoryVariantsAt(items: number): Variant[] {
  return POINTS.flatMap(([point, pointLabel]) =>
    MEASURES.map(([measure, measureLabel]) => ({
      label: `${countLabel(items)} items · ${pointLabel} · ${measureLabel}`,
      items,
      point,
      measure,
    }))
  );
}

/** The figure a variant asks for, per item. */
function perItem(reply: MemoryReply, variant: Variant): number {
  return reply[variant.point as Point][variant.measure as Measure] / variant.items;
}

/**
 * The four variants of one size are four readings of the same fresh processes: a contender's
 * first variant runs them (one per sample, on one database) and keeps their replies, the next
 * ones read them, and the last one lets them go.
 */
const readings = new Map<string, Promise<MemoryReply[]>>();

function readingsOf(
  key: string,
  variant: Variant,
  take: () => Promise<MemoryReply[]>,
): Promise<MemoryReply[]> {
  let found = readings.get(key);
  if (!found) readings.set(key, found = take());
  if (variant.point === "afterRead" && variant.measure === "rss") readings.delete(key);
  return found;
}

async function inProcesses(
  samples: number,
  run: () => Promise<FreshReply>,
): Promise<MemoryReply[]> {
  const replies: MemoryReply[] = [];
  for (let i = 0; i < samples; i++) replies.push(await run() as MemoryReply);
  return replies;
}

export const memory: SqlBenchWorkload = {
  id: "M01.v4",
  title: "Memory per item",
  ...PER_ITEM,
  variants: (quick) => memoryVariantsAt(big(quick)),
  zeroSample: "RSS changes in whole pages and SQLite reuses memory the process already holds " +
    "(its page cache is at most 2 MiB by default), so this sample did not see SQLite's share",
  timed: {
    cairn: "In a fresh process (Deno or Node, nothing else run in it) on a repository of N " +
      "items written and closed before: heap (JS heap plus ArrayBuffer memory, once full GCs " +
      "free nothing more) " +
      "and RSS, minus the same just before `Cairn.open`, divided by N — once just after " +
      '`db.open("/bench/items")` (values not read yet: they stay checkpoint bytes until first ' +
      "read), once after reading title, count and tags of every item. A new process per sample " +
      "(the four variants are readings of the same processes); every sample is kept in the " +
      "envelope.",
    sqlite: "The same fresh process on a database file of N items written and closed before: RSS " +
      "minus the same before opening, divided by N — after opening the connection and preparing " +
      "`SELECT id, title, count, tags FROM items`, then after reading every row. The heap " +
      "variants are n/a: SQLite allocates outside the JS heap.",
  },
  indexes: { cairn: "none", sqlite: "primary-key index on id" },
  fairness: "The same process, the same two points and the same measure on both sides; heap " +
    "only where it holds the engine's data (Cairn). Memory is shown side by side, never as a " +
    "ratio. Chromium has no fresh process here: n/a.",
  cairn: side({
    requires: ["storage"],
    async setup(ctx: CairnCtx, variant, plan) {
      const run = freshProcess(ctx.inFreshProcess);
      const replies = await readingsOf(
        `cairn ${ctx.contender} ${variant.items}`,
        variant,
        async () => {
          const { db, location } = await filledRepo(ctx, variant.items);
          await db.close();
          return inProcesses(plan.samples, () => run("memory", location!));
        },
      );
      return { replies, variant };
    },
    sample: ({ replies, variant }, index) => perItem(replies[index], variant),
  }),
  sqlite: side({
    async setup(ctx: SqlCtx, variant, plan) {
      requirePersistent(ctx);
      const run = freshProcess(ctx.inFreshProcess);
      if (variant.measure === "heap") {
        throw new NotApplicable(
          "SQLite allocates outside the JS heap (the RSS variants count its memory)",
        );
      }
      const replies = await readingsOf(
        `sqlite ${ctx.engine.id} ${variant.items}`,
        variant,
        async () => {
          const name = uniqueName("m01");
          freshDatabase(ctx.engine, name, variant.items).close();
          try {
            return await inProcesses(plan.samples, () => run("memory", name));
          } finally {
            ctx.engine.remove(name);
          }
        },
      );
      return { replies, variant };
    },
    sample: ({ replies, variant }, index) => perItem(replies[index], variant),
  }),
};

export const MEMORY = [memory];
