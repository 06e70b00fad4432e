/**
 * The console table of one runtime's results — one block for the rows against SQLite, one for
 * the text rows against Yjs and Automerge — plus its latency table and footnotes.
 */
import { contenderInfo } from "../contenders/list.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import { belowStep, num } from "../lib/format.ts";
import type { RuntimeName } from "../lib/types.ts";
import { ratioCell, tableColumns } from "./table.ts";
import { type Line, profileSpreadText, runtimeNotes, tableLines, targetText } from "./view.ts";

function pad(text: string, width: number, right = false): string {
  const cut = text.length > width ? `${text.slice(0, width - 1)}…` : text;
  return right ? cut.padStart(width) : cut.padEnd(width);
}

function cellText(line: Line, contender: string): string {
  const cell = line.cells.get(contender);
  if (!cell) return "";
  return cell.summary ? num(cell.summary.median) : cell.missing?.mark ?? "";
}

/** Lines in blocks that share their baselines, in the order the lines come. */
function blocks(lines: readonly Line[]): Line[][] {
  const byBaselines = new Map<string, Line[]>();
  for (const line of lines) {
    const key = line.baselines.join(",");
    byBaselines.set(key, [...(byBaselines.get(key) ?? []), line]);
  }
  return [...byBaselines.values()];
}

export function renderRuntimeTable(runtime: RuntimeName, result: RuntimeResult): string {
  const info = result.info;
  if (!info) return `── ${runtime}: no results (${result.problem ?? "did not start"})`;
  const lines = tableLines(result);
  const out: string[] = [];
  out.push(
    `── ${runtime} ${info.version} (${info.engine}; SQLite native ${
      info.sqlite.native ?? "—"
    }, WASM ${info.sqlite.wasm ?? "—"}) — medians; ratios: Cairn's figure ÷ the other's ` +
      "(2× = twice as long, or as big; 1/2 = half)",
  );
  for (const block of blocks(lines)) {
    const columns = tableColumns(block, info.contenders);
    const label = (line: Line) => `${line.workload} ${line.title} · ${line.variant}`;
    const width = Math.min(96, Math.max(44, ...block.map((l) => label(l).length)));
    out.push("");
    out.push([
      pad("workload", width),
      pad("unit", 6),
      ...columns.contenders.map((c) => pad(contenderInfo(c).short, 12, true)),
      ...columns.ratios.map((r) => pad(r.header, 20, true)),
    ].join(" "));
    for (const line of block) {
      out.push([
        pad(label(line), width),
        pad(line.unit, 6),
        ...columns.contenders.map((c) => pad(cellText(line, c), 12, true)),
        ...columns.ratios.map((r) => pad(ratioCell(line, r), 20, true)),
      ].join(" "));
      if (line.differentWork && line.ratios.size > 0) {
        out.push(`    ↳ compares ${line.differentWork}`);
      }
      const spread = profileSpreadText(line);
      if (spread && line.ratios.size > 0) out.push(`    ↳ ${spread}`);
      if (line.targets.length > 0) {
        out.push(`    ↳ targets: ${line.targets.map(targetText).join("; ")}`);
      }
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
        `${pad(`${line.workload} ${line.title} · ${line.variant}`, 44)} ${
          pad(cell.row.contender, 18)
        } ${[l.p50, l.p99, l.p999].map((v) => pad(belowStep(v, step), 8, true)).join(" ")} ${
          pad(String(l.ops), 8, true)
        }`,
      );
    }
  }
  out.push("", ...runtimeNotes(result, lines).map((n) => `· ${n}`));
  return out.join("\n");
}
