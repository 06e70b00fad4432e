/**
 * `deno task bench:serve`: builds the bench page and serves the project on 127.0.0.1 (with the
 * COOP/COEP headers SQLite WASM on OPFS needs). The printed address opens the page with the
 * newest committed run of every runtime loaded, so it shows charts before anything runs; press
 * Run to put a run of this browser beside it.
 */
import { serveStatic } from "../scripts/lib/static_server.ts";
import { benchPageUrl } from "./drivers/browser.ts";
import { buildBrowserBench } from "./drivers/build.ts";
import { stopBundler } from "../scripts/lib/bundles.ts";
import { newestCommittedRun } from "./lib/results_dir.ts";

const port = Number(Deno.args.find((a) => a.startsWith("--port="))?.slice(7) ?? 8787);
await buildBrowserBench();
await stopBundler();
const server = await serveStatic(".", port);
const url = new URL(benchPageUrl(server.origin));
const newest = await newestCommittedRun();
if (newest) url.searchParams.set("load", newest);
console.log(`bench page: ${url.href}   (Ctrl+C to stop)`);
