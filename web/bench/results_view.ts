/**
 * Draws what the page shows — the run in progress, loaded envelopes — side by side: per runtime
 * the same summary and family charts as docs/benchmarks.md, then the numbers, limited to the
 * picked runtimes, contenders and workloads. Pure HTML text, so it can be redrawn after every row.
 */
import { contenderInfo } from "../../bench/contenders/list.ts";
import type { Envelope } from "../../bench/lib/envelope.ts";
import { RUNTIMES } from "../../bench/lib/types.ts";
import {
  familyChart,
  overviewChart,
  type RuntimeLines,
  runtimeLinesOf,
  summaryChart,
} from "../../bench/report/charts.ts";
import { textTable } from "../../bench/report/table.ts";
import {
  byFamily,
  charted,
  familyTitle,
  RUNTIME_TITLE,
  runtimeNotes,
  shortId,
} from "../../bench/report/view.ts";
import type { Selection } from "./selection.ts";

/** One envelope on the page, in its own column. */
export interface Slot {
  title: string;
  /** What it is: when, which commit, quick or full. */
  detail: string;
  envelope: Envelope;
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A slot's lines for one runtime, keeping only the picked workloads. */
function picked(slot: Slot, runtime: string, selection: Selection): RuntimeLines | undefined {
  if (!selection.runtimes.has(runtime)) return undefined;
  const rt = runtimeLinesOf(slot.envelope, runtime as RuntimeLines["runtime"]);
  if (!rt) return undefined;
  return { ...rt, lines: rt.lines.filter((l) => selection.workloads.has(shortId(l.workload))) };
}

function cairnsOf(slot: Slot, runtime: string, selection: Selection): string[] {
  const info = slot.envelope.runtimes[runtime as RuntimeLines["runtime"]]?.info;
  return (info?.contenders ?? []).filter((c) =>
    contenderInfo(c).family === "cairn" && selection.contenders.has(c)
  );
}

function figure(svg: string | undefined, empty: string): string {
  return svg
    ? `<figure class="chart">${svg}</figure>`
    : `<figure class="chart none"><p>${escape(empty)}</p></figure>`;
}

export function renderResults(slots: readonly Slot[], selection: Selection): string {
  if (slots.length === 0) {
    return `<p class="empty">Nothing to show yet: press Run, or load an envelope.</p>`;
  }
  const pair = slots.length > 1;
  const row = (cells: string[]) =>
    pair ? `<div class="pair">${cells.join("")}</div>` : cells.join("");
  const out: string[] = [];
  out.push(
    `<div class="pair heads">${
      slots.map((s) =>
        `<div class="slot-head"><strong>${escape(s.title)}</strong><br><span>${
          escape(s.detail)
        }</span></div>`
      ).join("")
    }</div>`,
  );
  const overviews = slots.map((slot) => {
    const runtimes = RUNTIMES.flatMap((r) => picked(slot, r, selection) ?? []);
    const contender = selection.contenders.has("cairn")
      ? "cairn"
      : [...selection.contenders].find((c) => contenderInfo(c).family === "cairn");
    return runtimes.length > 1 && contender ? overviewChart(runtimes, contender) : undefined;
  });
  if (overviews.some(Boolean)) {
    out.push(
      `<section class="runtime"><h2>All runtimes</h2><div class="charts${pair ? "" : " single"}">${
        row(overviews.map((svg) => figure(svg, "One runtime only")))
      }</div></section>`,
    );
  }
  for (const runtime of RUNTIMES) {
    const perSlot = slots.map((slot) => picked(slot, runtime, selection));
    if (perSlot.every((rt) => !rt)) continue;
    const charts: string[] = [];
    charts.push(row(perSlot.map((rt, i) =>
      figure(
        rt && summaryChart(rt, cairnsOf(slots[i], runtime, selection)),
        rt ? "No ratios among the picked rows" : `No ${RUNTIME_TITLE[runtime]} results here`,
      )
    )));
    const families = new Set(
      perSlot.flatMap((rt) => rt?.lines.filter(charted) ?? [])
        .map((l) => l.family),
    );
    for (const { family } of byFamily(perSlot.flatMap((rt) => rt?.lines ?? []))) {
      if (!families.has(family)) continue;
      charts.push(row(perSlot.map((rt, i) =>
        figure(
          rt && familyChart(rt, family, cairnsOf(slots[i], runtime, selection)),
          `No ${familyTitle(family).toLowerCase()} rows here`,
        )
      )));
    }
    out.push(
      `<section class="runtime" data-runtime="${runtime}"><h2>${
        RUNTIME_TITLE[runtime]
      }</h2><div class="charts${pair ? "" : " single"}">${charts.join("")}</div>` +
        `<details class="numbers"><summary>${
          RUNTIME_TITLE[runtime]
        }: every row in numbers</summary>${
          row(perSlot.map((rt, i) => numbers(slots[i], rt, selection)))
        }</details></section>`,
    );
  }
  return out.join("");
}

function numbers(slot: Slot, rt: RuntimeLines | undefined, selection: Selection): string {
  const result = rt && slot.envelope.runtimes[rt.runtime];
  if (!rt || !result?.info) return `<div class="table-wrap"></div>`;
  const contenders = result.info.contenders.filter((c) => selection.contenders.has(c));
  const { header, rows } = textTable(rt.lines, contenders);
  const notes = runtimeNotes(result, rt.lines);
  return `<div class="table-wrap"><p class="slot-name">${escape(slot.title)}</p><table><thead><tr>${
    header.map((h) => `<th>${escape(h)}</th>`).join("")
  }</tr></thead><tbody>${
    rows.map((cells) => `<tr>${cells.map((c) => `<td>${escape(c)}</td>`).join("")}</tr>`).join(
      "",
    )
  }</tbody></table><ul class="notes">${
    notes.map((n) => `<li>${escape(n)}</li>`).join("")
  }</ul></div>`;
}
