/**
 * `deno task bench:report [envelope.json]`: writes docs/benchmarks.md and its charts
 * (docs/benchmarks/*.svg) from an envelope — by default the newest full run in bench/results/
 * (or the newest quick run when there is no full one).
 */
import { join } from "node:path";
import { readEnvelope } from "./lib/envelope.ts";
import { buildReport } from "./report/markdown.ts";

const RESULTS = "bench/results";
const DOC = "docs/benchmarks.md";
const CHARTS = "docs/benchmarks";

async function newestEnvelope(): Promise<string> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(RESULTS)) {
    if (entry.isFile && entry.name.endsWith(".json")) names.push(entry.name);
  }
  const byTime = async (name: string) =>
    (await Deno.stat(join(RESULTS, name))).mtime?.getTime() ?? 0;
  const dated = await Promise.all(names.map(async (name) => ({ name, t: await byTime(name) })));
  dated.sort((a, b) => b.t - a.t);
  const pick = dated.find((d) => !d.name.includes("_quick")) ?? dated[0];
  if (!pick) throw new Error(`no envelope in ${RESULTS}: run deno task bench first`);
  return join(RESULTS, pick.name);
}

const source = Deno.args[0] ?? await newestEnvelope();
const { markdown, charts } = buildReport(await readEnvelope(source), source);
await Deno.mkdir(CHARTS, { recursive: true });
for (const [file, svg] of Object.entries(charts)) await Deno.writeTextFile(join(CHARTS, file), svg);
await Deno.writeTextFile(DOC, markdown);
const fmt = await new Deno.Command("./node_modules/.bin/deno", { args: ["fmt", "-q", DOC] })
  .output();
if (!fmt.success) console.error(new TextDecoder().decode(fmt.stderr));
console.log(`${DOC} and ${Object.keys(charts).length} chart(s) in ${CHARTS}/ from ${source}`);
