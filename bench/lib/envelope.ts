/**
 * The JSON envelope one `deno task bench` run writes: the machine, every runtime's versions and
 * raw rows, and the settings. Also where runs go, reading envelopes back and finding a row in
 * one.
 */
import { join } from "node:path";
import { type Row, type RuntimeInfo, type RuntimeName, RUNTIMES, type Settings } from "./types.ts";

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

/** `2026-10-20T0245_<fingerprint>_<commit>[_quick].json` */
export function envelopeFileName(envelope: Envelope): string {
  const stamp = envelope.createdAt.slice(0, 16).replace(/:/g, "");
  const quick = envelope.settings.quick ? "_quick" : "";
  return `${stamp}_${envelope.machine.fingerprint}_${envelope.commit}${quick}.json`;
}

/** Full runs of every workload on every runtime: the ones to commit. */
export const RESULTS_DIR = "bench/results";
/** Every other run (quick, filtered, some runtimes only): git ignores this folder. */
export const LOCAL_RESULTS_DIR = "bench/results/local";

/** Whether a run is a full one, to be committed and reported in docs/benchmarks.md. */
export function isFullRun(envelope: Envelope): boolean {
  const { quick, filter, runtimes } = envelope.settings;
  return !quick && !filter && RUNTIMES.every((r) => runtimes.includes(r));
}

/** Where a run goes when no --json path is given. */
export function defaultEnvelopePath(envelope: Envelope): string {
  return join(isFullRun(envelope) ? RESULTS_DIR : LOCAL_RESULTS_DIR, envelopeFileName(envelope));
}

/** Envelope files in bench/results/ and bench/results/local/, newest first. */
export async function listEnvelopes(): Promise<string[]> {
  const found: { path: string; time: number }[] = [];
  for (const dir of [RESULTS_DIR, LOCAL_RESULTS_DIR]) {
    try {
      for await (const entry of Deno.readDir(dir)) {
        if (!entry.isFile || !entry.name.endsWith(".json")) continue;
        const path = join(dir, entry.name);
        found.push({ path, time: (await Deno.stat(path)).mtime?.getTime() ?? 0 });
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return found.sort((a, b) => b.time - a.time).map((f) => f.path);
}

export async function readEnvelope(path: string): Promise<Envelope> {
  const envelope = JSON.parse(await Deno.readTextFile(path)) as Envelope;
  if (envelope.format !== ENVELOPE_FORMAT) {
    throw new Error(`${path} is not a ${ENVELOPE_FORMAT} envelope`);
  }
  return envelope;
}
