/**
 * An SVG bar chart of one runtime's ratios: for each workload variant, how many times faster
 * (bar to the right) or slower (to the left) each Cairn contender is than the SQLite baseline,
 * on a log scale. Ties are drawn grey.
 */
import { contenderInfo } from "../contenders/list.ts";
import type { Line } from "./view.ts";
import { verdictText } from "./view.ts";

const ROW = 16;
const LABEL = 330;
const PLOT = 420;
const RIGHT = 140;
const COLORS: Record<string, string> = { faster: "#2e7d32", slower: "#c62828", tie: "#9e9e9e" };

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function ratioChart(title: string, lines: Line[], contenders: string[]): string {
  const bars = lines.flatMap((line) =>
    contenders.filter((c) => line.ratios.has(c)).map((c) => ({ line, contender: c }))
  );
  const maxLog = Math.min(
    4,
    Math.max(
      1,
      ...bars.map(({ line, contender }) => {
        return Math.ceil(Math.abs(Math.log10(line.ratios.get(contender)!.speedup)));
      }),
    ),
  );
  const height = 46 + bars.length * ROW + 24;
  const width = LABEL + PLOT + RIGHT;
  const mid = LABEL + PLOT / 2;
  const x = (speedup: number) => {
    const clamped = Math.max(-maxLog, Math.min(maxLog, Math.log10(speedup)));
    return mid + (clamped / maxLog) * (PLOT / 2);
  };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="16" font-size="13" font-weight="bold">${escape(title)}</text>`,
    `<text x="8" y="32" fill="#555">bars right: Cairn faster; left: slower; grey: within the ` +
    `noise (tie). Log scale.</text>`,
  ];
  for (let p = -maxLog; p <= maxLog; p++) {
    const gx = x(10 ** p);
    out.push(
      `<line x1="${gx}" y1="40" x2="${gx}" y2="${height - 20}" stroke="${
        p === 0 ? "#000" : "#e0e0e0"
      }"/>`,
      `<text x="${gx}" y="${height - 6}" text-anchor="middle" fill="#555">${
        p >= 0 ? `${10 ** p}×` : `1/${10 ** -p}`
      }</text>`,
    );
  }
  bars.forEach(({ line, contender }, i) => {
    const y = 44 + i * ROW;
    const c = line.ratios.get(contender)!;
    const end = x(c.speedup);
    const label = `${line.workload} ${line.title} · ${line.variant} · ${
      contenderInfo(contender).short
    }`;
    out.push(
      `<text x="${LABEL - 6}" y="${y + 11}" text-anchor="end">${escape(label)}</text>`,
      `<rect x="${Math.min(mid, end)}" y="${y + 2}" width="${Math.max(1, Math.abs(end - mid))}" ` +
        `height="${ROW - 4}" fill="${COLORS[c.verdict]}"/>`,
      `<text x="${LABEL + PLOT + 6}" y="${y + 11}">${escape(verdictText(c))}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
