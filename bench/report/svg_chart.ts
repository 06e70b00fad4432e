/**
 * Draws one ratio chart as SVG text (the same text goes into docs/benchmarks/ and into the bench
 * page): groups of horizontal bars on a log scale centred on 1×, left of it Cairn takes less
 * time than SQLite, right of it more. The axis is the same in every chart, so bars compare
 * across charts; a ratio beyond it is drawn to the axis end with an arrow and a break, and its
 * text gives the true value — a clipped bar must not pass for a value at the axis end.
 */
import type { Verdict } from "../lib/stats.ts";

export interface Bar {
  /** Written left of the bar: the series (a contender, a runtime). */
  label: string;
  /** Cairn's time ÷ SQLite's; undefined draws no bar. */
  ratio?: number;
  verdict?: Verdict;
  /** Written right of the plot: "1/9.4 · faster", or why there is no bar. */
  text: string;
  /** Shown on hover. */
  tooltip?: string;
  /** Identifies the bar for the page and its tests (a contender or runtime id). */
  key?: string;
}

export interface BarGroup {
  label: string;
  /** A second label line, e.g. the size the row ran at. */
  detail?: string;
  bars: Bar[];
}

export interface ChartSpec {
  title: string;
  /** Lines under the title. */
  subtitle?: string[];
  groups: BarGroup[];
  /** Lines under the axis, e.g. which rows were left out and why. */
  footer?: string[];
  /** What the two halves mean: "less time" and "more time" unless the rows say otherwise. */
  sides?: [less: string, more: string];
}

/** Decades each side of 1×: 1/1000 … 1000×. */
export const AXIS_DECADES = 3;

const WIDTH = 840;
const GROUP_LABEL_X = 8;
const GROUP_LABEL_WIDTH = 200;
const SERIES_RIGHT = 276;
const PLOT_LEFT = 292;
const PLOT_WIDTH = 360;
const TEXT_X = PLOT_LEFT + PLOT_WIDTH + 14;
const ROW = 15;
const BAR = 10;
const GROUP_GAP = 7;
const LINE = 15;

const FILL: Record<Verdict, string> = { faster: "#2e7d32", slower: "#c62828", tie: "#9e9e9e" };
const INK: Record<Verdict | "none", string> = {
  faster: "#1b5e20",
  slower: "#b71c1c",
  tie: "#555",
  none: "#777",
};

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** Cuts text that would not fit `width` px at 11 px sans-serif (about 6 px a character). */
function fit(text: string, width: number): string {
  const chars = Math.floor(width / 6);
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/** Breaks text into lines that fit the chart's width. */
function wrap(lines: readonly string[]): string[] {
  const chars = Math.floor((WIDTH - 16) / 6);
  return lines.flatMap((text) => {
    const out: string[] = [];
    let line = "";
    for (const word of text.split(" ")) {
      if (line && line.length + 1 + word.length > chars) {
        out.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    return [...out, line];
  });
}

/** Where a ratio falls on the plot, and whether it is beyond the axis (and which way). */
export function barEnd(ratio: number): { x: number; overflow?: "left" | "right" } {
  const mid = PLOT_LEFT + PLOT_WIDTH / 2;
  const log = Math.log10(ratio);
  const clamped = Math.max(-AXIS_DECADES, Math.min(AXIS_DECADES, log));
  const x = mid + (clamped / AXIS_DECADES) * (PLOT_WIDTH / 2);
  if (log > AXIS_DECADES) return { x, overflow: "right" };
  if (log < -AXIS_DECADES) return { x, overflow: "left" };
  return { x };
}

function tickLabel(power: number): string {
  return power >= 0 ? `${10 ** power}×` : `1/${10 ** -power}`;
}

export function svgChart(spec: ChartSpec): string {
  const subtitle = wrap(spec.subtitle ?? []);
  const [less, more] = spec.sides ?? ["less time", "more time"];
  const footer = wrap(spec.footer ?? []);
  const top = 22 + subtitle.length * LINE + 16;
  const groupHeights = spec.groups.map((g) => Math.max(g.bars.length, g.detail ? 2 : 1) * ROW);
  const plotHeight = groupHeights.reduce((sum, h) => sum + h + GROUP_GAP, 0);
  const axisY = top + plotHeight;
  const height = axisY + 18 + footer.length * LINE + 6;
  const mid = PLOT_LEFT + PLOT_WIDTH / 2;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" ` +
    `viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="11" class="ratio-chart">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="17" font-size="13" font-weight="bold">${escape(spec.title)}</text>`,
    ...subtitle.map((line, i) =>
      `<text x="8" y="${22 + (i + 1) * LINE - 2}" fill="#555">${escape(line)}</text>`
    ),
    // Tinted halves say which side is which before any label is read.
    `<rect x="${PLOT_LEFT}" y="${top - 14}" width="${PLOT_WIDTH / 2}" height="${
      plotHeight + 14
    }" fill="#f3f8f3"/>`,
    `<rect x="${mid}" y="${top - 14}" width="${PLOT_WIDTH / 2}" height="${
      plotHeight + 14
    }" fill="#fbf3f3"/>`,
    `<text x="${PLOT_LEFT + 3}" y="${top - 4}" fill="#1b5e20">← ${escape(less)}</text>`,
    `<text x="${PLOT_LEFT + PLOT_WIDTH - 3}" y="${top - 4}" fill="#b71c1c" ` +
    `text-anchor="end">${escape(more)} →</text>`,
  ];
  for (let p = -AXIS_DECADES; p <= AXIS_DECADES; p++) {
    const x = barEnd(10 ** p).x;
    out.push(
      `<line x1="${x}" y1="${top}" x2="${x}" y2="${axisY}" stroke="${p === 0 ? "#000" : "#ddd"}"/>`,
      `<text x="${x}" y="${axisY + 12}" text-anchor="middle" fill="#555">${
        escape(tickLabel(p))
      }</text>`,
    );
  }
  let y = top;
  spec.groups.forEach((group, g) => {
    if (g > 0) {
      out.push(
        `<line x1="8" y1="${y - GROUP_GAP / 2}" x2="${WIDTH - 8}" y2="${
          y - GROUP_GAP / 2
        }" stroke="#eee"/>`,
      );
    }
    out.push(
      `<text x="${GROUP_LABEL_X}" y="${y + 11}" font-weight="bold">${
        escape(fit(group.label, GROUP_LABEL_WIDTH))
      }<title>${escape(group.label)}</title></text>`,
    );
    if (group.detail) {
      out.push(
        `<text x="${GROUP_LABEL_X}" y="${y + ROW + 11}" fill="#555">${
          escape(fit(group.detail, GROUP_LABEL_WIDTH))
        }</text>`,
      );
    }
    group.bars.forEach((bar, i) => out.push(...drawBar(bar, y + i * ROW)));
    y += groupHeights[g] + GROUP_GAP;
  });
  footer.forEach((line, i) => {
    out.push(
      `<text x="8" y="${axisY + 18 + (i + 1) * LINE - 3}" fill="#555">${escape(line)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

function drawBar(bar: Bar, y: number): string[] {
  const mid = PLOT_LEFT + PLOT_WIDTH / 2;
  const key = bar.key ? ` data-key="${escape(bar.key)}"` : "";
  const out = [
    `<text x="${SERIES_RIGHT}" y="${y + 11}" text-anchor="end" fill="#333">${
      escape(fit(bar.label, SERIES_RIGHT - GROUP_LABEL_X - GROUP_LABEL_WIDTH))
    }</text>`,
  ];
  const ink = INK[bar.verdict ?? "none"];
  const tooltip = bar.tooltip ? `<title>${escape(bar.tooltip)}</title>` : "";
  if (bar.ratio === undefined || !(bar.ratio > 0) || !bar.verdict) {
    out.push(
      `<g class="bar"${key}><text x="${TEXT_X}" y="${y + 11}" fill="${ink}">${
        escape(bar.text)
      }</text>${tooltip}</g>`,
    );
    return out;
  }
  const { x, overflow } = barEnd(bar.ratio);
  const top = y + (ROW - BAR) / 2;
  const left = Math.min(mid, x);
  const width = Math.max(1, Math.abs(x - mid));
  const parts = [
    `<rect x="${left}" y="${top}" width="${width}" height="${BAR}" fill="${FILL[bar.verdict]}"/>`,
  ];
  if (overflow) {
    // An arrow past the axis end and a white break across the bar: "longer than drawn".
    const dir = overflow === "right" ? 1 : -1;
    const tip = x + dir * 9;
    const cut = x - dir * 12;
    parts.push(
      `<polygon points="${x},${top - 2} ${tip},${top + BAR / 2} ${x},${top + BAR + 2}" ` +
        `fill="${FILL[bar.verdict]}"/>`,
      `<line x1="${cut - 3}" y1="${top + BAR + 1}" x2="${cut + 1}" y2="${top - 1}" ` +
        `stroke="#fff" stroke-width="2"/>`,
      `<line x1="${cut + 1}" y1="${top + BAR + 1}" x2="${cut + 5}" y2="${top - 1}" ` +
        `stroke="#fff" stroke-width="2"/>`,
    );
  }
  const overflowText = overflow ? " (beyond the axis)" : "";
  out.push(
    `<g class="bar"${key} data-ratio="${bar.ratio}"${
      overflow ? ` data-overflow="${overflow}"` : ""
    }>${parts.join("")}<text x="${TEXT_X}" y="${y + 11}" fill="${ink}"${
      overflow ? ' font-weight="bold"' : ""
    }>${escape(bar.text)}</text>${
      tooltip || `<title>${escape(bar.text + overflowText)}</title>`
    }</g>`,
  );
  return out;
}
