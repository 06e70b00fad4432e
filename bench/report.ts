/**
 * `deno task bench:report [envelope.json]`: writes docs/benchmarks.md and its charts
 * (docs/benchmarks/*.svg) from an envelope — by default the newest full run in bench/results/
 * (or the newest other run, in bench/results/local/, when there is no full one).
 */
import { join } from "node:path";
import { newestEnvelope, readEnvelope, RESULTS_DIR } from "./lib/results_dir.ts";
import { buildReport } from "./report/markdown.ts";

const DOC = "docs/benchmarks.md";
const CHARTS = "docs/benchmarks";

const source = Deno.args[0] ?? await newestEnvelope();
if (!source) throw new Error(`no envelope in ${RESULTS_DIR}: run deno task bench first`);
const { markdown, charts } = buildReport(await readEnvelope(source), source);
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
console.log(`${DOC} and ${Object.keys(charts).length} chart(s) in ${CHARTS}/ from ${source}`);
