/**
 * One report from several runs: each runtime's rows come from the run that measured them, since
 * a runtime can be run on its own (`--runtime=browser`) when a full run would not fit the time at
 * hand. Ratios compare contenders within one runtime of one run, so they stay honest; the report
 * names each runtime's run (commit, time, envelope) in its setup section.
 */
import { type Envelope, newestFirst, type StoredRun } from "../lib/envelope.ts";
import { type RuntimeName, RUNTIMES } from "../lib/types.ts";

/** A run the report takes rows from, and the runtimes it takes from it. */
export interface ReportSource extends StoredRun {
  runtimes: RuntimeName[];
}

/**
 * For each runtime, the newest run (by its start time) that finished it, else the newest that
 * has it at all; `runs` are complete runs (not quick, not filtered). The first source is the
 * newest of those chosen.
 */
export function chooseSources(runs: readonly StoredRun[]): ReportSource[] {
  const sorted = newestFirst(runs);
  const sources: ReportSource[] = [];
  for (const runtime of RUNTIMES) {
    const having = sorted.filter(({ envelope }) => envelope.runtimes[runtime]);
    const chosen = having.find(({ envelope }) => !envelope.runtimes[runtime]!.problem) ??
      having[0];
    if (!chosen) continue;
    const source = sources.find(({ path }) => path === chosen.path);
    if (source) source.runtimes.push(runtime);
    else sources.push({ ...chosen, runtimes: [runtime] });
  }
  return newestFirst(sources);
}

/**
 * The envelope the report is built from: each source's runtimes, and the bundle sizes of the
 * run that measured the browser (they are measured with it); the rest is the first source's.
 */
export function mergeSources(sources: readonly ReportSource[]): Envelope {
  if (sources.length === 0) throw new Error("no run to report");
  const [first] = sources;
  const runtimes: Envelope["runtimes"] = {};
  for (const { envelope, runtimes: taken } of sources) {
    for (const runtime of taken) runtimes[runtime] = envelope.runtimes[runtime];
  }
  const browser = sources.find(({ runtimes }) => runtimes.includes("browser"));
  return {
    ...first.envelope,
    settings: {
      ...first.envelope.settings,
      runtimes: RUNTIMES.filter((runtime) => runtimes[runtime]),
    },
    runtimes,
    bundle: (browser ?? first).envelope.bundle,
  };
}
