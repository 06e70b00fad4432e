/**
 * `deno task bundle:parts`: what parts of Cairn cost the open + get app of scripts/lib/bundle_size.ts
 * at start, min+gz: the app bundled from the sources with those parts' modules left out (stubbed).
 * The figures behind docs/browser.md's table of what a features-by-import API would buy.
 */
import * as esbuild from "esbuild";
import { BUNDLE_APPS, bundleApp } from "./lib/bundle_size.ts";

const QUERY = "src/query/";
const TEXT = "src/core/text/|src/core/merge/text\\.ts|src/repo/text_fields\\.ts|" +
  "src/storage/checkpoint_texts\\.ts";
const TABS = "src/tabs/";
const JSONL = "src/storage/jsonl_log\\.ts";

const PARTS: [string, string | undefined][] = [
  ["nothing", undefined],
  ["live queries and indexes (`query/`)", QUERY],
  ["text editing (its CRDT, merges, checkpoints)", TEXT],
  ["both", `${QUERY}|${TEXT}`],
  ["both, and the tabs", `${QUERY}|${TEXT}|${TABS}`],
  ["both, the tabs, and the JSONL log format", `${QUERY}|${TEXT}|${TABS}|${JSONL}`],
];

const app = BUNDLE_APPS.find(({ name }) => name === "open + get")!;
const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
console.log(`${app.name}, at start (esbuild ${esbuild.version})\n`);
console.log("| left out | minified | min+gz |\n| --- | --- | --- |");
try {
  for (const [name, pattern] of PARTS) {
    const { start } = await bundleApp(
      app.source,
      "sources",
      pattern ? new RegExp(pattern) : undefined,
    );
    console.log(`| ${name} | ${kb(start.minified)} | ${kb(start.gzipped)} |`);
  }
} finally {
  await esbuild.stop();
}
