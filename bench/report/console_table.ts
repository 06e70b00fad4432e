/** The console table of one runtime's results, plus its latency table and footnotes. */
import { contenderInfo } from "../contenders/list.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import { belowStep, num } from "../lib/format.ts";
import type { Feature, RuntimeName } from "../lib/types.ts";
import { type Line, missingMark, tableLines, verdictText } from "./view.ts";

function pad(text: string, width: number, right = false): string {
  const cut = text.length > width ? `${text.slice(0, width - 1)}…` : text;
  return right ? cut.padStart(width) : cut.padEnd(width);
}

function cellText(line: Line, contender: string): string {
  const cell = line.cells.get(contender);
  if (!cell) return "";
  if (cell.summary) return num(cell.summary.median);
  return missingMark(cell.row);
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
    }, WASM ${info.sqlite.wasm ?? "—"}) — medians; ratios vs ${info.baseline}`,
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
        return pad(ratio ? verdictText(ratio) : "", 20, true);
      }),
    ].join(" "));
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
  out.push("", ...footnotes(result));
  return out.join("\n");
}

function footnotes(result: RuntimeResult): string[] {
  const notes = new Set<string>();
  const errors: string[] = [];
  for (const row of result.rows) {
    if (row.note) notes.add(row.note);
    if (row.status === "not-available") notes.add(`"n/a yet #N": ${row.reason}`);
    if (row.status === "not-applicable") {
      notes.add(`"n/a" ${contenderInfo(row.contender).short}: ${row.reason}`);
    }
    if (row.status === "error") {
      errors.push(`ERROR ${row.workload} ${row.variant} ${row.contender}: ${row.reason}`);
    }
  }
  const features = result.info?.features;
  const why = result.info?.featureNotes ?? {};
  const featureLine = features
    ? `features detected: ${
      Object.entries(features).map(([f, on]) =>
        `${f} ${on ? "yes" : `no${why[f as Feature] ? ` (${why[f as Feature]})` : ""}`}`
      ).join(", ")
    }`
    : "";
  return [featureLine, ...[...notes].map((n) => `· ${n}`), ...errors].filter(Boolean);
}
