/**
 * Serves the todo example (examples/todo-web/app.tsx) with a sync server for it:
 *
 *   deno task todo [--port 8080] [--sync-port 8787] [--data .todo-web-sync]
 *
 * bundles the app with esbuild into build/todo-web/, starts a sync server on files in the data
 * directory (open to every session: an example, not a deployment), serves the page, prints its
 * URL, and runs until Ctrl-C. Open the URL in several tabs and in another browser profile: every
 * copy of the app shows the same lists. test/browser (scripts/lib/browser_example_pages.ts)
 * drives it in two Chromium profiles through startTodoApp.
 */
import * as esbuild from "esbuild";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { createSyncServer, type SyncServer } from "../../src/server.ts";
import { BROWSER_BUNDLE, INLINE_OPFS_WORKER } from "../../scripts/lib/bundles.ts";
import { serveStatic, type StaticServer } from "../../scripts/lib/static_server.ts";

const OUT = "build/todo-web";

export interface TodoAppOptions {
  /** The page's port (0: any free one). */
  port?: number;
  /** The sync server's port (0: any free one). */
  syncPort?: number;
  /** Where the sync server keeps what the apps push. */
  data: string;
}

export interface TodoApp {
  /** The page to open. */
  readonly url: string;
  /** The sync server the page syncs through. */
  readonly syncUrl: string;
  /** Stops the sync server only (the apps go offline); `startSync` brings it back on its port. */
  stopSync(): Promise<void>;
  startSync(): Promise<void>;
  close(): Promise<void>;
}

/** Bundles the app, starts its sync server and serves the page. */
export async function startTodoApp(options: TodoAppOptions): Promise<TodoApp> {
  let server: SyncServer | undefined = await createSyncServer({
    dir: options.data,
    port: options.syncPort ?? 8787,
    open: true,
  });
  const syncPort = server.port;
  let page: StaticServer | undefined;
  try {
    await bundle(server.url);
    page = await serveStatic(OUT, options.port ?? 8080);
  } catch (err) {
    await server.close();
    throw err;
  }
  return {
    url: `${page.origin}/`,
    syncUrl: server.url,
    async stopSync() {
      await server?.close();
      server = undefined;
    },
    async startSync() {
      server ??= await createSyncServer({ dir: options.data, port: syncPort, open: true });
    },
    async close() {
      await server?.close();
      await page?.close();
    },
  };
}

async function bundle(syncUrl: string): Promise<void> {
  await mkdir(OUT, { recursive: true });
  await esbuild.build({
    ...BROWSER_BUNDLE,
    entryPoints: { app: "examples/todo-web/app.tsx" },
    outdir: OUT,
    jsx: "automatic",
    minify: true,
    sourcemap: true,
    // The sources, as the tests' bundles take them (an app of the npm package imports dist/).
    alias: { cairndb: "./src/mod.ts", "cairndb/react": "./src/react.ts" },
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: [INLINE_OPFS_WORKER],
  });
  const html = await readFile("examples/todo-web/index.html", "utf8");
  await writeFile(`${OUT}/index.html`, html.replace("__SYNC_URL__", syncUrl));
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8080" },
      "sync-port": { type: "string", default: "8787" },
      data: { type: "string", default: ".todo-web-sync" },
    },
  });
  const app = await startTodoApp({
    port: Number(values.port),
    syncPort: Number(values["sync-port"]),
    data: values.data,
  });
  console.log(`Todo app: ${app.url}  (sync server ${app.syncUrl}, data in ${values.data}/)`);
  console.log("Open it in several tabs, and in a second browser profile; Ctrl-C stops it.");
  const stop = async () => {
    await app.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
