/** W04–W08: one item at a time, and small batches of 100. */
import {
  type CairnCtx,
  filledRepo,
  ItemSchema,
  type RepositoryHandle,
} from "../contenders/cairn.ts";
import { itemKey, itemTitle, itemValues, pick, sink, tagsJson } from "../lib/items.ts";
import {
  freshDatabase,
  INSERT,
  SELECT_TITLE,
  type SqlCtx,
  type SqlDatabase,
  type SqlStatement,
  uniqueName,
  UPDATE_COUNT,
} from "../lib/sql.ts";
import { now, perOpAwaited, perOpLoop, perOpSync } from "../lib/timer.ts";
import { goatdbContext } from "../lib/goatdb_published.ts";
import { side, type Variant } from "../lib/types.ts";
import { big, CAIRN_MAP, itemsLabel, minSampleMs, SqlBenchWorkload, SQLITE_PK } from "./common.ts";

const BATCH = 100;

interface State {
  variant: Variant;
  /** Next new item number. */
  next: number;
  /** A fixed pseudo-random sequence of existing item numbers. */
  keys: Uint32Array;
  /** Position in `keys`. */
  at: number;
}

interface CairnState extends State {
  repo: RepositoryHandle;
  close(): Promise<void>;
}

interface SqlState extends State {
  ctx: SqlCtx;
  db: SqlDatabase;
  name: string;
  statement: SqlStatement;
}

function baseState(variant: Variant): State {
  return { variant, next: variant.items, keys: pick(Math.max(variant.items, 1), 1 << 16), at: 0 };
}

function nextKey(state: State): string {
  return itemKey(state.keys[state.at++ & 0xffff]);
}

async function cairnSetup(ctx: CairnCtx, variant: Variant): Promise<CairnState> {
  const { db, repo } = await filledRepo(ctx, variant.items);
  return { ...baseState(variant), repo, close: () => db.close() };
}

function sqlSetup(ctx: SqlCtx, variant: Variant, sql: string): SqlState {
  const name = uniqueName("items");
  const db = freshDatabase(ctx.engine, name, variant.items);
  return { ...baseState(variant), ctx, db, name, statement: db.prepare(sql) };
}

const cairnTeardown = (state: CairnState) => state.close();

function sqlTeardown(state: SqlState): void {
  state.statement.finalize();
  state.db.close();
  state.ctx.engine.remove(state.name);
}

function readTitle(repo: RepositoryHandle, key: string): void {
  sink.value += repo.get(key, ItemSchema)!.get("title").length;
}

function selectTitle(statement: SqlStatement, key: string): void {
  sink.value += String(statement.get(key)!.title).length;
}

/** Creates the next item number's item (not yet flushed). */
function createNext(state: CairnState): void {
  const n = state.next++;
  state.repo.create(ItemSchema, itemValues(n), { key: itemKey(n) });
}

function insertNext(state: SqlState): void {
  const n = state.next++;
  state.statement.run(itemKey(n), itemTitle(n), n, tagsJson(n));
}

/** µs of one SQLite transaction making `BATCH` calls of `op`. */
function sqlBatchUs(state: SqlState, op: () => void): number {
  const start = now();
  state.db.exec("BEGIN");
  for (let i = 0; i < BATCH; i++) op();
  state.db.exec("COMMIT");
  return (now() - start) * 1000;
}

/** Individual latencies (µs) of `ops` calls of `op`. */
async function latencies(ops: number, op: () => unknown): Promise<number[]> {
  const out = new Array<number>(ops);
  for (let i = 0; i < ops; i++) {
    const start = now();
    await op();
    out[i] = (now() - start) * 1000;
  }
  return out;
}

const createItem: SqlBenchWorkload = {
  id: "W04.v1",
  context: goatdbContext("W04"),
  title: "Create item",
  family: "writes",
  unit: "µs/op",
  better: "lower",
  scale: "us",
  variants: (quick) => [{ label: "one at a time", items: 0, ops: quick ? 20 : 200 }],
  timed: {
    cairn: "`repo.create(Item, values, { key })` then `await repo.flush()` for each item: the " +
      "commit is sealed into its own block (signed unless trusted).",
    sqlite: "One autocommit `INSERT` through a prepared statement (its own transaction) per item.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Each write is finished before the next starts on both sides: Cairn's block is " +
    "sealed (and, with storage, appended), SQLite's transaction committed.",
  cairn: side({
    setup: cairnSetup,
    sample: (state: CairnState) =>
      perOpAwaited(state.variant.ops!, () => {
        createNext(state);
        return state.repo.flush();
      }),
    teardown: cairnTeardown,
  }),
  sqlite: side({
    setup: (ctx, variant) => sqlSetup(ctx, variant, INSERT),
    sample: (state: SqlState) => perOpSync(state.variant.ops!, () => insertNext(state)),
    teardown: sqlTeardown,
  }),
};

const readItem: SqlBenchWorkload = {
  id: "W05.v1",
  context: goatdbContext("W05"),
  title: "Read item (one field)",
  family: "reads",
  unit: "µs/op",
  better: "lower",
  scale: "us",
  variants: (
    quick,
  ) => [{ label: itemsLabel(big(quick)), items: big(quick), minMs: minSampleMs(quick) }],
  timed: {
    cairn: '`repo.get(key).get("title")` for keys from a fixed pseudo-random sequence, ' +
      "repeated until the sample has run ≥ 10 ms (2 ms quick); per read. Latency table: each " +
      "read timed alone.",
    sqlite: "`SELECT title FROM items WHERE id = ?` through one prepared statement, same keys " +
      "and loop; per read.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Same keys in the same order on both sides; both return the title string. SQLite " +
    "reads in autocommit mode (one implicit read transaction per SELECT).",
  cairn: side({
    setup: cairnSetup,
    sample: (state: CairnState) =>
      perOpLoop(state.variant.minMs as number, () => readTitle(state.repo, nextKey(state))),
    latency: (state: CairnState, ops) =>
      latencies(ops, () => readTitle(state.repo, nextKey(state))),
    teardown: cairnTeardown,
  }),
  sqlite: side({
    setup: (ctx, variant) => sqlSetup(ctx, variant, SELECT_TITLE),
    sample: (state: SqlState) =>
      perOpLoop(state.variant.minMs as number, () => selectTitle(state.statement, nextKey(state))),
    latency: (state: SqlState, ops) =>
      latencies(ops, () => selectTitle(state.statement, nextKey(state))),
    teardown: sqlTeardown,
  }),
};

const updateItem: SqlBenchWorkload = {
  id: "W06.v1",
  context: goatdbContext("W06"),
  title: "Update item",
  family: "writes",
  unit: "µs/op",
  better: "lower",
  scale: "us",
  variants: (
    quick,
  ) => [{ label: itemsLabel(big(quick)), items: big(quick), ops: quick ? 20 : 200 }],
  timed: {
    cairn: '`repo.get(key).set("count", n)` then `await repo.flush()` for each update (one ' +
      "block per update), keys from a fixed pseudo-random sequence; per update.",
    sqlite: "One autocommit `UPDATE items SET count = ? WHERE id = ?` through a prepared " +
      "statement per update, same keys.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Each update is finished before the next starts on both sides.",
  cairn: side({
    setup: cairnSetup,
    sample: (state: CairnState) =>
      perOpAwaited(state.variant.ops!, () => {
        state.repo.get(nextKey(state), ItemSchema)!.set("count", state.next++);
        return state.repo.flush();
      }),
    teardown: cairnTeardown,
  }),
  sqlite: side({
    setup: (ctx, variant) => sqlSetup(ctx, variant, UPDATE_COUNT),
    sample: (state: SqlState) =>
      perOpSync(state.variant.ops!, () => state.statement.run(state.next++, nextKey(state))),
    teardown: sqlTeardown,
  }),
};

const bulkCreate: SqlBenchWorkload = {
  id: "W07.v1",
  context: goatdbContext("W07"),
  title: "Bulk create 100 items",
  family: "writes",
  unit: "µs",
  better: "lower",
  scale: "us",
  variants: () => [{ label: `${BATCH} items`, items: 0 }],
  timed: {
    cairn: "100 × `repo.create(Item, values, { key })`, then one `await repo.flush()` (one " +
      "block); per batch.",
    sqlite: "`BEGIN`, 100 × prepared `INSERT`, `COMMIT`; per batch.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "One unit of durability per batch on both sides: one block, one transaction.",
  cairn: side({
    setup: cairnSetup,
    async sample(state: CairnState) {
      const start = now();
      for (let i = 0; i < BATCH; i++) createNext(state);
      await state.repo.flush();
      return (now() - start) * 1000;
    },
    teardown: cairnTeardown,
  }),
  sqlite: side({
    setup: (ctx, variant) => sqlSetup(ctx, variant, INSERT),
    sample: (state: SqlState) => sqlBatchUs(state, () => insertNext(state)),
    teardown: sqlTeardown,
  }),
};

const bulkRead: SqlBenchWorkload = {
  id: "W08.v1",
  context: goatdbContext("W08"),
  title: "Bulk read 100 items",
  family: "reads",
  unit: "µs",
  better: "lower",
  scale: "us",
  variants: (quick) => [{ label: itemsLabel(big(quick)), items: big(quick) }],
  timed: {
    cairn: '100 × `repo.get(key).get("title")`, keys from a fixed pseudo-random sequence; ' +
      "per batch.",
    sqlite: "`BEGIN`, 100 × prepared `SELECT title FROM items WHERE id = ?`, `COMMIT` (one " +
      "read transaction); per batch.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Same keys on both sides; both read a consistent snapshot.",
  cairn: side({
    setup: cairnSetup,
    sample(state: CairnState) {
      const start = now();
      for (let i = 0; i < BATCH; i++) readTitle(state.repo, nextKey(state));
      return (now() - start) * 1000;
    },
    teardown: cairnTeardown,
  }),
  sqlite: side({
    setup: (ctx, variant) => sqlSetup(ctx, variant, SELECT_TITLE),
    sample: (state: SqlState) =>
      sqlBatchUs(state, () => selectTitle(state.statement, nextKey(state))),
    teardown: sqlTeardown,
  }),
};

export const POINT = [createItem, readItem, updateItem, bulkCreate, bulkRead];
