/**
 * One table of lines as header and cells of text: docs/benchmarks.md writes it as Markdown, the
 * bench page as HTML, so both say the same thing in the same words.
 */
import { contenderInfo } from "../contenders/list.ts";
import { num } from "../lib/format.ts";
import { comparisonText } from "./ratio.ts";
import { type Line, profileSpreadText, targetText } from "./view.ts";

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

/**
 * The workload, what the ratio compares when the two sides do different work, and a mark when
 * SQLite profiles doing the same reads disagree.
 */
function workloadText(line: Line): string {
  const label = `${line.workload} ${line.title}`;
  const notes = [
    ...(line.differentWork && line.ratios.size > 0 ? [`compares ${line.differentWork}`] : []),
    ...(line.ratios.size > 0 && line.profileSpread !== undefined ? [profileSpreadText(line)!] : []),
  ];
  return notes.length > 0 ? `${label} (${notes.join("; ")})` : label;
}

/** A ratio column: a Cairn contender against one baseline. */
export interface RatioColumn {
  contender: string;
  baseline: string;
  header: string;
}

/**
 * The contenders among `contenders` that have a cell in these lines, and a ratio column for each
 * Cairn contender and baseline that has a ratio in them, baseline by baseline.
 */
export function tableColumns(
  lines: readonly Line[],
  contenders: readonly string[],
): { contenders: string[]; ratios: RatioColumn[] } {
  const shown = contenders.filter((c) => lines.some((l) => l.cells.has(c)));
  const baselines = [...new Set(lines.flatMap((l) => l.baselines))];
  const ratios = baselines.flatMap((baseline) =>
    shown.filter((c) => lines.some((l) => l.versus.get(baseline)?.has(c))).map((contender) => ({
      contender,
      baseline,
      header: `${contenderInfo(contender).short} vs ${contenderInfo(baseline).short}`,
    }))
  );
  return { contenders: shown, ratios };
}

export function ratioCell(line: Line, column: RatioColumn): string {
  const r = line.versus.get(column.baseline)?.get(column.contender);
  return r ? comparisonText(r, line.unit) : "";
}

/**
 * Medians (± robust CV) of the contenders that have a cell here, then a ratio column per Cairn
 * contender and baseline, then the targets where the lines have any.
 */
export function textTable(lines: readonly Line[], contenders: readonly string[]): TextTable {
  const columns = tableColumns(lines, contenders);
  const targets = lines.some((l) => l.targets.length > 0);
  return {
    header: [
      "Workload",
      "Size",
      "Unit",
      ...columns.contenders.map((c) => contenderInfo(c).short),
      ...columns.ratios.map((r) => r.header),
      ...(targets ? ["Targets"] : []),
    ],
    rows: lines.map((line) => [
      workloadText(line),
      line.variant,
      line.unit,
      ...columns.contenders.map((c) => cellText(line, c)),
      ...columns.ratios.map((r) => ratioCell(line, r)),
      ...(targets ? [line.targets.map(targetText).join("; ")] : []),
    ]),
  };
}
