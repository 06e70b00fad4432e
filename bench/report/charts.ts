/**
 * Which charts the docs and the bench page draw, from table lines. Per runtime: a summary (the
 * geometric mean of each family's rows against SQLite, a bar per Cairn contender) and one small
 * chart per family (a bar per row and Cairn contender, against the family's first baseline:
 * SQLite, or Yjs for text). Across runtimes: an overview for one contender, against SQLite.
 * Rows that compare different work by design stay out, named under the chart, so a cached
 * result a million times faster than a query does not set every chart's scale.
 */
import { contenderInfo } from "../contenders/list.ts";
import { num } from "../lib/format.ts";
import type { Envelope } from "../lib/envelope.ts";
import type { RuntimeName } from "../lib/types.ts";
import { comparisonText, summarizeRatios, summaryText, timeRatio } from "./ratio.ts";
import { type Bar, type BarGroup, svgChart } from "./svg_chart.ts";
import {
  byFamily,
  charted,
  familyTitle,
  type Line,
  type LineFamily,
  RUNTIME_TITLE,
  shortId,
  tableLines,
  versusSqlite,
} from "./view.ts";

/** One runtime's lines with what the charts say about them. */
export interface RuntimeLines {
  runtime: RuntimeName;
  /** "Deno", "Chromium". */
  title: string;
  /** The SQLite contender Cairn is compared with. */
  baseline: string;
  lines: readonly Line[];
}

/** A runtime's lines, if the envelope has its results. */
export function runtimeLinesOf(envelope: Envelope, runtime: RuntimeName): RuntimeLines | undefined {
  const result = envelope.runtimes[runtime];
  if (!result?.info) return undefined;
  return {
    runtime,
    title: RUNTIME_TITLE[runtime],
    baseline: result.info.baseline,
    lines: tableLines(result),
  };
}

const DIRECTION = "Cairn's time relative to SQLite's: 2× = twice as long, 1/2 = half as long " +
  "(log scale).";

/** The direction of a family chart against `baseline`, whose rows may be times or sizes. */
function direction(baseline: string): string {
  if (contenderInfo(baseline).family === "sqlite") return DIRECTION;
  const name = contenderInfo(baseline).short;
  return `Cairn's figure relative to ${name}'s, in each row's unit (time, memory or bytes): ` +
    "2× = twice as long or as big, 1/2 = half (log scale).";
}
const MARKS = "Green: faster, red: slower, grey: a tie (within the noise).";
const TEXT_MARKS =
  "Green: faster or smaller, red: slower or larger, grey: a tie (within the noise).";

function versus(baseline: string): string {
  return `Cairn vs ${contenderInfo(baseline).label}`;
}

function rowBar(line: Line, contender: string): Bar {
  const label = contenderInfo(contender).short;
  const c = line.ratios.get(contender);
  if (!c) {
    return { label, text: line.cells.get(contender)?.missing?.mark ?? "—", key: contender };
  }
  const baseline = line.against.get(contender) ?? line.baselines[0];
  const cairn = line.cells.get(contender)!.summary!.median;
  const other = line.cells.get(baseline)!.summary!.median;
  return {
    label,
    ratio: timeRatio(c),
    verdict: c.verdict,
    text: comparisonText(c, line.unit),
    tooltip: `${contenderInfo(contender).label}: ${num(cairn)} ${line.unit} against ${
      num(other)
    } ${line.unit} for ${contenderInfo(baseline).label} (medians); noise ±${
      (c.noise * 100).toFixed(0)
    } %`,
    key: contender,
  };
}

/**
 * The rows among `lines` that charts leave out, with what they compare: "W13, W15 (Cairn's
 * cached live result against …); W17 (…)"; empty when there are none.
 */
export function leftOutText(lines: readonly Line[]): string {
  const byReason = new Map<string, Set<string>>();
  for (const line of lines) {
    if (!line.differentWork || line.ratios.size === 0) continue;
    const ids = byReason.get(line.differentWork) ?? new Set();
    byReason.set(line.differentWork, ids.add(shortId(line.workload)));
  }
  return [...byReason].map(([reason, ids]) => `${[...ids].join(", ")} (${reason})`).join("; ");
}

function leftOut(lines: readonly Line[]): string[] {
  const text = leftOutText(lines);
  return text ? [`Left out: ${text}; see the table.`] : [];
}

export function familyChart(
  rt: RuntimeLines,
  family: LineFamily,
  contenders: readonly string[],
): string | undefined {
  const lines = rt.lines.filter((l) => l.family === family);
  const shown = lines.filter(charted);
  // A bar for each given contender these rows ran on (the text rows run on two of four).
  const bars = contenders.filter((c) => lines.some((l) => l.cells.has(c)));
  if (shown.length === 0 || bars.length === 0) return undefined;
  const baseline = shown[0].baselines[0];
  const mixedUnits = contenderInfo(baseline).family !== "sqlite"; // time, memory and bytes
  return svgChart({
    title: `${rt.title} · ${familyTitle(family)}: ${versus(baseline)}`,
    subtitle: [direction(baseline), mixedUnits ? TEXT_MARKS : MARKS],
    sides: mixedUnits ? ["less time or smaller", "more time or larger"] : undefined,
    groups: shown.map((line) => ({
      label: `${shortId(line.workload)} ${line.title}`,
      detail: line.variant,
      bars: bars.map((c) => rowBar(line, c)),
    })),
    footer: leftOut(lines),
  });
}

/** Lines a summary of Cairn against SQLite counts. */
export function summarized(line: Line): boolean {
  return charted(line) && versusSqlite(line);
}

function summaryBar(lines: readonly Line[], contender: string, label: string, key: string): Bar {
  const summary = summarizeRatios(
    lines.filter(summarized).flatMap((l) => l.ratios.get(contender) ?? []),
  );
  if (!summary) return { label, text: "no ratio", key };
  return {
    label,
    ratio: summary.ratio,
    verdict: summary.verdict,
    text: summaryText(summary),
    tooltip: `${label}: geometric mean of ${
      summary.counts.faster + summary.counts.slower + summary.counts.tie
    } rows`,
    key,
  };
}

const SUMMARY_NOTE = "Each bar: the geometric mean of the family's rows; then how many rows " +
  "were faster, slower or a tie.";

export function summaryChart(
  rt: RuntimeLines,
  contenders: readonly string[],
): string | undefined {
  const groups: BarGroup[] = byFamily(rt.lines.filter(summarized)).map(({ family, lines }) => ({
    label: familyTitle(family),
    detail: rowCount(lines),
    bars: contenders.map((c) => summaryBar(lines, c, contenderInfo(c).short, c)),
  }));
  if (groups.length === 0 || contenders.length === 0) return undefined;
  return svgChart({
    title: `${rt.title}: ${versus(rt.baseline)}, by family`,
    subtitle: [DIRECTION, SUMMARY_NOTE],
    groups,
    footer: leftOut(rt.lines),
  });
}

/** Every runtime's family summaries for one Cairn contender, a bar per runtime. */
export function overviewChart(
  runtimes: readonly RuntimeLines[],
  contender: string,
): string | undefined {
  const families = byFamily(runtimes.flatMap((rt) => rt.lines.filter(summarized)));
  const groups: BarGroup[] = families.map(({ family }) => ({
    label: familyTitle(family),
    bars: runtimes.map((rt) =>
      summaryBar(
        rt.lines.filter((l) => l.family === family),
        contender,
        `${rt.title}`,
        rt.runtime,
      )
    ),
  }));
  if (groups.length === 0) return undefined;
  return svgChart({
    title: `${contenderInfo(contender).label} vs SQLite, by family and runtime`,
    subtitle: [
      DIRECTION,
      SUMMARY_NOTE,
      `Baselines: ${
        runtimes.map((rt) => `${rt.title} ${contenderInfo(rt.baseline).short}`).join(", ")
      }.`,
    ],
    groups,
    footer: leftOut(runtimes.flatMap((rt) => rt.lines)),
  });
}

function rowCount(lines: readonly Line[]): string {
  return lines.length === 1 ? "1 row" : `${lines.length} rows`;
}
