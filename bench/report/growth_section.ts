/**
 * The "How cost grows" section of docs/benchmarks.md: the growth rows (G01–G06, the same work
 * at 10k, 100k and 1M items) as one table per runtime, with the factor each step of ten costs,
 * flagged where it exceeds linear growth beyond the noise; and where one process stops holding
 * the repository.
 */
import { contenderInfo } from "../contenders/list.ts";
import type { Envelope } from "../lib/envelope.ts";
import { countLabel, num } from "../lib/format.ts";
import { compare, type Summary } from "../lib/stats.ts";
import { SIZE_UNITS, type Unit } from "../lib/types.ts";
import { WORKLOADS } from "../workloads/index.ts";
import type { RuntimeLines } from "./charts.ts";
import type { Line } from "./view.ts";

/** Growth past linear by more than this (and past the noise) is flagged. */
const FLAG_ABOVE = 1.25;

/** One measure of a growth row on one contender, at each size. */
interface Series {
  workload: string;
  title: string;
  /** What the variants of one size differ in ("after open · heap"), or "". */
  measure: string;
  unit: Unit;
  contender: string;
  bySize: Map<number, Summary>;
}

/** A step from one size to the next: the factor, and whether it is past linear. */
interface Step {
  factor: number;
  /** The factor linear growth gives: 10× for times, 1× for figures per item. */
  linear: number;
  flagged: boolean;
}

function perItemUnit(unit: Unit): boolean {
  return SIZE_UNITS.includes(unit);
}

/** The size of each variant of a growth row, from the workload's own variants. */
function sizeOf(line: Line, quick: boolean): number | undefined {
  const workload = WORKLOADS.find((w) => w.id === line.workload);
  return workload?.variants(quick).find((v) => v.label === line.variant)?.items;
}

function seriesOf(lines: readonly Line[], quick: boolean): Series[] {
  const series = new Map<string, Series>();
  for (const line of lines.filter((l) => l.family === "growth")) {
    const items = sizeOf(line, quick);
    if (items === undefined) continue;
    const measure = line.variant.split(" · ").slice(1).join(" · ");
    for (const [contender, cell] of line.cells) {
      if (!cell.summary) continue;
      const key = `${line.workload}|${measure}|${contender}`;
      let entry = series.get(key);
      if (!entry) {
        entry = {
          workload: line.workload,
          title: line.title,
          measure,
          unit: line.unit,
          contender,
          bySize: new Map(),
        };
        series.set(key, entry);
      }
      entry.bySize.set(items, cell.summary);
    }
  }
  return [...series.values()];
}

function step(series: Series, from: number, to: number): Step | undefined {
  const small = series.bySize.get(from);
  const large = series.bySize.get(to);
  if (!small || !large) return undefined;
  const comparison = compare(large, small, "lower");
  const linear = perItemUnit(series.unit) ? 1 : to / from;
  const excess = comparison.ratio / linear;
  const beyondNoise = Math.log(excess) > Math.log(1 + comparison.noise);
  return { factor: comparison.ratio, linear, flagged: excess > FLAG_ABOVE && beyondNoise };
}

/** 8,388,608 → "8.4M", 41,000 → "41k". */
function roughCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  return n >= 1e3 ? `${Math.round(n / 1e3)}k` : String(n);
}

function stepText(s: Step | undefined): string {
  if (!s) return "—";
  const text = `${num(s.factor)}×`;
  return s.flagged ? `⚠ **${text}**` : text;
}

function runtimeTable(rt: RuntimeLines, quick: boolean): { lines: string[]; flags: string[] } {
  const all = seriesOf(rt.lines, quick);
  const sizes = [...new Set(all.flatMap((s) => [...s.bySize.keys()]))].sort((a, b) => a - b);
  if (all.length === 0 || sizes.length < 2) return { lines: [], flags: [] };
  const steps = sizes.slice(1).map((to, i) => [sizes[i], to] as const);
  const lines = [
    `### ${rt.title}`,
    "",
    `| Row | Contender | ${sizes.map((n) => countLabel(n)).join(" | ")} | ${
      steps.map(([a, b]) => `${countLabel(a)} → ${countLabel(b)}`).join(" | ")
    } |`,
    `| --- | --- | ${sizes.map(() => "---").join(" | ")} | ${steps.map(() => "---").join(" | ")} |`,
  ];
  const flags: string[] = [];
  for (const series of all) {
    const name = `${series.workload.split(".")[0]} ${series.title}${
      series.measure ? ` · ${series.measure}` : ""
    } (${series.unit})`;
    const who = contenderInfo(series.contender).short;
    const figures = sizes.map((n) => {
      const summary = series.bySize.get(n);
      return summary ? num(summary.median) : "—";
    });
    const made = steps.map(([a, b]) => step(series, a, b));
    made.forEach((s, i) => {
      if (!s?.flagged) return;
      const [a, b] = steps[i];
      flags.push(
        `${rt.title}, ${name}, ${who}, ${countLabel(a)} → ${countLabel(b)}: ${num(s.factor)}× ` +
          `where linear growth is ${num(s.linear)}×`,
      );
    });
    lines.push(`| ${name} | ${who} | ${figures.join(" | ")} | ${made.map(stepText).join(" | ")} |`);
  }
  lines.push("");
  return { lines, flags };
}

/**
 * How many items one process holds before V8's heap limit, from Cairn's heap per item once every
 * value is read, at the largest size measured.
 */
function oneProcessText(rt: RuntimeLines, envelope: Envelope, quick: boolean): string | undefined {
  const limit = envelope.runtimes[rt.runtime]?.info?.heapLimit;
  const heap = seriesOf(rt.lines, quick).find((s) =>
    s.contender === "cairn" && s.measure.includes("every value read") && s.measure.endsWith("heap")
  );
  const rss = seriesOf(rt.lines, quick).find((s) =>
    s.contender === "cairn" && s.measure.includes("every value read") && s.measure.endsWith("RSS")
  );
  if (!limit || !heap) return undefined;
  const largest = Math.max(...heap.bySize.keys());
  const perItem = heap.bySize.get(largest)!.median;
  const rssPerItem = rss?.bySize.get(largest)?.median;
  return `${rt.title}: V8's heap limit in a process started with default flags is ` +
    `${num(limit / 2 ** 30)} GiB; at ${num(perItem)} B of heap per item (${
      countLabel(largest)
    } items, every value read) one process holds about ${
      roughCount(Math.floor(limit / perItem))
    } items` +
    (rssPerItem
      ? `, and its RSS at ${num(rssPerItem)} B per item is then about ${
        num((Math.floor(limit / perItem) * rssPerItem) / 2 ** 30)
      } GiB`
      : "") +
    ".";
}

export function growthSection(envelope: Envelope, runtimes: readonly RuntimeLines[]): string[] {
  const quick = envelope.settings.quick;
  const tables = runtimes.map((rt) => ({ rt, ...runtimeTable(rt, quick) }))
    .filter((t) => t.lines.length > 0);
  if (tables.length === 0) return [];
  const out = [
    "## How cost grows",
    "",
    "G01–G06 run the side code of W03 (fresh process), M01, D01, W09 (+ close), W10 and W20 at " +
    "three sizes, each ten times the last, on signed Cairn and SQLite (WAL, synchronous=NORMAL), " +
    "in Deno and Node. Medians; then, for each step to ten times the items, the factor the " +
    "figure grew by: linear growth is 10× for a time and 1× for a figure per item (memory, " +
    `bytes). ⚠ marks growth past linear by more than ${
      Math.round((FLAG_ABOVE - 1) * 100)
    } % and beyond the noise. Memory at small sizes is mostly the runtime's fixed cost, spread ` +
    "over few items: per-item figures fall as the size grows.",
    "",
  ];
  const flags: string[] = [];
  for (const table of tables) {
    out.push(...table.lines);
    flags.push(...table.flags);
  }
  out.push(
    flags.length > 0
      ? "Faster than linear:\n\n" + flags.map((f) => `- ${f}`).join("\n")
      : "Nothing measured here grows faster than linearly beyond the noise.",
    "",
  );
  const capacity = tables.map(({ rt }) => oneProcessText(rt, envelope, quick)).filter((t) =>
    t !== undefined
  );
  if (capacity.length > 0) {
    out.push(
      "**Where one process stops being enough.** Cairn holds a repository whole in the " +
        "memory of one process, so the heap a value needs bounds the repository. The heap " +
        "figure counts ArrayBuffer contents too, which V8's limit does not, so the bound is " +
        "conservative; `--max-old-space-size` raises the limit as far as the machine's memory " +
        "allows.",
      "",
      ...capacity.map((t) => `- ${t}`),
      "",
    );
  }
  return out;
}
