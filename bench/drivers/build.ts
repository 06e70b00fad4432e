/**
 * esbuild bundles for the runtimes that do not run the TypeScript directly: the Node entry
 * (build/bench/server.mjs) with the sync rows' client process (build/bench/sync_peer.mjs) and the
 * fresh process of rows measured in one (build/bench/fresh_probe.mjs), bench/profile.ts for Node
 * (build/bench/profile.mjs), and
 * the browser page with its SQLite worker and Cairn's OPFS storage worker (build/bench/).
 */
import * as esbuild from "esbuild";
import {
  AUTOMERGE_IN_BROWSER,
  BROWSER_BUNDLE,
  NODE_BUNDLE,
  OPFS_WORKER,
} from "../../scripts/lib/bundles.ts";

const OUT = "build/bench";

/** The browser loads SQLite WASM as shipped (it finds its .wasm next to itself). */
const SQLITE_WASM_URL = "/node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs";

export async function buildNodeBench(): Promise<string> {
  await esbuild.build({
    ...NODE_BUNDLE,
    // The sync rows' client process (bench/sync/processes.ts starts it from this name) and the
    // fresh process of the rows measured in one (bench/fresh/spawn.ts).
    entryPoints: {
      server: "bench/entry/server.ts",
      sync_peer: "bench/sync/peer_process.ts",
      fresh_probe: "bench/fresh/probe.ts",
      // Not a part of the run: bench/profile.ts re-runs itself on Node from it.
      profile: "bench/profile.ts",
    },
    outdir: OUT,
    outExtension: { ".js": ".mjs" },
  });
  return `${OUT}/server.mjs`;
}

/** The page, its SQLite worker and Cairn's OPFS storage worker, which the page bundle finds next
 *  to itself (./opfs_worker.js). */
export async function buildBrowserBench(): Promise<void> {
  await esbuild.build({
    ...BROWSER_BUNDLE,
    entryPoints: {
      page: "web/bench/page.ts",
      sqlite_worker: "web/bench/sqlite_worker.ts",
      opfs_worker: OPFS_WORKER,
    },
    outdir: OUT,
    sourcemap: "inline",
    plugins: [AUTOMERGE_IN_BROWSER, {
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
