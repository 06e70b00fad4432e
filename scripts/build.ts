/** `deno task build`: the npm package in dist/ — ESM JavaScript (esbuild) and .d.ts (tsc). */
import { buildPackage, stopBundler } from "./lib/bundles.ts";
import { run } from "./lib/process.ts";

export async function build(): Promise<void> {
  await Deno.remove("dist", { recursive: true }).catch(() => {});
  await buildPackage();
  await stopBundler();
  await run("./node_modules/.bin/tsc", ["-p", "tsconfig.json"]);
}

if (import.meta.main) await build();
