/**
 * `deno task bench:report [envelope.json ...]`: writes docs/benchmarks.md and its charts
 * (docs/benchmarks/*.svg), each runtime from the newest of the runs that has it (merge.ts) — by
 * default the committed runs in bench/results/ (or the newest other run, in
 * bench/results/local/, when none is committed).
 */
import { join } from "node:path";
import { committedRuns, newestEnvelope, readRuns, RESULTS_DIR } from "./lib/results_dir.ts";
import type { StoredRun } from "./lib/envelope.ts";
import { buildReport } from "./report/markdown.ts";
import { chooseSources } from "./report/merge.ts";

const DOC = "docs/benchmarks.md";
const CHARTS = "docs/benchmarks";

async function runs(): Promise<StoredRun[]> {
  if (Deno.args.length > 0) return await readRuns(Deno.args);
  const committed = await committedRuns();
  if (committed.length > 0) return committed;
  const newest = await newestEnvelope();
  return await readRuns(newest ? [newest] : []);
}

const sources = chooseSources(await runs());
if (sources.length === 0) {
  throw new Error(`no envelope in ${RESULTS_DIR}: run deno task bench first`);
}
const { markdown, charts } = buildReport(sources);
await Deno.mkdir(CHARTS, { recursive: true });
// Charts this report no longer draws (a runtime or family gone, an older layout) go.
for await (const entry of Deno.readDir(CHARTS)) {
  if (entry.name.endsWith(".svg") && !(entry.name in charts)) {
    await Deno.remove(join(CHARTS, entry.name));
  }
}
for (const [file, svg] of Object.entries(charts)) await Deno.writeTextFile(join(CHARTS, file), svg);
await Deno.writeTextFile(DOC, markdown);
const fmt = await new Deno.Command("./node_modules/.bin/deno", { args: ["fmt", "-q", DOC] })
  .output();
if (!fmt.success) console.error(new TextDecoder().decode(fmt.stderr));
const from = sources.map(({ path, runtimes }) => `${path} (${runtimes.join(", ")})`).join(", ");
console.log(`${DOC} and ${Object.keys(charts).length} chart(s) in ${CHARTS}/ from ${from}`);
