/**
 * One table of lines as header and cells of text: docs/benchmarks.md writes it as Markdown, the
 * bench page as HTML, so both say the same thing in the same words.
 */
import { contenderInfo } from "../contenders/list.ts";
import { num } from "../lib/format.ts";
import { comparisonText } from "./ratio.ts";
import type { Line } from "./view.ts";

export interface TextTable {
  header: string[];
  rows: string[][];
}

function cellText(line: Line, contender: string): string {
  const c = line.cells.get(contender);
  if (!c) return "";
  if (c.summary) return `${num(c.summary.median)} ±${(c.summary.robustCv * 100).toFixed(0)}%`;
  return c.missing?.mark ?? "";
}

/** The workload, and what the ratio compares when the two sides do different work. */
function workloadText(line: Line): string {
  const label = `${line.workload} ${line.title}`;
  return line.differentWork && line.ratios.size > 0
    ? `${label} (compares ${line.differentWork})`
    : label;
}

/**
 * Medians (± robust CV) of `contenders`, then a ratio column per Cairn contender among them
 * that has a ratio in these lines. `base`: the baseline's short name, for the ratio headers.
 */
export function textTable(
  lines: readonly Line[],
  contenders: readonly string[],
  base: string,
): TextTable {
  const cairns = contenders.filter((c) =>
    contenderInfo(c).family === "cairn" && lines.some((l) => l.ratios.has(c))
  );
  return {
    header: [
      "Workload",
      "Size",
      "Unit",
      ...contenders.map((c) => contenderInfo(c).short),
      ...cairns.map((c) => `${contenderInfo(c).short} vs ${base}`),
    ],
    rows: lines.map((line) => [
      workloadText(line),
      line.variant,
      line.unit,
      ...contenders.map((c) => cellText(line, c)),
      ...cairns.map((c) => {
        const r = line.ratios.get(c);
        return r ? comparisonText(r) : "";
      }),
    ]),
  };
}
