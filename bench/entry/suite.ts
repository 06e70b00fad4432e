/**
 * Runs the selected workloads on every contender of one runtime and emits a row for each cell,
 * measured or explained. Runtime differences come in through `Platform`; this code is the same
 * on Deno, Node and in the browser page.
 */
import { cairnCtx, detectFeatures } from "../contenders/cairn.ts";
import { BASELINE, type ContenderInfo, contendersFor } from "../contenders/list.ts";
import { textCtx, type TextPlatform } from "../contenders/text.ts";
import type { BenchWorkload, SqlBenchWorkload } from "../workloads/common.ts";
import { WORKLOADS } from "../workloads/index.ts";
import { percentiles, timerResolutionUs } from "../lib/stats.ts";
import {
  planFor,
  type Progress,
  runSide,
  type SampleHooks,
  type SideResult,
} from "../lib/measure.ts";
import {
  type Feature,
  FEATURE_ISSUE,
  isTextWorkload,
  type Message,
  NotApplicable,
  type Plan,
  type Row,
  type RuntimeInfo,
  type RuntimeName,
  type Settings,
  type Variant,
} from "../lib/types.ts";

/**
 * What a runtime provides: its names and versions, and (through `TextPlatform`, which holds
 * Cairn's part too) storage places and their files, the trace files, memory figures and GC.
 */
export interface Platform extends TextPlatform {
  runtime: RuntimeName;
  version: string;
  engine: string;
  sqliteVersions(): Promise<Record<string, string>>;
  /** V8's JS heap limit in a process of this runtime, where it can be read. */
  heapLimit?: number;
  /**
   * Awaited after each row is emitted: lets the platform finish its own work (the bench page
   * draws the new row) before the next cell starts, outside every clock.
   */
  settle?(): Promise<void>;
  /** Runs the SQLite side of `workload` on a SQLite contender (locally or in a worker). */
  runSqlite(
    contender: string,
    workload: SqlBenchWorkload,
    variant: Variant,
    plan: Plan,
    progress: Progress,
  ): Promise<SideResult>;
}

export function selectWorkloads(filter: string): BenchWorkload[] {
  const pattern = filter ? new RegExp(filter, "i") : undefined;
  return WORKLOADS.filter((w) => !pattern || pattern.test(`${w.id} ${w.title}`));
}

/** One row to be measured: a workload variant on one contender. */
export interface PlannedCell {
  workload: BenchWorkload;
  variant: Variant;
  contender: ContenderInfo;
}

/**
 * The contenders a workload runs on in a runtime: its own list where it has one (text, sync and
 * growth rows); Cairn's and SQLite's for the others; none in a runtime it does not run in.
 */
export function workloadContenders(workload: BenchWorkload, runtime: RuntimeName): ContenderInfo[] {
  if (workload.runtimes && !workload.runtimes.includes(runtime)) return [];
  return contendersFor(runtime).filter((c) =>
    workload.contenders
      ? workload.contenders.includes(c.id)
      : c.family === "cairn" || c.family === "sqlite"
  );
}

/**
 * Every cell a run of `settings` measures in `runtime`, in the order it measures them. The
 * runner and the page count "k of N" and estimate the time left from the same list.
 *
 * The contenders of each row take turns going first: in a fixed order the first one would always
 * run on the quietest heap, before the others' garbage and file-cache churn.
 */
export function plannedCells(runtime: RuntimeName, settings: Settings): PlannedCell[] {
  const rows = selectWorkloads(settings.filter).flatMap((workload) =>
    workload.variants(settings.quick).map((variant) => ({ workload, variant }))
  );
  return rows.flatMap(({ workload, variant }, index) =>
    rotated(workloadContenders(workload, runtime), index).map((contender) => ({
      workload,
      variant,
      contender,
    }))
  );
}

/** `list` starting at its element `by` (modulo its length), the ones before it moved to the end. */
export function rotated<T>(list: readonly T[], by: number): T[] {
  if (list.length === 0) return [];
  const start = by % list.length;
  return [...list.slice(start), ...list.slice(0, start)];
}

/**
 * Runs the side of `workload` that a contender other than SQLite takes: a text engine's in text
 * rows, Cairn's in the others. `hooks`: see bench/profile.ts.
 */
export function runEngineSide(
  workload: BenchWorkload,
  contender: string,
  features: Record<Feature, boolean>,
  platform: TextPlatform,
  variant: Variant,
  plan: Plan,
  progress: Progress,
  hooks?: SampleHooks,
): Promise<SideResult> {
  return isTextWorkload(workload)
    ? runSide(workload.text, textCtx(contender, features, platform), variant, plan, progress, hooks)
    : runSide(
      workload.cairn,
      cairnCtx(contender, features, platform),
      variant,
      plan,
      progress,
      hooks,
    );
}

export async function runSuite(
  settings: Settings,
  platform: Platform,
  emit: (message: Message) => void,
): Promise<void> {
  const started = performance.now();
  const { features, notes } = await detectFeatures(platform.storageLocation());
  const contenders = contendersFor(platform.runtime);
  const info: RuntimeInfo = {
    runtime: platform.runtime,
    version: platform.version,
    engine: platform.engine,
    sqlite: await platform.sqliteVersions(),
    timerResolutionUs: timerResolutionUs(),
    features,
    featureNotes: notes,
    heapLimit: platform.heapLimit,
    contenders: contenders.map((c) => c.id),
    baseline: BASELINE[platform.runtime],
  };
  emit({ type: "info", info });
  const cells = plannedCells(platform.runtime, settings);
  for (const [index, { workload, variant, contender }] of cells.entries()) {
    const base = {
      workload: workload.id,
      variant: variant.label,
      contender: contender.id,
      unit: workload.unit,
      better: workload.better,
    };
    const position = { cell: index + 1, cells: cells.length };
    let last = 0;
    const progress: Progress = (phase, i, n) => {
      const t = performance.now();
      if (phase === "sample" && i !== 1 && i !== n && t - last < 100) return;
      last = t;
      emit({ type: "progress", ...base, ...position, phase, i, n });
    };
    const plan = planFor(workload, settings.quick);
    const row = await runCell(workload, variant, contender, plan, features, platform, progress);
    emit({ type: "row", row: { ...base, ...row } });
    platform.gc();
    await platform.settle?.();
  }
  emit({ type: "done", ms: performance.now() - started });
}

type CellResult = Pick<Row, "status" | "reason" | "samples" | "latency" | "note" | "ms">;

async function runCell(
  workload: BenchWorkload,
  variant: Variant,
  contender: ContenderInfo,
  plan: Plan,
  features: Record<Feature, boolean>,
  platform: Platform,
  progress: Progress,
): Promise<CellResult> {
  const started = performance.now();
  const side = isTextWorkload(workload) ? workload.text : workload.cairn;
  const needs = contender.family === "cairn"
    ? [...contender.requires, ...(side.requires ?? [])]
    : [];
  const missing = [...new Set(needs)].filter((f) => !features[f]);
  if (missing.length > 0) {
    return {
      status: "not-available",
      reason: `not available yet — needs ${missing.map((f) => FEATURE_ISSUE[f]).join(", ")}`,
      samples: [],
      ms: 0,
    };
  }
  try {
    const result = isTextWorkload(workload) || contender.family === "cairn"
      ? await runEngineSide(workload, contender.id, features, platform, variant, plan, progress)
      : await platform.runSqlite(contender.id, workload, variant, plan, progress);
    return {
      status: "ok",
      samples: result.samples,
      latency: result.latencies?.length
        ? { ops: result.latencies.length, ...percentiles(result.latencies) }
        : undefined,
      note: contender.family === "cairn" && !features.storage && !isTextWorkload(workload)
        ? "Cairn: in memory, no disk yet"
        : workload.runtimeNotes?.[platform.runtime],
      ms: performance.now() - started,
    };
  } catch (err) {
    const notApplicable = err instanceof NotApplicable ||
      (err as Error)?.name === "NotApplicable";
    return {
      status: notApplicable ? "not-applicable" : "error",
      reason: notApplicable ? (err as Error).message : String((err as Error)?.stack ?? err),
      samples: [],
      ms: performance.now() - started,
    };
  }
}
