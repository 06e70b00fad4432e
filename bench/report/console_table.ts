/** The console table of one runtime's results, plus its latency table and footnotes. */
import { contenderInfo } from "../contenders/list.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import { belowStep, num } from "../lib/format.ts";
import type { RuntimeName } from "../lib/types.ts";
import { comparisonText } from "./ratio.ts";
import { type Line, runtimeNotes, tableLines } from "./view.ts";

function pad(text: string, width: number, right = false): string {
  const cut = text.length > width ? `${text.slice(0, width - 1)}…` : text;
  return right ? cut.padStart(width) : cut.padEnd(width);
}

function cellText(line: Line, contender: string): string {
  const cell = line.cells.get(contender);
  if (!cell) return "";
  return cell.summary ? num(cell.summary.median) : cell.missing?.mark ?? "";
}

export function renderRuntimeTable(runtime: RuntimeName, result: RuntimeResult): string {
  const info = result.info;
  if (!info) return `── ${runtime}: no results (${result.problem ?? "did not start"})`;
  const lines = tableLines(result);
  const contenders = info.contenders;
  const cairns = contenders.filter((c) => contenderInfo(c).family === "cairn");
  const ratioCols = cairns.filter((c) => lines.some((l) => l.ratios.has(c)));
  const baseShort = contenderInfo(info.baseline).short;
  const out: string[] = [];
  out.push(
    `── ${runtime} ${info.version} (${info.engine}; SQLite native ${
      info.sqlite.native ?? "—"
    }, WASM ${info.sqlite.wasm ?? "—"}) — medians; ratios: Cairn's time ÷ ${baseShort}'s ` +
      "(2× = twice as long, 1/2 = half)",
  );
  const head = [
    pad("workload", 44),
    pad("unit", 6),
    ...contenders.map((c) => pad(contenderInfo(c).short, 10, true)),
    ...ratioCols.map((c) => pad(`${contenderInfo(c).short} vs ${baseShort}`, 20, true)),
  ];
  out.push(head.join(" "));
  for (const line of lines) {
    out.push([
      pad(`${line.workload} ${line.title} · ${line.variant}`, 44),
      pad(line.unit, 6),
      ...contenders.map((c) => pad(cellText(line, c), 10, true)),
      ...ratioCols.map((c) => {
        const ratio = line.ratios.get(c);
        return pad(ratio ? comparisonText(ratio) : "", 20, true);
      }),
    ].join(" "));
    if (line.differentWork && line.ratios.size > 0) {
      out.push(`    ↳ compares ${line.differentWork}`);
    }
  }
  const latency = lines.flatMap((line) =>
    [...line.cells.values()].filter((c) => c.row.latency).map((c) => ({ line, cell: c }))
  );
  if (latency.length > 0) {
    const step = info.timerResolutionUs;
    out.push("", `latency per operation (µs; timer step ${num(step)} µs)`);
    out.push(`${pad("workload", 44)} ${pad("contender", 18)}      p50      p99    p99.9      ops`);
    for (const { line, cell } of latency) {
      const l = cell.row.latency!;
      out.push(
        `${pad(`${line.workload} ${line.title}`, 44)} ${pad(cell.row.contender, 18)} ${
          [l.p50, l.p99, l.p999].map((v) => pad(belowStep(v, step), 8, true)).join(" ")
        } ${pad(String(l.ops), 8, true)}`,
      );
    }
  }
  out.push("", ...runtimeNotes(result, lines).map((n) => `· ${n}`));
  return out.join("\n");
}
