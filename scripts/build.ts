/**
 * `deno task build`: the npm package in dist/ — ESM JavaScript (esbuild), and one public .d.ts
 * per entry point rolled up from tsc's declarations and checked against the API report
 * (lib/api_surface.ts). `--update-api` (`deno task api:update`) rewrites the report instead.
 */
import { rollUpDeclarations } from "./lib/api_surface.ts";
import { buildPackage, stopBundler } from "./lib/bundles.ts";
import { run } from "./lib/process.ts";

export async function build(options: { updateApi?: boolean } = {}): Promise<void> {
  await Deno.remove("dist", { recursive: true }).catch(() => {});
  await Deno.remove("build/types", { recursive: true }).catch(() => {});
  await buildPackage();
  await stopBundler();
  await run("./node_modules/.bin/tsc", ["-p", "scripts/api/tsconfig.declarations.json"]);
  await rollUpDeclarations(options.updateApi === true);
}

if (import.meta.main) await build({ updateApi: Deno.args.includes("--update-api") });
