/**
 * `--baseline`: compares this run's medians with an earlier envelope, row by row. A row
 * regresses when it is slower by more than the threshold and the difference exceeds the noise
 * (ties are ignored).
 */
import { contenderInfo } from "../contenders/list.ts";
import { type Envelope, findRow } from "../lib/envelope.ts";
import { compare, summarize } from "../lib/stats.ts";
import { RUNTIMES } from "../lib/types.ts";

export interface BaselineReport {
  lines: string[];
  regressions: number;
  compared: number;
}

export function compareWithBaseline(
  current: Envelope,
  previous: Envelope,
  threshold: number,
): BaselineReport {
  const lines: string[] = [];
  let regressions = 0;
  let compared = 0;
  if (current.settings.quick !== previous.settings.quick) {
    lines.push("note: one run is --quick and the other is not; sizes differ, so few rows match");
  }
  if (current.machine.fingerprint !== previous.machine.fingerprint) {
    lines.push(`note: the baseline comes from another machine (${previous.machine.cpu})`);
  }
  for (const runtime of RUNTIMES) {
    const now = current.runtimes[runtime];
    for (const row of now?.rows ?? []) {
      const before = findRow(previous.runtimes[runtime], row.workload, row.variant, row.contender);
      if (row.status !== "ok" || before?.status !== "ok") continue;
      if (row.samples.length === 0 || before.samples.length === 0) continue;
      const [a, b] = [summarize(row.samples), summarize(before.samples)];
      if (!(a.median > 0 && b.median > 0)) continue; // e.g. a memory delta of 0: no ratio
      compared++;
      const c = compare(a, b, row.better);
      const change = 1 / c.speedup - 1; // > 0: worse than before
      if (c.verdict === "tie" || Math.abs(change) <= threshold) continue;
      const label = `${runtime} ${row.workload} ${row.variant} ${
        contenderInfo(row.contender).short
      }`;
      const pct = `${change > 0 ? "+" : ""}${(change * 100).toFixed(0)} %`;
      if (c.verdict === "slower") {
        regressions++;
        lines.push(`REGRESSION ${label}: ${pct} (threshold ${(threshold * 100).toFixed(0)} %)`);
      } else lines.push(`improved   ${label}: ${pct}`);
    }
  }
  return { lines, regressions, compared };
}
