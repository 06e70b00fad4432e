/**
 * The one direction every ratio is shown in — tables, charts, the page, the terminal: Cairn's
 * time relative to SQLite's, so 2× always means "takes twice as long". Whether the difference
 * is beyond the noise is a separate mark (faster, slower, tie), never folded into the number:
 * a tie once printed as "tie (0.72×)" read as "needs 0.72 of the time" when it meant the inverse.
 */
import type { Comparison, Verdict } from "../lib/stats.ts";
import { SIZE_UNITS, type Unit } from "../lib/types.ts";

/** The direction in words, for the places that state it. */
export const RATIO_DIRECTION = "Ratios are Cairn's time relative to SQLite's: 2× = Cairn takes " +
  "twice as long, 1/2 = half as long (for ops/s rows, the time per operation).";

/** Cairn's time ÷ SQLite's (for throughput rows, time per operation ÷ time per operation). */
export function timeRatio(c: Comparison): number {
  return 1 / c.speedup;
}

/** 1.39 → "1.39×", 63.2 → "63×", 0.106 → "1/9.4", 0.00041 → "1/2,433". */
export function ratioText(ratio: number): string {
  const factor = ratio >= 1 ? ratio : 1 / ratio;
  const digits = factor >= 10 ? 0 : factor >= 2 ? 1 : 2;
  const text = factor >= 1000 ? Math.round(factor).toLocaleString("en-US") : factor.toFixed(digits);
  return ratio >= 1 ? `${text}×` : `1/${text}`;
}

/** The verdict in the row's terms: "faster"/"slower" for time, "smaller"/"larger" for bytes. */
export function verdictText(verdict: Verdict, unit?: Unit): string {
  if (verdict === "tie" || !unit || !SIZE_UNITS.includes(unit)) return verdict;
  return verdict === "faster" ? "smaller" : "larger";
}

/** "1.39× · tie", "1/9.4 · faster", "3.2× · larger". */
export function comparisonText(c: Comparison, unit?: Unit): string {
  return `${ratioText(timeRatio(c))} · ${verdictText(c.verdict, unit)}`;
}

/** What a set of rows adds up to: their geometric mean and how many went each way. */
export interface RatioSummary {
  ratio: number;
  /** The mean's own mark: beyond 3 % either way, or a tie (a mean has no noise of its own). */
  verdict: Verdict;
  counts: Record<Verdict, number>;
}

/** Smallest mean difference called a difference: the same 3 % floor single rows have. */
const SUMMARY_MIN_DIFFERENCE = 0.03;

export function summarizeRatios(comparisons: readonly Comparison[]): RatioSummary | undefined {
  if (comparisons.length === 0) return undefined;
  const logSum = comparisons.reduce((sum, c) => sum + Math.log(timeRatio(c)), 0);
  const ratio = Math.exp(logSum / comparisons.length);
  const counts: Record<Verdict, number> = { faster: 0, slower: 0, tie: 0 };
  for (const c of comparisons) counts[c.verdict]++;
  const beyond = Math.abs(Math.log(ratio)) > Math.log(1 + SUMMARY_MIN_DIFFERENCE);
  const verdict: Verdict = !beyond ? "tie" : ratio < 1 ? "faster" : "slower";
  return { ratio, verdict, counts };
}

/** "1/3.1 · 4 faster, 1 tie" */
export function summaryText(s: RatioSummary): string {
  const parts = (["faster", "slower", "tie"] as const)
    .filter((v) => s.counts[v] > 0)
    .map((v) => `${s.counts[v]} ${v}`);
  return `${ratioText(s.ratio)} · ${parts.join(", ")}`;
}
