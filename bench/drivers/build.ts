/**
 * esbuild bundles for the runtimes that do not run the TypeScript directly: the Node entry
 * (build/bench/server.mjs) and the browser page with its SQLite worker and Cairn's OPFS storage
 * worker (build/bench/).
 */
import * as esbuild from "esbuild";

const OUT = "build/bench";

/** The browser loads SQLite WASM as shipped (it finds its .wasm next to itself). */
const SQLITE_WASM_URL = "/node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs";

export async function buildNodeBench(): Promise<string> {
  const outfile = `${OUT}/server.mjs`;
  await esbuild.build({
    entryPoints: ["bench/entry/server.ts"],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    packages: "external",
    sourcemap: "inline",
    logLevel: "warning",
  });
  return outfile;
}

/** Cairn's OPFS storage worker: the page bundle finds it next to itself (./opfs_worker.js). */
const CAIRN_OPFS_WORKER = "src/storage/backends/opfs_worker.ts";

export async function buildBrowserBench(): Promise<void> {
  const hasOpfsWorker = await Deno.stat(CAIRN_OPFS_WORKER).then(() => true, () => false);
  await esbuild.build({
    entryPoints: {
      page: "web/bench/page.ts",
      sqlite_worker: "web/bench/sqlite_worker.ts",
      ...(hasOpfsWorker ? { opfs_worker: CAIRN_OPFS_WORKER } : {}),
    },
    outdir: OUT,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    sourcemap: "inline",
    logLevel: "warning",
    plugins: [{
      name: "sqlite-wasm-as-shipped",
      setup(build) {
        build.onResolve(
          { filter: /^@sqlite\.org\/sqlite-wasm$/ },
          () => ({ path: SQLITE_WASM_URL, external: true }),
        );
      },
    }],
  });
}

export function stopBuilds(): Promise<void> {
  return esbuild.stop();
}
