/**
 * The shapes every part of the benchmark shares: workloads (Cairn against SQLite with a side for
 * each, or text editing with one side every text engine runs), contenders, run settings, result
 * rows and the messages a runtime sends back to the runner.
 * Pure types and a few constants: this module runs unchanged on Deno, Node and in Chromium.
 */
import type { PageSqlCtx } from "./sql.ts";

export type RuntimeName = "deno" | "node" | "browser";
export const RUNTIMES: readonly RuntimeName[] = ["deno", "node", "browser"];

/** Engine features a row may need that Cairn does not have yet. */
export type Feature = "storage" | "query" | "text";

/** The issue that brings each feature, for "not available yet — needs #N". */
export const FEATURE_ISSUE: Record<Feature, string> = {
  storage: "#4 (storage)",
  query: "#5 (queries)",
  text: "#22 (text)",
};

export interface Settings {
  quick: boolean;
  /** Regular expression over "<workload id> <title>"; empty selects every workload. */
  filter: string;
}

/** One size or shape of a workload, e.g. "100k → 1k results". */
export interface Variant {
  label: string;
  /** Items in the database before the timed part. */
  items: number;
  /** Operations per sample (per-operation rows report the sample time divided by this). */
  ops?: number;
  /**
   * As a workload's `differentWork`, for this size alone: what its ratio compares when the two
   * sides do different work there (the row is labelled, and kept out of charts and summaries).
   */
  differentWork?: string;
  /** Workload-specific numbers: results wanted, items changed, … */
  [key: string]: number | string | undefined;
}

/** How many samples a row takes; chosen from the workload's scale and quick mode. */
export interface Plan {
  warmup: number;
  samples: number;
  /** Point operations whose individual latency is recorded (0: none). */
  latencyOps: number;
  /** For fixed-time rows: the length of one sample in ms. */
  sliceMs: number;
}

/**
 * One side of a workload for one contender family. `setup` and `teardown` are not timed;
 * `sample` does its own timing (so per-sample preparation stays outside the clock) and returns
 * one measurement in the workload's unit. Background work a sample starts is awaited inside it.
 */
export interface TypedSide<C, S> {
  /** Features Cairn must have for this side to run (SQLite sides leave it empty). */
  requires?: readonly Feature[];
  setup(ctx: C, variant: Variant, plan: Plan): S | Promise<S>;
  sample(state: S, index: number): number | Promise<number>;
  /** Latency of single operations in µs, for the p50/p99/p99.9 table. */
  latency?(state: S, ops: number): number[] | Promise<number[]>;
  teardown?(state: S): void | Promise<void>;
}

// deno-lint-ignore no-explicit-any
export type Side<C> = TypedSide<C, any>;

/** Declares a side with its own state type. */
export function side<C, S>(definition: TypedSide<C, S>): Side<C> {
  return definition;
}

export type Unit = "µs/op" | "µs" | "ms" | "ops/s" | "B/item" | "kB" | "B/edit" | "% of log";

/** Units of memory and bytes, whose comparisons read "smaller" and "larger". */
export const SIZE_UNITS: readonly Unit[] = ["B/item", "kB", "B/edit", "% of log"];

/** The kind of work a workload does: charts and summaries group rows by it. */
export type Family =
  | "startup"
  | "writes"
  | "reads"
  | "queries"
  | "mixed"
  | "footprint"
  | "text"
  | "sync"
  | "growth";

/** What every workload is, whatever it runs on. */
interface WorkloadInfo {
  /** Versioned id: change the version whenever what is timed changes. */
  id: string;
  /** What is done, never the database's size: that is in each variant's label (quick mode
   *  changes it). */
  title: string;
  family: Family;
  unit: Unit;
  /** Whether a smaller number is better (time) or a larger one (throughput). */
  better: "lower" | "higher";
  /**
   * µs-scale rows get ≥ 30 samples, ms-scale rows ≥ 7 (long ones, seconds each, one warm-up
   * less); fixed-time rows run time slices; memory rows a few; size rows one (a size that does
   * not change from one sample to the next).
   */
  scale: "us" | "ms" | "long" | "fixed" | "memory" | "size";
  variants(quick: boolean): Variant[];
  /** Why the comparison is fair (or where it is not). */
  fairness: string;
  /**
   * What differs in one runtime (in Chromium, which client is the page), given with every row
   * of the workload there (the notes under its table).
   */
  runtimeNotes?: Partial<Record<RuntimeName, string>>;
  /** The runtimes it runs in; absent: all. */
  runtimes?: readonly RuntimeName[];
  /** False when the two sides measure different things (memory): no ratio is shown. */
  comparable?: boolean;
  /**
   * Set when the two sides do different work by design (Cairn hands back a cached result,
   * SQLite runs the query again); says what the ratio compares. Such rows stay in the tables,
   * labelled with it, and out of charts and summaries, whose scale they would swamp.
   */
  differentWork?: string;
  /**
   * Set when SQLite's profiles of one driver do the same work here and, sampled round by round,
   * take the same time: the SQLite side reads every row in one statement and commits nothing.
   * The report flags a row where their medians disagree (machine noise during a cell). Not set
   * on rows of many small statements (point reads, count, queries): there the profiles differ
   * even sampled round by round.
   */
  profilesAgree?: boolean;
  /**
   * Set when a sample of 0 or less means the side measured nothing (memory that did not grow);
   * says why. Such a row shows n/a with this reason instead of a figure.
   */
  zeroSample?: string;
  /**
   * Published figures for context, and where they come from. Not part of what is timed: changing
   * it changes no version.
   */
  context?: string;
}

/** Cairn against SQLite: a side for each, written for each. */
export interface SqlWorkload<CairnCtx = unknown, SqlCtx = unknown> extends WorkloadInfo {
  /** The contenders it runs on; absent: every Cairn and SQLite contender of the runtime. */
  contenders?: readonly string[];
  /** Exactly what is inside the clock on each side (goes into docs/benchmarks.md). */
  timed: { cairn: string; sqlite: string };
  /** Indexes and prepared statements each side uses. */
  indexes: { cairn: string; sqlite: string };
  cairn: Side<CairnCtx>;
  sqlite: Side<SqlCtx>;
  /**
   * The SQLite side as the bench page runs it itself in Chromium, where the work to count differs
   * (W01/W02: Cairn.open starts a storage worker, so SQLite's side starts its worker and loads
   * its WebAssembly inside the clock too). Absent: the page's SQLite worker runs `sqlite`.
   */
  sqliteInPage?: Side<PageSqlCtx>;
}

/**
 * A figure a Cairn contender is held to: at most `atMost` times `versus`'s figure in the same
 * run, or, without `versus`, at most `atMost` in the row's unit.
 */
export interface Target {
  contender: string;
  atMost: number;
  versus?: string;
}

/** Text editing: one side, run by every text engine (Cairn signed and trusted, Yjs, Automerge). */
export interface TextWorkload<TextCtx = unknown> extends WorkloadInfo {
  /** The contenders it runs on. */
  contenders: readonly string[];
  /** Whom Cairn's figures are compared with, as ratios; the first one in charts. */
  baselines: readonly string[];
  /** Exactly what is inside the clock (or measured), the same steps for every engine. */
  timed: string;
  targets?: readonly Target[];
  text: Side<TextCtx>;
}

export type Workload<CairnCtx = unknown, SqlCtx = unknown, TextCtx = unknown> =
  | SqlWorkload<CairnCtx, SqlCtx>
  | TextWorkload<TextCtx>;

export function isTextWorkload<C, S, T>(w: Workload<C, S, T>): w is TextWorkload<T> {
  return "text" in w;
}

export type RowStatus = "ok" | "not-available" | "not-applicable" | "error";

export interface LatencySummary {
  ops: number;
  p50: number;
  p99: number;
  p999: number;
}

/** One measured (or explained) cell: a workload variant on one contender in one runtime. */
export interface Row {
  workload: string;
  variant: string;
  contender: string;
  status: RowStatus;
  /** Why a row did not run ("not available yet — needs #4 (storage)", an error message). */
  reason?: string;
  unit: Unit;
  better: "lower" | "higher";
  /** Raw samples in `unit`. */
  samples: number[];
  /** Individual operation latencies, summarized (µs). */
  latency?: LatencySummary;
  /** What a reader must know about this cell, e.g. "Cairn: in memory, no disk yet". */
  note?: string;
  ms: number;
}

export interface RuntimeInfo {
  runtime: RuntimeName;
  version: string;
  engine: string;
  sqlite: Record<string, string>;
  timerResolutionUs: number;
  features: Record<Feature, boolean>;
  /** Why a feature probe said no (e.g. the error `Cairn.open({ path })` threw). */
  featureNotes?: Partial<Record<Feature, string>>;
  /** V8's limit on the JS heap of a process started as the bench starts it (bytes), if known. */
  heapLimit?: number;
  /** Contender ids run in this runtime, and the SQLite profile Cairn rows are compared with. */
  contenders: string[];
  baseline: string;
}

/** What a runtime sends to the runner, one JSON object per message. */
export type Message =
  | { type: "info"; info: RuntimeInfo }
  | {
    type: "progress";
    workload: string;
    variant: string;
    contender: string;
    /** Which cell of the runtime's run this is (1-based), of how many. */
    cell: number;
    cells: number;
    phase: string;
    i: number;
    n: number;
  }
  | { type: "row"; row: Row }
  | { type: "done"; ms: number }
  | { type: "fatal"; error: string };

/** Raised by a side that cannot run on this contender at all (not a failure). */
export class NotApplicable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "NotApplicable";
  }
}
