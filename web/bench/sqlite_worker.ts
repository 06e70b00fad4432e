/**
 * The dedicated worker that owns SQLite WASM on OPFS (opfs-sahpool). It receives one message per
 * workload run and runs the workload's SQLite side here, with the same loop as everywhere else.
 */
/// <reference lib="webworker" />
import { wasmOpfsEngine, wasmSqliteVersion } from "../../bench/contenders/sqlite_wasm.ts";
import { runSide } from "../../bench/lib/measure.ts";
import {
  openWithSteps,
  type SqlCtx,
  type SqlDatabase,
  type SqlEngine,
} from "../../bench/lib/sql.ts";
import { sqlWorkloadById } from "../../bench/workloads/versus_sqlite.ts";
import type { WorkerReply, WorkerRequest } from "./worker_client.ts";

/** The pool `init` named (by default the bench's), and the profile its `open`s use. */
let pool: string | undefined;
let profile: string | undefined;
/** An engine per SQLite contender (pragma profile), all on the one pool. */
const engines = new Map<string, Promise<SqlEngine & { stop(): void }>>();

function engineFor(contender = "sqlite-wasm-opfs"): Promise<SqlEngine & { stop(): void }> {
  let engine = engines.get(contender);
  if (!engine) {
    engine = wasmOpfsEngine(pool, contender);
    engines.set(contender, engine);
  }
  return engine;
}
/** The database a page's `open` request left open (Chromium's W01/W02), closed by `stop`. */
let opened: SqlDatabase | undefined;

function reply(message: WorkerReply): void {
  (self as unknown as Worker).postMessage(message);
}

self.onmessage = async ({ data }: MessageEvent<WorkerRequest>) => {
  try {
    if (data.type === "load") {
      reply({ id: data.id, type: "ready", version: await wasmSqliteVersion() });
      return;
    }
    if (data.type === "init") {
      pool = data.pool;
      profile = data.contender;
    }
    const engine = engineFor(data.type === "run" ? data.contender : profile);
    const ctx: SqlCtx = { engine: await engine, rssBytes: () => undefined, gc() {} };
    switch (data.type) {
      case "init":
        reply({ id: data.id, type: "ready", version: await wasmSqliteVersion() });
        return;
      case "open":
        opened = openWithSteps(ctx.engine, data.name, data.steps);
        reply({ id: data.id, type: "done" });
        return;
      case "stop":
        opened?.close();
        if (data.remove) ctx.engine.remove(data.remove);
        (await engine).stop();
        reply({ id: data.id, type: "done" });
        return;
    }
    const result = await runSide(
      sqlWorkloadById(data.workload).sqlite,
      ctx,
      data.variant,
      data.plan,
      (phase, i, n) => reply({ id: data.id, type: "progress", phase, i, n }),
    );
    reply({ id: data.id, type: "result", result });
  } catch (err) {
    const error = err as Error;
    reply({
      id: data.id,
      type: "error",
      name: error?.name ?? "Error",
      message: error?.name === "NotApplicable" ? error.message : String(error?.stack ?? err),
    });
  }
};
