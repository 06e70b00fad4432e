/**
 * The bench in one server runtime: Deno runs this file as it is, Node runs it bundled by
 * esbuild (build/bench/server.mjs). Settings come as one JSON argument; every message goes to
 * stdout as one line `@@bench <json>` for the runner (bench/drivers/server.ts).
 */
import process from "node:process";
import { getHeapStatistics } from "node:v8";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NATIVE_IDS, nativeEngine, nativeSqliteVersion } from "../contenders/sqlite_native.ts";
import { wasmMemoryEngine, wasmSqliteVersion } from "../contenders/sqlite_wasm.ts";
import { runSide } from "../lib/measure.ts";
import type { SqlCtx, SqlEngine } from "../lib/sql.ts";
import { type Platform, runSuite } from "./suite.ts";
import type { Message, Settings } from "../lib/types.ts";
import { MESSAGE_PREFIX } from "./prefix.ts";
import { gc, localPlatform } from "./local_platform.ts";
import { processSyncHost } from "../sync/processes.ts";
import { freshRunner } from "../fresh/spawn.ts";

const isDeno = "Deno" in globalThis;

function send(message: Message): void {
  process.stdout.write(`${MESSAGE_PREFIX}${JSON.stringify(message)}\n`);
}

async function main(): Promise<void> {
  const settings: Settings = JSON.parse(process.argv[process.argv.length - 1]);
  const root = mkdtempSync(join(tmpdir(), "cairn-bench-"));
  const engines = new Map<string, SqlEngine>();
  for (const id of NATIVE_IDS) {
    mkdirSync(join(root, id));
    engines.set(id, nativeEngine(id, join(root, id)));
  }
  engines.set("sqlite-wasm-mem", await wasmMemoryEngine());
  const syncHost = processSyncHost(isDeno ? "deno" : "node");
  const freshProcess = freshRunner(isDeno ? "deno" : "node");
  const sqlCtx = (engine: SqlEngine): SqlCtx => ({
    engine,
    inFreshProcess: NATIVE_IDS.includes(engine.id)
      ? (task, name) =>
        freshProcess({ side: "sqlite", task, engine: engine.id, dir: join(root, engine.id), name })
      : undefined,
    rssBytes: () => process.memoryUsage.rss(),
    gc,
  });
  const platform: Platform = {
    runtime: isDeno ? "deno" : "node",
    version: isDeno
      ? (globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno
      : process.versions.node,
    engine: `V8 ${process.versions.v8}`,
    heapLimit: getHeapStatistics().heap_size_limit,
    sqliteVersions: async () => ({
      native: nativeSqliteVersion(),
      wasm: await wasmSqliteVersion(),
    }),
    ...localPlatform(root),
    syncHost,
    freshProcess,
    runSqlite(contender, workload, variant, plan, progress) {
      const engine = engines.get(contender);
      if (!engine) throw new Error(`no SQLite contender ${contender} here`);
      return runSide(workload.sqlite, sqlCtx(engine), variant, plan, progress);
    },
  };
  try {
    await runSuite(settings, platform, send);
  } catch (err) {
    send({ type: "fatal", error: String((err as Error)?.stack ?? err) });
    process.exitCode = 1;
  } finally {
    await syncHost.stopAll();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
