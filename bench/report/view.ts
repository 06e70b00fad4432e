/**
 * Turns one runtime's rows into lines of a table: every workload variant with each contender's
 * cell, each Cairn contender's comparison with the line's baselines (the runtime's SQLite
 * profile; Yjs, then Automerge, for text rows) and the targets it is held to. The console
 * table, the page, the charts and docs/benchmarks.md all render from this, so a cell reads the
 * same everywhere: a figure, or a mark with the reason it has none.
 */
import { contenderInfo, OWN_BASELINE, SAME_READS } from "../contenders/list.ts";
import { WORKLOADS } from "../workloads/index.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import { num } from "../lib/format.ts";
import { compare, type Comparison, summarize, type Summary } from "../lib/stats.ts";
import {
  type Family,
  isTextWorkload,
  type Row,
  type RuntimeName,
  type Target,
  type Unit,
  type Variant,
  type Workload,
} from "../lib/types.ts";
import { ratioText, timeRatio } from "./ratio.ts";

export const RUNTIME_TITLE: Record<RuntimeName, string> = {
  deno: "Deno",
  node: "Node",
  browser: "Chromium",
};

export interface Cell {
  row: Row;
  /** Set when the cell has a figure. */
  summary?: Summary;
  /** Set when it has none: a short mark for the table and why, for the notes. */
  missing?: { mark: string; reason?: string };
}

/** Workloads an envelope has but this code no longer knows are grouped apart. */
export type LineFamily = Family | "other";

export interface Line {
  /** Versioned id, e.g. "W05.v1". */
  workload: string;
  title: string;
  variant: string;
  unit: Row["unit"];
  better: Row["better"];
  family: LineFamily;
  comparable: boolean;
  /** What the ratio compares when the two sides do different work by design. */
  differentWork?: string;
  cells: Map<string, Cell>;
  /**
   * Whom Cairn is compared with: the runtime's SQLite profile, or a text row's CRDT libraries.
   * The first is the one charts draw.
   */
  baselines: readonly string[];
  /**
   * Cairn contender id → its comparison with its own baseline (when both have a figure): the
   * first, or the one OWN_BASELINE names for it (see `against`).
   */
  ratios: Map<string, Comparison>;
  /** Cairn contender id → the baseline its entry in `ratios` is against. */
  against: Map<string, string>;
  /**
   * On a row whose SQLite profiles do the same reads (`profilesAgree`): how far apart their
   * medians are (the largest over the smallest, minus 1), when by more than
   * READ_PROFILES_SPREAD. Machine noise during one cell; the ratio is uncertain by about that.
   */
  profileSpread?: number;
  /** Baseline → Cairn contender → comparison, for every baseline. */
  versus: Map<string, Map<string, Comparison>>;
  targets: TargetCheck[];
}

/** A target of the line's workload against this run's figures. */
export interface TargetCheck {
  contender: string;
  /** "Cairn ≤ 3× Yjs", "trusted ≤ 100 ms". */
  goal: string;
  /** Undefined while a figure it needs is missing. */
  met?: boolean;
  /** The figure it was judged on: "2.1×", "41 ms". */
  actual?: string;
  /** Set when the target lies within the figure's noise: met or missed, it may go either way. */
  withinNoise?: boolean;
}

export const FAMILIES: readonly { id: LineFamily; title: string }[] = [
  { id: "startup", title: "Open and start" },
  { id: "writes", title: "Writes" },
  { id: "reads", title: "Reads" },
  { id: "queries", title: "Queries" },
  { id: "mixed", title: "Mixed reads and writes" },
  { id: "footprint", title: "Memory and disk" },
  { id: "text", title: "Text editing" },
  { id: "sync", title: "Sync" },
  { id: "growth", title: "How cost grows" },
  { id: "other", title: "Other (workloads this code no longer has)" },
];

export function familyTitle(family: LineFamily): string {
  return FAMILIES.find((f) => f.id === family)!.title;
}

export function tableLines(result: RuntimeResult): Line[] {
  const baseline = result.info?.baseline;
  const runtime = result.info?.runtime;
  /** The runtime's baseline, then the profiles some Cairn contenders are compared with. */
  const sqlBaselines = baseline
    ? [
      baseline,
      ...new Set(
        Object.values(OWN_BASELINE).flatMap((own) => (runtime && own[runtime]) || []),
      ),
    ].filter((b, i, all) => all.indexOf(b) === i)
    : [];
  const lines = new Map<string, Line>();
  for (const row of result.rows) {
    const id = `${row.workload}|${row.variant}`;
    const workload = WORKLOADS.find((w) => w.id === row.workload);
    let line = lines.get(id);
    if (!line) {
      line = {
        workload: row.workload,
        title: workload?.title ?? row.workload,
        variant: row.variant,
        unit: row.unit,
        better: row.better,
        family: workload?.family ?? "other",
        comparable: workload?.comparable !== false,
        differentWork: variantOf(workload, row.variant)?.differentWork ?? workload?.differentWork,
        cells: new Map(),
        baselines: workload && isTextWorkload(workload) ? workload.baselines : sqlBaselines,
        ratios: new Map(),
        against: new Map(),
        versus: new Map(),
        targets: [],
      };
      lines.set(id, line);
    }
    line.cells.set(row.contender, cellOf(row, workload));
  }
  for (const line of lines.values()) {
    if (!line.comparable) continue;
    const sql = line.baselines === sqlBaselines;
    /**
     * Whom a Cairn contender is compared with: on SQLite rows, its own baseline where this line
     * has a figure of it, otherwise the runtime's; on text rows, every baseline.
     */
    const whom = (contender: string): string | undefined => {
      if (!sql || !runtime) return undefined;
      const own = OWN_BASELINE[contender]?.[runtime];
      return own && line.cells.get(own)?.summary ? own : line.baselines[0];
    };
    for (const baseline of line.baselines) {
      const base = line.cells.get(baseline)?.summary;
      if (!base) continue;
      const ratios = new Map<string, Comparison>();
      for (const [contender, cell] of line.cells) {
        if (!cell.summary || contenderInfo(contender).family !== "cairn") continue;
        const against = whom(contender);
        if (against !== undefined && against !== baseline) continue;
        ratios.set(contender, compare(cell.summary, base, line.better));
        if (against === baseline || baseline === line.baselines[0]) {
          line.against.set(contender, baseline);
          line.ratios.set(contender, ratios.get(contender)!);
        }
      }
      if (ratios.size > 0) line.versus.set(baseline, ratios);
    }
  }
  for (const line of lines.values()) line.profileSpread = readProfilesSpread(line);
  for (const line of lines.values()) {
    const workload = WORKLOADS.find((w) => w.id === line.workload);
    const targets = workload && isTextWorkload(workload) ? workload.targets ?? [] : [];
    line.targets = targets.map((target) => checkTarget(line, target));
  }
  return [...lines.values()];
}

/** "Cairn ≤ 3× Yjs", "trusted ≤ 100 ms". */
export function targetGoal(target: Target, unit: Unit): string {
  const who = contenderInfo(target.contender).short;
  return target.versus
    ? `${who} ≤ ${target.atMost}× ${contenderInfo(target.versus).short}`
    : `${who} ≤ ${num(target.atMost)} ${unit}`;
}

/**
 * Judges a target on the medians: the ratio to another contender's, or the figure itself. The
 * noise is the one comparisons use (twice the larger robust CV, at least 3 %).
 */
function checkTarget(line: Line, target: Target): TargetCheck {
  const versus = target.versus;
  const check: TargetCheck = { contender: target.contender, goal: targetGoal(target, line.unit) };
  const own = line.cells.get(target.contender)?.summary;
  if (!own) return check;
  const judged = (value: number, noise: number, actual: string): TargetCheck => ({
    ...check,
    met: value <= target.atMost,
    actual,
    withinNoise: Math.abs(Math.log(value / target.atMost)) <= Math.log(1 + noise),
  });
  if (!versus) {
    const noise = Math.max(0.03, 2 * own.robustCv);
    return judged(own.median, noise, `${num(own.median)} ${line.unit}`);
  }
  const comparison = line.versus.get(versus)?.get(target.contender);
  if (!comparison) return check;
  const ratio = timeRatio(comparison);
  return judged(ratio, comparison.noise, ratioText(ratio));
}

/** "met (2.1×)", "missed (109 ms, within the noise)". */
export function targetVerdict(check: TargetCheck): string {
  if (check.met === undefined) return "not measured";
  const noise = check.withinNoise ? ", within the noise" : "";
  return `${check.met ? "met" : "missed"} (${check.actual}${noise})`;
}

/** "Cairn ≤ 3× Yjs: met (2.1×)", "trusted ≤ 100 ms: not measured". */
export function targetText(check: TargetCheck): string {
  return `${check.goal}: ${targetVerdict(check)}`;
}

/**
 * How far apart SQLite profiles doing the same reads may be in one row before the report marks
 * it: 20 %.
 */
export const READ_PROFILES_SPREAD = 0.2;

/**
 * Whether SQLite's profiles do the same work in the workload `id` (`profilesAgree`); an older
 * version of a workload (a row of an earlier run) is judged by the current one of its number.
 */
function profilesAgree(id: string): boolean {
  const base = id.split(".")[0];
  const workload = WORKLOADS.find((w) => w.id === id) ??
    WORKLOADS.find((w) => w.id.split(".")[0] === base);
  return workload !== undefined && !isTextWorkload(workload) && workload.profilesAgree === true;
}

/** `Line.profileSpread`: set only past READ_PROFILES_SPREAD. */
function readProfilesSpread(line: Line): number | undefined {
  if (!profilesAgree(line.workload)) return undefined;
  let widest = 0;
  for (const group of SAME_READS) {
    const medians = group.flatMap((id) => line.cells.get(id)?.summary?.median ?? []);
    if (medians.length < 2 || Math.min(...medians) <= 0) continue;
    widest = Math.max(widest, Math.max(...medians) / Math.min(...medians) - 1);
  }
  return widest > READ_PROFILES_SPREAD ? widest : undefined;
}

/** "SQLite profiles doing the same reads differ by 56 %: …", or nothing. */
export function profileSpreadText(line: Line): string | undefined {
  if (line.profileSpread === undefined) return undefined;
  return `SQLite profiles doing the same reads differ by ${
    Math.round(line.profileSpread * 100)
  } %: machine noise during a cell; ratio uncertain`;
}

/** The size of `workload` labelled `label`, in a full run or a quick one. */
function variantOf(
  workload: Workload<unknown, unknown> | undefined,
  label: string,
): Variant | undefined {
  if (!workload || isTextWorkload(workload)) return undefined;
  return [...workload.variants(false), ...workload.variants(true)].find((v) => v.label === label);
}

/** Whether a line compares Cairn with SQLite (the overview and the summaries are about that). */
export function versusSqlite(line: Line): boolean {
  return line.baselines.length > 0 && contenderInfo(line.baselines[0]).family === "sqlite";
}

function cellOf(row: Row, workload: Workload<unknown, unknown> | undefined): Cell {
  switch (row.status) {
    case "ok": {
      if (row.samples.length === 0) return { row, missing: { mark: "n/a", reason: "no samples" } };
      const empty = row.samples.filter((v) => v <= 0).length;
      if (workload?.zeroSample && empty > 0) {
        return {
          row,
          missing: {
            mark: "n/a",
            reason:
              `no figure where a sample saw nothing (≤ 0 ${row.unit}): ${workload.zeroSample}`,
          },
        };
      }
      return { row, summary: summarize(row.samples) };
    }
    case "not-available":
      return {
        row,
        missing: {
          mark: `n/a yet ${(row.reason ?? "").match(/#\d+/g)?.join(",") ?? ""}`.trim(),
          reason: row.reason,
        },
      };
    case "not-applicable":
      return { row, missing: { mark: "n/a", reason: row.reason } };
    case "error":
      return { row, missing: { mark: "ERROR", reason: row.reason?.split("\n")[0] } };
  }
}

/** "W05" from "W05.v1": charts leave the version out. */
export function shortId(workload: string): string {
  return workload.split(".")[0];
}

/**
 * Lines whose ratios go into charts and summaries: comparable work that has a ratio, of a
 * workload this code still knows (an older run's retired row cannot say whether its sides
 * compare alike, e.g. a memory row whose SQLite figure saw nothing). The growth rows repeat
 * other rows at other sizes: their section reads them, the charts would count them twice.
 */
export function charted(line: Line): boolean {
  return line.ratios.size > 0 && !line.differentWork && line.family !== "other" &&
    line.family !== "growth";
}

/** Lines grouped by family, in the order of FAMILIES; families without lines are left out. */
export function byFamily(lines: readonly Line[]): { family: LineFamily; lines: Line[] }[] {
  return FAMILIES
    .map(({ id }) => ({ family: id, lines: lines.filter((l) => l.family === id) }))
    .filter((group) => group.lines.length > 0);
}

/**
 * What a reader must know about a runtime's figures, one sentence each: the features the
 * runner detected, the notes rows carry, why cells have no figure (one sentence per reason,
 * naming every contender it applies to) and errors.
 */
export function runtimeNotes(result: RuntimeResult, lines: readonly Line[]): string[] {
  const notes: string[] = [];
  const info = result.info;
  for (const [feature, on] of Object.entries(info?.features ?? {})) {
    const why = info?.featureNotes?.[feature as keyof typeof info.features];
    notes.push(`Feature ${feature}: ${on ? "detected" : `not detected${why ? ` (${why})` : ""}`}`);
  }
  const rowNotes = new Set<string>();
  const missing = new Map<string, { workloads: Set<string>; contenders: Set<string> }>();
  const errors: string[] = [];
  for (const line of lines) {
    for (const [contender, cell] of line.cells) {
      if (cell.row.note) rowNotes.add(cell.row.note);
      if (!cell.missing) continue;
      const label = contenderInfo(contender).short;
      if (cell.row.status === "error") {
        errors.push(
          `ERROR in ${line.workload} ${line.variant} on ${label}: ${cell.missing.reason}`,
        );
        continue;
      }
      const reason = cell.missing.reason ?? "no figure";
      const entry = missing.get(reason) ?? { workloads: new Set(), contenders: new Set() };
      missing.set(reason, entry);
      entry.workloads.add(shortId(line.workload));
      entry.contenders.add(label);
    }
  }
  notes.push(...rowNotes);
  for (const [reason, { workloads, contenders }] of missing) {
    notes.push(`n/a in ${[...workloads].join(", ")} for ${[...contenders].join(", ")}: ${reason}`);
  }
  return [...notes, ...errors];
}
