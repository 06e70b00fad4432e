/**
 * Turns one runtime's rows into lines of a table: every workload variant with each contender's
 * cell and each Cairn contender's comparison with the runtime's SQLite baseline. The console
 * table, the page and the report all render from this.
 */
import { contenderInfo } from "../contenders/list.ts";
import { WORKLOADS } from "../workloads/index.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import { compare, type Comparison, summarize, type Summary } from "../lib/stats.ts";
import type { Row } from "../lib/types.ts";

export interface Cell {
  row: Row;
  summary?: Summary;
}

export interface Line {
  workload: string;
  title: string;
  variant: string;
  unit: Row["unit"];
  better: Row["better"];
  comparable: boolean;
  cells: Map<string, Cell>;
  /** Cairn contender id → its comparison with the baseline (when both ran). */
  ratios: Map<string, Comparison>;
}

export function tableLines(result: RuntimeResult): Line[] {
  const baseline = result.info?.baseline;
  const lines = new Map<string, Line>();
  for (const row of result.rows) {
    const id = `${row.workload}|${row.variant}`;
    let line = lines.get(id);
    if (!line) {
      const workload = WORKLOADS.find((w) => w.id === row.workload);
      line = {
        workload: row.workload,
        title: workload?.title ?? row.workload,
        variant: row.variant,
        unit: row.unit,
        better: row.better,
        comparable: workload?.comparable !== false,
        cells: new Map(),
        ratios: new Map(),
      };
      lines.set(id, line);
    }
    line.cells.set(row.contender, {
      row,
      summary: row.status === "ok" && row.samples.length > 0 ? summarize(row.samples) : undefined,
    });
  }
  for (const line of lines.values()) {
    const base = baseline ? line.cells.get(baseline)?.summary : undefined;
    if (!base || !line.comparable) continue;
    for (const [contender, cell] of line.cells) {
      if (cell.summary && contenderInfo(contender).family === "cairn") {
        line.ratios.set(contender, compare(cell.summary, base, line.better));
      }
    }
  }
  return [...lines.values()];
}

/** A short mark for a cell that has no figure. */
export function missingMark(row: Row): string {
  switch (row.status) {
    case "not-available":
      return `n/a yet ${(row.reason ?? "").match(/#\d/g)?.join(",") ?? ""}`.trim();
    case "not-applicable":
      return "n/a";
    case "error":
      return "ERROR";
    default:
      return "";
  }
}

export function verdictText(c: Comparison): string {
  if (c.verdict === "tie") return `tie (${c.speedup.toFixed(2)}×)`;
  const factor = c.speedup >= 1 ? c.speedup : 1 / c.speedup;
  const digits = factor >= 10 ? 0 : factor >= 2 ? 1 : 2;
  const text = factor >= 1000 ? Math.round(factor).toLocaleString("en-US") : factor.toFixed(digits);
  return `${text}× ${c.verdict}`;
}
