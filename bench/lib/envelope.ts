/**
 * The JSON envelope one `deno task bench` run writes: the machine, every runtime's versions and
 * raw rows, and the settings; reading one back and finding a row in one. Runs unchanged on the
 * bench page (where runs are kept on disk: results_dir.ts).
 */
import type { BundleSize } from "../../scripts/lib/bundle_size.ts";
import type { Row, RuntimeInfo, RuntimeName, Settings } from "./types.ts";

export const ENVELOPE_FORMAT = "cairn-bench/1";

export interface Machine {
  cpu: string;
  cores: number;
  memoryBytes: number;
  os: string;
  /** Short hash of cpu, cores, memory, os and host name: tells machines apart in file names. */
  fingerprint: string;
}

export interface RuntimeResult {
  info?: RuntimeInfo;
  rows: Row[];
  /** Wall time of the whole runtime section, build and browser start included. */
  ms: number;
  /** Set when the runtime did not finish (a crash, a timeout). */
  problem?: string;
}

export interface Envelope {
  format: typeof ENVELOPE_FORMAT;
  createdAt: string;
  commit: string;
  machine: Machine;
  settings: Settings & { runtimes: RuntimeName[] };
  runtimes: Partial<Record<RuntimeName, RuntimeResult>>;
  /** What Cairn adds to an app's browser bundle (scripts/lib/bundle_size.ts); runs with a browser. */
  bundle?: { esbuild: string; apps: BundleSize[] };
}

export function rowKey(row: Pick<Row, "workload" | "variant" | "contender">): string {
  return `${row.workload}|${row.variant}|${row.contender}`;
}

export function findRow(
  result: RuntimeResult | undefined,
  workload: string,
  variant: string,
  contender: string,
): Row | undefined {
  return result?.rows.find((r) =>
    r.workload === workload && r.variant === variant && r.contender === contender
  );
}

/** A run read from its file. */
export interface StoredRun {
  path: string;
  envelope: Envelope;
}

/** `runs`, the one that started last first. */
export function newestFirst<T extends StoredRun>(runs: readonly T[]): T[] {
  return [...runs].sort((a, b) => b.envelope.createdAt.localeCompare(a.envelope.createdAt));
}

/** `2026-10-20T0245_<fingerprint>_<commit>[_quick].json` */
export function envelopeFileName(envelope: Envelope): string {
  const stamp = envelope.createdAt.slice(0, 16).replace(/:/g, "");
  const quick = envelope.settings.quick ? "_quick" : "";
  return `${stamp}_${envelope.machine.fingerprint}_${envelope.commit}${quick}.json`;
}

/** An envelope from JSON text, or an error naming `source` when the text is not one. */
export function parseEnvelope(text: string, source: string): Envelope {
  const envelope = JSON.parse(text) as Envelope;
  if (envelope?.format !== ENVELOPE_FORMAT || typeof envelope.runtimes !== "object") {
    throw new Error(`${source} is not a ${ENVELOPE_FORMAT} envelope`);
  }
  return envelope;
}
