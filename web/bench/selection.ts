/**
 * The page's "show" controls: which runtimes, contenders and workloads the charts and tables
 * include. Built from what the shown envelopes hold; a choice survives a rebuild (a new row, a
 * newly loaded envelope), and what appears for the first time starts selected.
 */
import { CONTENDERS } from "../../bench/contenders/list.ts";
import type { Envelope } from "../../bench/lib/envelope.ts";
import { RUNTIMES } from "../../bench/lib/types.ts";
import { FAMILIES, RUNTIME_TITLE, shortId } from "../../bench/report/view.ts";
import { WORKLOADS } from "../../bench/workloads/index.ts";

export interface Selection {
  runtimes: Set<string>;
  contenders: Set<string>;
  /** Short workload ids ("W05"). */
  workloads: Set<string>;
}

interface Choice {
  id: string;
  label: string;
  /** A heading the choice is listed under (a workload's family). */
  group?: string;
}

export class SelectionControls {
  readonly #root: HTMLElement;
  readonly #onChange: () => void;
  /** Every id ever offered, and whether it is ticked. */
  readonly #ticked = new Map<string, boolean>();
  /** What the controls offer now, to rebuild them only when that changes. */
  #offered = "";

  constructor(root: HTMLElement, onChange: () => void) {
    this.#root = root;
    this.#onChange = onChange;
    root.addEventListener("change", (event) => {
      const input = event.target as HTMLInputElement;
      if (input.dataset.choice) this.#ticked.set(input.dataset.choice, input.checked);
      this.#onChange();
    });
  }

  /** Offers what `envelopes` hold. */
  update(envelopes: readonly Envelope[]): void {
    const runtimes = RUNTIMES.filter((r) => envelopes.some((e) => e.runtimes[r]?.info));
    const contenders = new Set<string>();
    const workloads = new Set<string>();
    for (const envelope of envelopes) {
      for (const result of Object.values(envelope.runtimes)) {
        for (const c of result?.info?.contenders ?? []) contenders.add(c);
        for (const row of result?.rows ?? []) workloads.add(shortId(row.workload));
      }
    }
    const family = (id: string) => WORKLOADS.find((w) => shortId(w.id) === id)?.family ?? "other";
    const workloadChoices = [...workloads]
      .sort((a, b) =>
        FAMILIES.findIndex((f) => f.id === family(a)) -
          FAMILIES.findIndex((f) => f.id === family(b)) || a.localeCompare(b)
      )
      .map((id) => ({
        id: `workload:${id}`,
        label: `${id} ${WORKLOADS.find((w) => shortId(w.id) === id)?.title ?? ""}`.trim(),
        group: FAMILIES.find((f) => f.id === family(id))!.title,
      }));
    const html = [
      fieldset("Runtimes", runtimes.map((r) => ({ id: `runtime:${r}`, label: RUNTIME_TITLE[r] }))),
      fieldset(
        "Contenders",
        CONTENDERS.filter((c) => contenders.has(c.id))
          .map((c) => ({ id: `contender:${c.id}`, label: c.short })),
      ),
      fieldset("Workloads", workloadChoices, true),
    ].join("");
    if (html === this.#offered) return;
    this.#offered = html;
    const open = this.#root.querySelector("details")?.open ?? false;
    this.#root.innerHTML = this.#tick(html);
    const details = this.#root.querySelector("details");
    if (details) details.open = open;
  }

  selection(): Selection {
    const picked = (prefix: string) =>
      new Set(
        [...this.#ticked]
          .filter(([id, on]) => on && id.startsWith(prefix))
          .map(([id]) => id.slice(prefix.length)),
      );
    return {
      runtimes: picked("runtime:"),
      contenders: picked("contender:"),
      workloads: picked("workload:"),
    };
  }

  /** Ticks the boxes in `html` as chosen before, new ones ticked. */
  #tick(html: string): string {
    return html.replace(/data-choice="([^"]+)"/g, (match, id: string) => {
      if (!this.#ticked.has(id)) this.#ticked.set(id, true);
      return `${match}${this.#ticked.get(id) ? " checked" : ""}`;
    });
  }
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
}

function fieldset(legend: string, choices: readonly Choice[], collapsed = false): string {
  if (choices.length === 0) return "";
  let group: string | undefined;
  const boxes = choices.map((c) => {
    const heading = c.group && c.group !== group
      ? `<span class="group">${escape(c.group)}</span>`
      : "";
    group = c.group;
    return `${heading}<label><input type="checkbox" data-choice="${escape(c.id)}">${
      escape(c.label)
    }</label>`;
  }).join("");
  const body = `<div class="choices">${boxes}</div>`;
  return collapsed
    ? `<details class="pick"><summary>${legend} (${choices.length})</summary>${body}</details>`
    : `<fieldset class="pick"><legend>${legend}</legend>${body}</fieldset>`;
}
