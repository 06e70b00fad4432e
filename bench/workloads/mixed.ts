/** W19: a mixed workload, 80 % point reads and 20 % updates, for a fixed time. */
import {
  type CairnCtx,
  filledRepo,
  ItemSchema,
  type RepositoryHandle,
} from "../contenders/cairn.ts";
import { itemKey, pick, sink } from "../lib/items.ts";
import {
  freshDatabase,
  SELECT_TITLE,
  type SqlCtx,
  type SqlDatabase,
  type SqlStatement,
  uniqueName,
  UPDATE_COUNT,
} from "../lib/sql.ts";
import { now } from "../lib/timer.ts";
import { type Plan, side } from "../lib/types.ts";
import { big, CAIRN_MAP, itemsLabel, SqlBenchWorkload, SQLITE_PK } from "./common.ts";

/** Every fifth operation is an update. */
const isUpdate = (op: number) => op % 5 === 4;

interface Mix {
  keys: Uint32Array;
  op: number;
  sliceMs: number;
  latencies: number[];
  /** An operation; returns a promise only when it must be awaited (Cairn's flush). */
  run(op: number, key: string): unknown;
}

function mix(items: number, plan: Plan, run: Mix["run"]): Mix {
  return {
    keys: pick(items, 1 << 16, 0x2545f491),
    op: 0,
    sliceMs: plan.sliceMs,
    latencies: [],
    run,
  };
}

/** One time slice: operations until `sliceMs` has passed; returns operations per second. */
async function slice(mix: Mix, record: boolean): Promise<number> {
  const start = now();
  let ops = 0;
  let t = start;
  while (t - start < mix.sliceMs) {
    const op = mix.op++;
    const pending = mix.run(op, itemKey(mix.keys[op & 0xffff]));
    if (pending) await pending;
    const end = now();
    if (record) mix.latencies.push((end - t) * 1000);
    t = end;
    ops++;
  }
  return ops / ((t - start) / 1000);
}

const mixed: SqlBenchWorkload = {
  id: "W19.v1",
  title: "Mixed 80 % reads / 20 % updates",
  family: "mixed",
  unit: "ops/s",
  better: "higher",
  scale: "fixed",
  variants: (quick) => [{ label: itemsLabel(big(quick)), items: big(quick) }],
  timed: {
    cairn: "For a fixed time per sample (1 s; 150 ms quick): operations over a fixed " +
      'pseudo-random key sequence, four reads `repo.get(key).get("title")` then one update ' +
      '`repo.get(key).set("count", …)` + `await repo.flush()`; throughput, and each operation\'s ' +
      "latency.",
    sqlite:
      "Same sequence: prepared `SELECT title … WHERE id = ?` for reads, autocommit prepared " +
      "`UPDATE items SET count = ? WHERE id = ?` for updates.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Every update is finished before the next operation on both sides.",
  cairn: side({
    async setup(ctx: CairnCtx, variant, plan) {
      const { db, repo } = await filledRepo(ctx, variant.items);
      const state = mix(variant.items, plan, (op, key) => {
        const item = repo.get(key, ItemSchema)!;
        if (!isUpdate(op)) {
          sink.value += item.get("title").length;
          return;
        }
        item.set("count", op);
        return repo.flush();
      });
      return { ...state, close: () => db.close(), repo };
    },
    sample: (state: Mix & { repo: RepositoryHandle }, index) => slice(state, index > 0),
    latency: (state: Mix) => state.latencies,
    teardown: (state: Mix & { close(): Promise<void> }) => state.close(),
  }),
  sqlite: side({
    setup(ctx: SqlCtx, variant, plan) {
      const name = uniqueName("w19");
      const db = freshDatabase(ctx.engine, name, variant.items);
      const select = db.prepare(SELECT_TITLE);
      const update = db.prepare(UPDATE_COUNT);
      const state = mix(variant.items, plan, (op, key) => {
        if (isUpdate(op)) update.run(op, key);
        else sink.value += String(select.get(key)!.title).length;
      });
      return { ...state, ctx, db, name, select, update };
    },
    sample: (state: Mix, index) => slice(state, index > 0),
    latency: (state: Mix) => state.latencies,
    teardown(
      state: Mix & {
        ctx: SqlCtx;
        db: SqlDatabase;
        name: string;
        select: SqlStatement;
        update: SqlStatement;
      },
    ) {
      state.select.finalize();
      state.update.finalize();
      state.db.close();
      state.ctx.engine.remove(state.name);
    },
  }),
};

export const MIXED = [mixed];
