/**
 * `deno task bench:serve`: builds the bench page and serves the project on 127.0.0.1 (with the
 * COOP/COEP headers SQLite WASM on OPFS needs). Open the printed address and press Run.
 */
import { serveStatic } from "../scripts/lib/static_server.ts";
import { benchPageUrl } from "./drivers/browser.ts";
import { buildBrowserBench } from "./drivers/build.ts";
import { stopBundler } from "../scripts/lib/bundles.ts";

const port = Number(Deno.args.find((a) => a.startsWith("--port="))?.slice(7) ?? 8787);
await buildBrowserBench();
await stopBundler();
const server = await serveStatic(".", port);
console.log(`bench page: ${benchPageUrl(server.origin)}   (Ctrl+C to stop)`);
