/**
 * The page's side of the SQLite worker: one message per workload run (the worker runs setup,
 * warm-up, every sample and teardown itself and times them there), progress messages back.
 */
import type { Progress, SideResult } from "../../bench/lib/measure.ts";
import { NotApplicable, type Plan, type Variant } from "../../bench/lib/types.ts";
import type { OpenSteps, WorkerSqlite } from "../../bench/lib/sql.ts";

export type WorkerRequest =
  | { id: number; type: "load" }
  | { id: number; type: "init"; pool?: string; contender?: string }
  | { id: number; type: "run"; contender: string; workload: string; variant: Variant; plan: Plan }
  | { id: number; type: "open"; name: string; steps: OpenSteps }
  | { id: number; type: "stop"; remove?: string };

export type WorkerReply =
  | { id: number; type: "ready"; version: string }
  | { id: number; type: "done" }
  | { id: number; type: "progress"; phase: string; i: number; n: number }
  | { id: number; type: "result"; result: SideResult }
  | { id: number; type: "error"; name: string; message: string };

export class SqliteWorker {
  readonly #worker = new Worker("/build/bench/sqlite_worker.js", { type: "module" });
  readonly #pending = new Map<
    number,
    { progress?: Progress; resolve(reply: WorkerReply): void }
  >();
  #nextId = 0;

  constructor() {
    this.#worker.onmessage = ({ data }: MessageEvent<WorkerReply>) => {
      const pending = this.#pending.get(data.id);
      if (!pending) return;
      if (data.type === "progress") {
        pending.progress?.(data.phase, data.i, data.n);
        return;
      }
      this.#pending.delete(data.id);
      pending.resolve(data);
    };
  }

  /**
   * Loads SQLite WASM and installs the opfs-sahpool VFS on the pool `pool` (by default the
   * bench's, emptied), its `open`s with the pragmas of the profile `contender` (by default
   * sqlite-wasm-opfs); resolves with SQLite's version.
   */
  async init(pool?: string, contender?: string): Promise<string> {
    const reply = await this.#send({ id: this.#nextId++, type: "init", pool, contender });
    if (reply.type !== "ready") throw failure(reply);
    return reply.version;
  }

  /** Loads SQLite WASM only (no pool yet); resolves with SQLite's version. */
  async load(): Promise<string> {
    const reply = await this.#send({ id: this.#nextId++, type: "load" });
    if (reply.type !== "ready") throw failure(reply);
    return reply.version;
  }

  async #expectDone(request: WorkerRequest): Promise<void> {
    const reply = await this.#send(request);
    if (reply.type !== "done") throw failure(reply);
  }

  /** Opens the database `name` and takes the steps; it stays open until `stop`. */
  open(name: string, steps: OpenSteps): Promise<void> {
    return this.#expectDone({ id: this.#nextId++, type: "open", name, steps });
  }

  /** Ends the worker once it has closed its database and let go of its pool. */
  async stop(remove?: string): Promise<void> {
    await this.#expectDone({ id: this.#nextId++, type: "stop", remove });
    this.#worker.terminate();
  }

  async run(contender: string, workload: string, variant: Variant, plan: Plan, progress: Progress) {
    const reply = await this.#send(
      { id: this.#nextId++, type: "run", contender, workload, variant, plan },
      progress,
    );
    if (reply.type !== "result") throw failure(reply);
    return reply.result;
  }

  #send(request: WorkerRequest, progress?: Progress): Promise<WorkerReply> {
    return new Promise((resolve) => {
      this.#pending.set(request.id, { progress, resolve });
      this.#worker.postMessage(request);
    });
  }
}

/**
 * A new SQLite worker with its WASM loaded, for one sample of Chromium's W01/W02, opening with
 * the pragmas of the profile `contender`.
 */
export async function startSqliteWorker(contender: string): Promise<WorkerSqlite> {
  const worker = new SqliteWorker();
  await worker.load();
  return {
    install: async (pool) => void await worker.init(pool, contender),
    open: (name, steps) => worker.open(name, steps),
    stop: (remove) => worker.stop(remove),
  };
}

function failure(reply: WorkerReply): Error {
  if (reply.type !== "error") return new Error(`unexpected worker reply ${reply.type}`);
  return reply.name === "NotApplicable"
    ? new NotApplicable(reply.message)
    : new Error(`in the SQLite worker: ${reply.message}`);
}
