/** W09–W11, W17, W18: whole-database work — writing and reading every item, count, keys. */
import {
  type CairnCtx,
  filledRepo,
  fillRepo,
  ItemSchema,
  openRepo,
  REPO_PATH,
  type RepositoryHandle,
} from "../contenders/cairn.ts";
import { sink } from "../lib/items.ts";
import {
  fillItems,
  freshDatabase,
  type SqlCtx,
  type SqlDatabase,
  type SqlStatement,
  uniqueName,
} from "../lib/sql.ts";
import { goatdbContext } from "../lib/goatdb_published.ts";
import { now, perOpLoop } from "../lib/timer.ts";
import { side, type Variant } from "../lib/types.ts";
import {
  allItems,
  CAIRN_MAP,
  minSampleMs,
  requirePersistent,
  SqlBenchWorkload,
  SQLITE_PK,
} from "./common.ts";

const SELECT_ALL = "SELECT id, title FROM items";

function readAllCairn(repo: RepositoryHandle): void {
  for (const key of repo.keys()) sink.value += repo.get(key, ItemSchema)!.get("title").length;
}

/** Rows as arrays (no object per row): [id, title]. */
function readAllSql(statement: SqlStatement): void {
  for (const row of statement.values()) sink.value += String(row[1]).length;
}

/**
 * What the SQLite sides of W10, W11 and W18 read rows as, and what differs from Cairn's side.
 */
const ROWS_AS_ARRAYS = "SQLite's rows come as arrays of column values (node:sqlite's " +
  "`setReturnArrays(true)`, SQLite WASM's `get([])`), its quicker way to read many rows; Cairn " +
  "hands back a small item handle per key (its only way to read an item), which reads the " +
  "value it is asked for.";

interface CairnFilled {
  repo: RepositoryHandle;
  close(): Promise<void>;
  minMs: number;
}

async function cairnFilled(ctx: CairnCtx, variant: Variant): Promise<CairnFilled> {
  const { db, repo } = await filledRepo(ctx, variant.items);
  return { repo, close: () => db.close(), minMs: (variant.minMs as number) ?? 0 };
}

interface SqlFilled {
  ctx: SqlCtx;
  db: SqlDatabase;
  name: string;
  statement: SqlStatement;
}

function sqlFilled(ctx: SqlCtx, variant: Variant, sql: string): SqlFilled {
  const name = uniqueName("bulk");
  const db = freshDatabase(ctx.engine, name, variant.items);
  return { ctx, db, name, statement: db.prepare(sql) };
}

function sqlDone(state: SqlFilled): void {
  state.statement.finalize();
  state.db.close();
  state.ctx.engine.remove(state.name);
}

/**
 * "100k items", and "100k items + close": the same writes with the close in the clock. Without
 * the close the two sides differ (see the fairness note), so that row says so and stays out of
 * the summaries; "+ close" is the one they count.
 */
function writeVariants(quick: boolean): Variant[] {
  const [all] = allItems(quick);
  return [
    {
      ...all,
      differentWork: "SQLite's WAL checkpoint and its fsyncs inside the clock against Cairn's " +
        "checkpoint and fsyncs after it; the + close row counts both",
    },
    { ...all, label: `${all.label} + close`, close: 1 },
  ];
}

export const writeAll: SqlBenchWorkload = {
  id: "W09.v1",
  title: "Write all items",
  family: "writes",
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: writeVariants,
  timed: {
    cairn: "N × `repo.create(Item, values, { key })` into a new repository, then " +
      '`await repo.flush()`. The "+ close" variant then also `await db.close()` inside the ' +
      "clock: the checkpoint the writes cause (written in the background once the log has " +
      "grown, and on close) counts.",
    sqlite: "`BEGIN`, N × prepared `INSERT`, `COMMIT` into a new database with the empty table. " +
      'The "+ close" variant then also closes the connection inside the clock (in WAL mode the ' +
      "last close checkpoints the WAL into the database file).",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Both end with every item committed (Cairn: sealed, and appended once storage " +
    'exists); with "+ close", both also end with the work the writes left behind done ' +
    "(Cairn's checkpoint, SQLite's WAL checkpoint). Opening the new store happens before the " +
    'clock starts. Without "+ close" the two differ: SQLite\'s automatic WAL checkpoint can ' +
    "run inside its COMMIT (timed), while the checkpoint Cairn's writes cause runs in the " +
    'background after the clock; "+ close" counts both.',
  cairn: side({
    setup: (ctx: CairnCtx, variant) => ({ ctx, variant }),
    async sample({ ctx, variant }) {
      const { db, repo } = await openRepo(ctx);
      const start = now();
      await fillRepo(repo, 0, variant.items);
      if (variant.close) await db.close();
      const elapsed = now() - start;
      if (!variant.close) await db.close();
      return elapsed;
    },
  }),
  sqlite: side({
    setup: (ctx: SqlCtx, variant) => ({ ctx, variant }),
    sample({ ctx, variant }) {
      const name = uniqueName("w09");
      const db = freshDatabase(ctx.engine, name, 0);
      const start = now();
      fillItems(db, 0, variant.items);
      if (variant.close) db.close();
      const elapsed = now() - start;
      if (!variant.close) db.close();
      ctx.engine.remove(name);
      return elapsed;
    },
  }),
};

export const readCold: SqlBenchWorkload = {
  id: "W10.v3",
  profilesAgree: true,
  title: "Read all items, cold",
  family: "reads",
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: allItems,
  timed: {
    cairn: "Opening the database and repository written and closed before (`Cairn.open`, " +
      '`db.open`), then `repo.get(key).get("title")` for every key of `repo.keys()`.',
    sqlite: "Opening a new connection (empty page cache) to the database, preparing " +
      "`SELECT id, title FROM items` and reading every row's title, rows as arrays.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: "none used (table scan)" },
  fairness: "Cold means a new connection / instance; the OS file cache stays warm on both sides " +
    `(dropping it needs root). ${ROWS_AS_ARRAYS}`,
  cairn: side({
    requires: ["storage"],
    async setup(ctx: CairnCtx, variant) {
      const { db, location } = await filledRepo(ctx, variant.items);
      await db.close();
      return { ctx, location };
    },
    async sample({ ctx, location }) {
      const start = now();
      const db = await ctx.openDb(location);
      readAllCairn(await db.open(REPO_PATH));
      const elapsed = now() - start;
      await db.close();
      return elapsed;
    },
  }),
  sqlite: side({
    setup(ctx: SqlCtx, variant) {
      requirePersistent(ctx);
      const name = uniqueName("w10");
      freshDatabase(ctx.engine, name, variant.items).close();
      return { ctx, name };
    },
    sample({ ctx, name }) {
      const start = now();
      const db = ctx.engine.open(name);
      const statement = db.prepare(SELECT_ALL);
      readAllSql(statement);
      const elapsed = now() - start;
      statement.finalize();
      db.close();
      return elapsed;
    },
    teardown: ({ ctx, name }) => ctx.engine.remove(name),
  }),
};

const readWarm: SqlBenchWorkload = {
  id: "W11.v3",
  context: goatdbContext("W11"),
  profilesAgree: true,
  title: "Read all items, warm",
  family: "reads",
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: allItems,
  timed: {
    cairn: '`repo.get(key).get("title")` for every key of `repo.keys()` on an open repository.',
    sqlite: "Running the prepared `SELECT id, title FROM items` and reading every row's title " +
      "on an open connection, rows as arrays.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: "none used (table scan)" },
  fairness: "Both read every item's title from an open store; nothing is cached between samples " +
    `beyond what each engine keeps anyway. ${ROWS_AS_ARRAYS}`,
  cairn: side({
    setup: (ctx: CairnCtx, variant) => cairnFilled(ctx, variant),
    sample(state: CairnFilled) {
      const start = now();
      readAllCairn(state.repo);
      return now() - start;
    },
    teardown: (state: CairnFilled) => state.close(),
  }),
  sqlite: side({
    setup: (ctx: SqlCtx, variant) => sqlFilled(ctx, variant, SELECT_ALL),
    sample(state: SqlFilled) {
      const start = now();
      readAllSql(state.statement);
      return now() - start;
    },
    teardown: sqlDone,
  }),
};

const count: SqlBenchWorkload = {
  id: "W17.v1",
  context: goatdbContext("W17"),
  title: "Count",
  family: "reads",
  differentWork: "Cairn reading the counter it keeps against SQLite counting the rows",
  unit: "µs/op",
  better: "lower",
  scale: "us",
  variants: (quick) => [{ ...allItems(quick)[0], minMs: minSampleMs(quick) }],
  timed: {
    cairn: "`repo.count()`, repeated until the sample has run ≥ 10 ms (2 ms quick); per call.",
    sqlite: "Prepared `SELECT count(*) FROM items`, same loop; per call.",
  },
  indexes: {
    cairn: "none (a counter)",
    sqlite: "primary-key index (SQLite counts the smallest b-tree)",
  },
  fairness: "Both return the exact number of items. Cairn keeps a counter; SQLite walks a b-tree.",
  cairn: side({
    setup: (ctx: CairnCtx, variant) => cairnFilled(ctx, variant),
    sample: (state: CairnFilled) =>
      perOpLoop(state.minMs, () => {
        sink.value += state.repo.count();
      }),
    teardown: (state: CairnFilled) => state.close(),
  }),
  sqlite: side({
    setup: (ctx: SqlCtx, variant) => ({
      ...sqlFilled(ctx, variant, "SELECT count(*) AS n FROM items"),
      minMs: variant.minMs as number,
    }),
    sample: (state: SqlFilled & { minMs: number }) =>
      perOpLoop(state.minMs, () => {
        sink.value += Number(state.statement.get()!.n);
      }, 1),
    teardown: sqlDone,
  }),
};

const keys: SqlBenchWorkload = {
  id: "W18.v3",
  context: goatdbContext("W18"),
  profilesAgree: true,
  title: "Keys",
  family: "reads",
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: allItems,
  timed: {
    cairn: "`Array.from(repo.keys())`.",
    sqlite: "Prepared `SELECT id FROM items`, rows as arrays, each id taken into an array.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: "primary-key index (covering)" },
  fairness: "Both produce an array of every key, and neither builds an object per key " +
    "(SQLite's rows come as arrays: `setReturnArrays(true)`, `get([])`).",
  cairn: side({
    setup: (ctx: CairnCtx, variant) => cairnFilled(ctx, variant),
    sample(state: CairnFilled) {
      const start = now();
      sink.value += Array.from(state.repo.keys()).length;
      return now() - start;
    },
    teardown: (state: CairnFilled) => state.close(),
  }),
  sqlite: side({
    setup: (ctx: SqlCtx, variant) => sqlFilled(ctx, variant, "SELECT id FROM items"),
    sample(state: SqlFilled) {
      const start = now();
      sink.value += state.statement.values().map((row) => row[0]).length;
      return now() - start;
    },
    teardown: sqlDone,
  }),
};

export const BULK = [writeAll, readCold, readWarm];
export const WHOLE = [count, keys];
