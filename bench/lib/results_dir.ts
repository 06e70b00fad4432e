/**
 * Where runs are kept (runner side, Deno): a full run goes to bench/results/ and is committed;
 * every other run (quick, filtered, some runtimes only) to bench/results/local/, which git
 * ignores, so running the benchmark never leaves a file to commit or clean up by hand.
 */
import { dirname, join } from "node:path";
import { type Envelope, envelopeFileName, parseEnvelope } from "./envelope.ts";
import { RUNTIMES } from "./types.ts";

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

/** The newest full run in bench/results/, else (unless `fullOnly`) the newest other run. */
export async function newestEnvelope(fullOnly = false): Promise<string | undefined> {
  const paths = await listEnvelopes();
  return paths.find((p) => dirname(p) === RESULTS_DIR) ?? (fullOnly ? undefined : paths[0]);
}

export async function readEnvelope(path: string): Promise<Envelope> {
  return parseEnvelope(await Deno.readTextFile(path), path);
}
