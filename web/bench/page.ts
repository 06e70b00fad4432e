/**
 * The bench page. Driven by the runner (`deno task bench`) it starts by itself and reports every
 * message through `__benchEmit`; opened by a person (`deno task bench:serve`) it has a Run
 * button. Either way it draws the charts of docs/benchmarks.md as rows complete, with the row
 * it is on of how many and the time left, next to an envelope loaded for comparison. Cairn runs
 * on this page's main thread; SQLite WASM in a worker on OPFS.
 */
import {
  type Envelope,
  ENVELOPE_FORMAT,
  parseEnvelope,
  type RuntimeResult,
} from "../../bench/lib/envelope.ts";
import { countLabel } from "../../bench/lib/format.ts";
import { cellKey, earlierTimes, TimeLeft, timeLeftText } from "../../bench/lib/time_left.ts";
import type { Message, Settings } from "../../bench/lib/types.ts";
import { plannedCells, runSuite } from "../../bench/entry/suite.ts";
import { big } from "../../bench/workloads/common.ts";
import { driver, pagePlatform } from "./page_platform.ts";
import { renderResults, type Slot } from "./results_view.ts";
import { SelectionControls } from "./selection.ts";
import { SqliteWorker } from "./worker_client.ts";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

// ── What the page shows ─────────────────────────────────────────────────────────────────────

/** The run on this page, once started; then envelopes loaded to look at or compare with. */
let live: Slot | undefined;
let running = false;
let shown: Slot | undefined;
let compared: Slot | undefined;

const controls = new SelectionControls($("pick"), render);

function slots(): Slot[] {
  return [live ?? shown, compared].filter((s): s is Slot => s !== undefined);
}

function render(): void {
  const current = slots();
  controls.update(current.map((s) => s.envelope));
  $("results").innerHTML = renderResults(current, controls.selection());
}

function describe(envelope: Envelope, source: string): Slot {
  const runtimes = envelope.settings.runtimes.join(", ");
  const mode = envelope.settings.quick ? "quick run" : "full run";
  const filter = envelope.settings.filter ? `, filter ${envelope.settings.filter}` : "";
  return {
    title: source,
    detail:
      `${mode} of ${runtimes}${filter}, ${envelope.createdAt.slice(0, 16).replace("T", " ")}` +
      ` UTC, commit ${envelope.commit}`,
    envelope,
  };
}

async function load(source: string, read: () => Promise<string>, into: "shown" | "compared") {
  try {
    const slot = describe(parseEnvelope(await read(), source), source);
    if (into === "compared") compared = slot;
    else if (running) compared = slot; // the run in progress keeps its column
    else [shown, live] = [slot, undefined];
    $("load-error").textContent = "";
  } catch (err) {
    $("load-error").textContent = `Could not load ${source}: ${(err as Error).message}`;
  }
  render();
}

function loadUrl(path: string, into: "shown" | "compared"): Promise<void> {
  return load(path, async () => {
    const response = await fetch(path.startsWith("/") ? path : `/${path}`);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.text();
  }, into);
}

function loadFile(input: HTMLInputElement, into: "shown" | "compared"): void {
  const file = input.files?.[0];
  if (file) load(file.name, () => file.text(), into);
  input.value = "";
}

// ── Running ─────────────────────────────────────────────────────────────────────────────────

function pageEnvelope(settings: Settings, result: RuntimeResult): Envelope {
  const memory = (navigator as unknown as { deviceMemory?: number }).deviceMemory;
  return {
    format: ENVELOPE_FORMAT,
    createdAt: new Date().toISOString(),
    commit: "unknown (run on the bench page)",
    machine: {
      cpu: "unknown (a page cannot tell)",
      cores: navigator.hardwareConcurrency,
      memoryBytes: (memory ?? 0) * 2 ** 30,
      os: navigator.userAgent,
      fingerprint: "page",
    },
    settings: { ...settings, runtimes: ["browser"] },
    runtimes: { browser: result },
  };
}

/** An earlier run of the same mode shown on the page, whose row times predict this run's. */
function earlierRun(settings: Settings): Envelope | undefined {
  return [shown, compared].find((s) => s?.envelope.settings.quick === settings.quick)?.envelope;
}

function showProgress(done: number, total: number, text: string): void {
  const bar = $<HTMLProgressElement>("bar");
  bar.max = Math.max(1, total);
  bar.value = done;
  $("progress").textContent = text;
}

async function run(settings: Settings): Promise<void> {
  const button = $<HTMLButtonElement>("run");
  button.disabled = true;
  running = true;
  $("download").hidden = true;
  const result: RuntimeResult = { rows: [], ms: 0 };
  const envelope = pageEnvelope(settings, result);
  // The envelope on show moves over to be compared with, unless something already is.
  if (shown && !compared) compared = shown;
  live = {
    title: "This run",
    detail: `${settings.quick ? "quick run" : "full run"} in this browser${
      settings.filter ? `, filter ${settings.filter}` : ""
    }, started ${envelope.createdAt.slice(11, 19)} UTC`,
    envelope,
  };
  const plan = plannedCells("browser", settings).map(({ workload, variant, contender }) =>
    cellKey("browser", { workload: workload.id, variant: variant.label, contender: contender.id })
  );
  const earlier = earlierRun(settings);
  const timeLeft = new TimeLeft(plan, earlier ? earlierTimes(earlier) : undefined);
  const started = performance.now();
  showProgress(0, plan.length, `0 of ${plan.length} rows · starting`);
  render();
  const emit = (message: Message) => {
    driver.__benchEmit?.(message);
    if (message.type === "info") result.info = message.info;
    if (message.type === "row") {
      result.rows.push(message.row);
      timeLeft.finished(cellKey("browser", message.row), message.row.ms);
      // Headless under the runner nobody watches: drawing would only leave garbage for the
      // next cell's samples to collect. A person watching sees each row drawn.
      if (!driver.__benchEmit) render();
    }
    if (message.type === "progress") {
      timeLeft.running(cellKey("browser", message));
      showProgress(
        message.cell - 1,
        message.cells,
        `Row ${message.cell} of ${message.cells} · ${timeLeftText(timeLeft.estimate())} · ` +
          `${message.workload} · ${message.variant} · ${message.contender} · ${message.phase} ` +
          `${message.i}/${message.n}`,
      );
    }
  };
  try {
    const worker = new SqliteWorker();
    const wasmVersion = await worker.init();
    await runSuite(settings, pagePlatform(worker, wasmVersion), emit);
    result.ms = performance.now() - started;
    showProgress(
      plan.length,
      plan.length,
      `Done: ${plan.length} rows in ${(result.ms / 1000).toFixed(1)} s`,
    );
    $("progress").dataset.state = "done";
    render();
    offerDownload(envelope);
  } catch (err) {
    const error = String((err as Error)?.stack ?? err);
    $("progress").textContent = `failed: ${error}`;
    $("progress").dataset.state = "failed";
    emit({ type: "fatal", error });
  } finally {
    running = false;
    button.disabled = false;
  }
}

function offerDownload(envelope: Envelope): void {
  const link = $<HTMLAnchorElement>("download");
  link.href = URL.createObjectURL(
    new Blob([JSON.stringify(envelope, null, 1)], { type: "application/json" }),
  );
  link.download = `cairn-bench-page-${envelope.createdAt.slice(0, 16).replace(/:/g, "")}${
    envelope.settings.quick ? "_quick" : ""
  }.json`;
  link.hidden = false;
}

function settingsFromForm(): Settings {
  return {
    quick: $<HTMLInputElement>("quick").checked,
    filter: $<HTMLInputElement>("filter").value.trim(),
  };
}

/** "5k items instead of 100k, few samples", from the workloads' own sizes. */
function quickHint(): string {
  return `${countLabel(big(true))} items instead of ${countLabel(big(false))}, few samples`;
}

const params = new URL(location.href).searchParams;
$<HTMLInputElement>("quick").checked = params.has("quick");
$("quick-hint").textContent = quickHint();
$<HTMLInputElement>("filter").value = params.get("filter") ?? "";
$("run").addEventListener("click", () => run(settingsFromForm()));
$("show-file").addEventListener(
  "change",
  (e) => loadFile(e.target as HTMLInputElement, "shown"),
);
$("compare-file").addEventListener(
  "change",
  (e) => loadFile(e.target as HTMLInputElement, "compared"),
);
render();
const loading = [
  params.get("load") && loadUrl(params.get("load")!, "shown"),
  params.get("compare") && loadUrl(params.get("compare")!, "compared"),
];
await Promise.all(loading);
if (params.has("auto")) run(settingsFromForm());
