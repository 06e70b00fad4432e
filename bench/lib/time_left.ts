/**
 * How long a run has left, for the terminal's progress line and the bench page. Rows differ by
 * three orders of magnitude (a count loop against writing 100k items), so "mean time per row so
 * far" misleads early on; where an earlier run measured the same cell, its time is the estimate,
 * scaled by how this run compares with it so far. Cells no earlier run has fall back to this
 * run's mean time per cell.
 */
import type { Envelope } from "./envelope.ts";
import type { Row, RuntimeName } from "./types.ts";

export function cellKey(
  runtime: RuntimeName,
  row: Pick<Row, "workload" | "variant" | "contender">,
): string {
  return `${runtime}|${row.workload}|${row.variant}|${row.contender}`;
}

/** Each cell's time in an earlier run (ms). */
export function earlierTimes(envelope: Envelope): Map<string, number> {
  const times = new Map<string, number>();
  for (const [runtime, result] of Object.entries(envelope.runtimes)) {
    for (const row of result?.rows ?? []) {
      times.set(cellKey(runtime as RuntimeName, row), row.ms);
    }
  }
  return times;
}

export class TimeLeft {
  readonly #plan: readonly string[];
  readonly #earlier: ReadonlyMap<string, number>;
  /** How much earlier-run time the scale needs before it moves far from 1. */
  readonly #inertiaMs: number;
  readonly #done = new Set<string>();
  /** The cell running now, and when it started (performance.now()). */
  #current?: { key: string; started: number };
  #doneMs = 0;
  #doneWithEarlierMs = 0;
  #earlierOfDoneMs = 0;

  /** `plan`: every cell's key in run order; `earlier`: cell key → ms in an earlier run. */
  constructor(plan: readonly string[], earlier: ReadonlyMap<string, number> = new Map()) {
    this.#plan = plan;
    this.#earlier = earlier;
    const earlierTotal = plan.reduce((sum, key) => sum + (earlier.get(key) ?? 0), 0);
    this.#inertiaMs = Math.min(30_000, Math.max(2_000, earlierTotal * 0.05));
  }

  get total(): number {
    return this.#plan.length;
  }

  get done(): number {
    return this.#done.size;
  }

  /** The cell `key` is running: its first report starts its clock. */
  running(key: string, now = performance.now()): void {
    if (this.#current?.key !== key) this.#current = { key, started: now };
  }

  /**
   * The cell `key` finished (its row arrived). Its time counts from its first report, or is
   * `reportedMs` (the row's own time) when it sent none.
   */
  finished(key: string, reportedMs: number, now = performance.now()): void {
    const ms = this.#current?.key === key ? now - this.#current.started : reportedMs;
    if (this.#current?.key === key) this.#current = undefined;
    if (this.#done.has(key)) return;
    this.#done.add(key);
    this.#doneMs += ms;
    const earlier = this.#earlier.get(key);
    if (earlier !== undefined) {
      this.#doneWithEarlierMs += ms;
      this.#earlierOfDoneMs += earlier;
    }
  }

  /** ms left; undefined while there is nothing to go by (no earlier run, no cell finished). */
  estimate(now = performance.now()): number | undefined {
    const current = this.#current?.key;
    const runningMs = this.#current ? now - this.#current.started : 0;
    const scale = (this.#doneWithEarlierMs + this.#inertiaMs) /
      (this.#earlierOfDoneMs + this.#inertiaMs);
    const mean = this.#done.size > 0 ? this.#doneMs / this.#done.size : undefined;
    let left = 0;
    for (const key of this.#plan) {
      if (this.#done.has(key)) continue;
      const earlier = this.#earlier.get(key);
      const cell = earlier !== undefined ? earlier * scale : mean;
      if (cell === undefined) return undefined;
      left += key === current ? Math.max(0, cell - runningMs) : cell;
    }
    return left;
  }
}

/** "about 4 min 20 s left", or that there is no estimate yet. */
export function timeLeftText(ms: number | undefined): string {
  return ms === undefined ? "estimating the time left" : `about ${durationText(ms)} left`;
}

/** "45 s", "4 min 20 s", "14 min", "1 h 5 min": coarser as the estimate grows. */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 600) {
    const tens = Math.round(s / 10) * 10;
    const rest = tens % 60;
    return rest ? `${Math.floor(tens / 60)} min ${rest} s` : `${tens / 60} min`;
  }
  const min = Math.round(s / 60);
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}
