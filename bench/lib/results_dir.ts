/**
 * Where runs are kept (runner side, Deno): a complete run (every workload, on all runtimes or on
 * those asked for) goes to bench/results/ and is committed; a quick or filtered run to
 * bench/results/local/, which git ignores, so trying the benchmark never leaves a file to commit
 * or clean up by hand.
 */
import { dirname, join } from "node:path";
import {
  type Envelope,
  envelopeFileName,
  newestFirst,
  parseEnvelope,
  type StoredRun,
} from "./envelope.ts";
import { RUNTIMES } from "./types.ts";

/** Complete runs: the ones to commit, and to report. */
export const RESULTS_DIR = "bench/results";
/** Quick and filtered runs: git ignores this folder. */
export const LOCAL_RESULTS_DIR = "bench/results/local";

/**
 * Whether a run measured every workload of its runtimes at full size: such a run is committed,
 * and docs/benchmarks.md takes each runtime from the newest one that has it.
 */
export function isCompleteRun(envelope: Envelope): boolean {
  return !envelope.settings.quick && !envelope.settings.filter;
}

/** Where a run goes when no --json path is given. */
export function defaultEnvelopePath(envelope: Envelope): string {
  return join(
    isCompleteRun(envelope) ? RESULTS_DIR : LOCAL_RESULTS_DIR,
    envelopeFileName(envelope),
  );
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

/** The newest run, committed or not. */
export async function newestEnvelope(): Promise<string | undefined> {
  return (await listEnvelopes())[0];
}

/**
 * The newest committed run of every runtime (by when it ran), else the newest committed run:
 * the one the bench page opens with, which shows one run.
 */
export async function newestCommittedRun(): Promise<string | undefined> {
  const runs = newestFirst(await committedRuns());
  const everyRuntime = runs.find(({ envelope }) =>
    RUNTIMES.every((runtime) => envelope.runtimes[runtime])
  );
  return (everyRuntime ?? runs[0])?.path;
}

/** Every committed run, read. */
export async function committedRuns(): Promise<StoredRun[]> {
  return await readRuns((await listEnvelopes()).filter((path) => dirname(path) === RESULTS_DIR));
}

/** The runs in these files. */
export function readRuns(paths: readonly string[]): Promise<StoredRun[]> {
  return Promise.all(paths.map(async (path) => ({ path, envelope: await readEnvelope(path) })));
}

export async function readEnvelope(path: string): Promise<Envelope> {
  return parseEnvelope(await Deno.readTextFile(path), path);
}
