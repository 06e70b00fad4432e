/**
 * W12–W16, W20: filter queries (indexed, and on a fresh open without an index), filter + sort,
 * and live-query updates. The Cairn side needs issue #5's `repo.query`; until it exists these
 * rows say so and only SQLite runs.
 */
import {
  type BenchItem,
  type CairnCtx,
  filledRepo,
  indexCount,
  ItemSchema,
  type OpenQuery,
  openQuery,
  openRepo,
  type RepositoryHandle,
} from "../contenders/cairn.ts";
import { itemKey, sink } from "../lib/items.ts";
import {
  CREATE_COUNT_INDEX,
  freshDatabase,
  type SqlCtx,
  type SqlDatabase,
  type SqlStatement,
  uniqueName,
  UPDATE_COUNT,
} from "../lib/sql.ts";
import { goatdbContext } from "../lib/goatdb_published.ts";
import { now, perOpLoop } from "../lib/timer.ts";
import { side, type Variant } from "../lib/types.ts";
import { big, minSampleMs, requirePersistent, SqlBenchWorkload } from "./common.ts";
import { countLabel } from "../lib/format.ts";

const FILTER = "SELECT id, title, count FROM items WHERE count < ?";
const FILTER_SORT = `${FILTER} ORDER BY title`;

const INDEXES = {
  cairn: '`repo.createIndex("count")` (in-memory sorted index); a declarative filter',
  sqlite: "primary-key index on id; `CREATE INDEX items_count ON items (count)`; prepared " +
    "statements",
};

export function filterVariant(items: number, results: number, quick: boolean): Variant {
  return {
    label: `${countLabel(items)} → ${countLabel(results)}`,
    items,
    results,
    minMs: minSampleMs(quick),
  };
}

function filterVariants(quick: boolean): Variant[] {
  const n = big(quick);
  return [
    filterVariant(100, 50, quick),
    filterVariant(n, n / 100, quick),
    filterVariant(n, n / 10, quick),
  ];
}

const smallVariant = (quick: boolean) => [filterVariant(100, 50, quick)];

interface CairnState {
  repo: RepositoryHandle;
  close(): Promise<void>;
  variant: Variant;
  query?: OpenQuery;
}

interface SqlState {
  ctx: SqlCtx;
  db: SqlDatabase;
  name: string;
  variant: Variant;
  statement?: SqlStatement;
}

async function cairnSetup(ctx: CairnCtx, variant: Variant): Promise<CairnState> {
  const { db, repo } = await filledRepo(ctx, variant.items);
  indexCount(repo);
  return { repo, close: () => db.close(), variant };
}

function sqlSetup(ctx: SqlCtx, variant: Variant): SqlState {
  const name = uniqueName("query");
  const db = freshDatabase(ctx.engine, name, variant.items, [CREATE_COUNT_INDEX]);
  return { ctx, db, name, variant };
}

async function cairnTeardown(state: CairnState): Promise<void> {
  state.query?.close();
  await state.close();
}

function sqlTeardown(state: SqlState): void {
  state.statement?.finalize();
  state.db.close();
  state.ctx.engine.remove(state.name);
}

/**
 * Runs the filter and reads each row's id, title and count, as `readResults` reads each of
 * Cairn's results; rows as arrays (no object per row). Returns the number of rows.
 */
function runSql(statement: SqlStatement, below: number): number {
  const rows = statement.values(below);
  for (const [id, title, count] of rows) {
    sink.value += String(id).length + String(title).length + Number(count);
  }
  return rows.length;
}

/**
 * Reads of each result what SQLite's side gets of each row (id, title, count): a result is a
 * handle that reads nothing until asked, where SQLite's rows are read into values.
 */
function readResults(query: OpenQuery): number {
  const results = query.results() as readonly BenchItem[];
  for (const item of results) {
    sink.value += item.key.length + item.get("title").length + item.get("count");
  }
  return results.length;
}

/**
 * A cold query: one not asked before. The bound is nudged by a fraction each sample so no cache
 * or pool can answer it, while the integer counts keep the same results: `count < R - 1 + f`
 * (0 < f < 1) holds for counts 0 … R - 1, the R results the row's size names. (Until
 * 2026-11-29 the bound was R + f, which let count R in too: 51 results for "100 → 50".)
 */
function coldBound(state: { variant: Variant }, index: number): number {
  return (state.variant.results as number) - 1 + ((index % 97) + 1) / 1000;
}

function coldPair(
  id: string,
  title: string,
  sortByTitle: boolean,
  variants: (quick: boolean) => Variant[],
): SqlBenchWorkload {
  const sql = sortByTitle ? FILTER_SORT : FILTER;
  return {
    id,
    title,
    family: "queries",
    unit: "µs",
    better: "lower",
    scale: "us",
    variants,
    timed: {
      cairn: "Setup: the repository the setup wrote, still open (every value in memory as an " +
        'object), with `repo.createIndex("count")`. Timed: ' +
        `\`repo.query({ schema, where: { count: { lt: R } }${
          sortByTitle ? ', sortBy: "title"' : ""
        } })\`, a query not asked before, until its results are complete (\`await ready\`), ` +
        "then reading each result's key, title and count (what SQLite's rows carry).",
      sqlite: "Setup: the database the setup wrote, same connection, with the index on count. " +
        `Timed: preparing \`${sql}\` and running it once, collecting the rows into an array (rows ` +
        "as arrays of column values) and reading each row's id, title and count.",
    },
    indexes: INDEXES,
    fairness: "Both start with nothing compiled or cached for this query; SQLite's page cache is " +
      "warm (same connection).",
    cairn: side({
      requires: ["query"],
      setup: cairnSetup,
      async sample(state: CairnState, index) {
        const start = now();
        const query = await openQuery(state.repo, {
          countBelow: coldBound(state, index),
          sortByTitle,
        });
        sink.value += readResults(query);
        const elapsed = now() - start;
        query.close();
        return elapsed * 1000;
      },
      teardown: cairnTeardown,
    }),
    sqlite: side({
      setup: sqlSetup,
      sample(state: SqlState, index) {
        const start = now();
        const statement = state.db.prepare(sql);
        sink.value += runSql(statement, coldBound(state, index));
        const elapsed = now() - start;
        statement.finalize();
        return elapsed * 1000;
      },
      teardown: sqlTeardown,
    }),
  };
}

function warmPair(
  id: string,
  title: string,
  sortByTitle: boolean,
  variants: (quick: boolean) => Variant[],
): SqlBenchWorkload {
  const sql = sortByTitle ? FILTER_SORT : FILTER;
  return {
    id,
    title,
    family: "queries",
    differentWork: "Cairn's cached live result against SQLite running the query again",
    unit: "µs/op",
    better: "lower",
    scale: "us",
    variants,
    timed: {
      cairn: "Reading `results` of an open query again with no change in between, and each " +
        "result's key, title and count, repeated until the sample has run ≥ 10 ms (2 ms quick); " +
        "per read.",
      sqlite: `Running the prepared \`${sql}\` again, collecting the rows into an array (rows as ` +
        "arrays of column values) and reading each row's id, title and count; same loop; per run.",
    },
    indexes: INDEXES,
    fairness: "Both hand the application the current result array. Cairn keeps it cached until " +
      "an item changes (its design); SQLite has no result cache and runs the query again.",
    cairn: side({
      requires: ["query"],
      async setup(ctx: CairnCtx, variant) {
        const state = await cairnSetup(ctx, variant);
        state.query = await openQuery(state.repo, {
          countBelow: variant.results as number,
          sortByTitle,
        });
        return state;
      },
      sample: (state: CairnState) =>
        perOpLoop(state.variant.minMs as number, () => {
          sink.value += readResults(state.query!);
        }),
      teardown: cairnTeardown,
    }),
    sqlite: side({
      setup(ctx: SqlCtx, variant) {
        const state = sqlSetup(ctx, variant);
        state.statement = state.db.prepare(sql);
        return state;
      },
      sample: (state: SqlState) =>
        perOpLoop(state.variant.minMs as number, () => {
          sink.value += runSql(state.statement!, state.variant.results as number);
        }, 1),
      teardown: sqlTeardown,
    }),
  };
}

function liveVariants(quick: boolean): Variant[] {
  const n = big(quick);
  return [n / 1000, n / 100, n / 10].map((changed) => ({
    label: `${countLabel(changed)} changed`,
    items: n,
    results: n / 10,
    changed,
  }));
}

/** The new count of the j-th changed item: out of the result, or back in. */
function toggledCount(j: number, out: boolean, items: number): number {
  return out ? j + items : j;
}

/**
 * One sample: the changed items move out of the result, then back in, two batches timed apart;
 * the sample is their mean. (Moving out and moving in cost differently — SQLite's query returns
 * C fewer rows after the first — so a sample of one direction, alternating, made the median
 * depend on which direction the odd sample fell on.)
 */
async function outAndBackIn(move: (out: boolean) => Promise<void> | void): Promise<number> {
  let total = 0;
  for (const out of [true, false]) {
    const start = now();
    await move(out);
    total += now() - start;
  }
  return total / 2;
}

const liveUpdate: SqlBenchWorkload = {
  id: "W16.v4",
  title: "Live query update",
  family: "queries",
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: liveVariants,
  timed: {
    cairn: 'With a live query (count < N/10) open: C × `repo.get(key).set("count", …)` moving ' +
      "C result items out of the result, `await repo.flush()`, then reading the query's updated " +
      "`results`; then the same moving them back in. Per batch: the mean of the two.",
    sqlite: "`BEGIN`, C × prepared `UPDATE items SET count = ? WHERE id = ?`, `COMMIT`, then " +
      "running the prepared filter query again, collecting its rows (as arrays) and reading " +
      "each row's id, title and count (SQLite has no live " +
      "queries: re-running is what an application does); out of the result, then back in. Per " +
      "batch: the mean of the two.",
  },
  indexes: INDEXES,
  fairness: "Both end with the writes committed and the application holding the new result.",
  cairn: side({
    requires: ["query"],
    async setup(ctx: CairnCtx, variant) {
      const state = await cairnSetup(ctx, variant);
      state.query = await openQuery(state.repo, { countBelow: variant.results as number });
      return state;
    },
    sample(state: CairnState) {
      const changed = state.variant.changed as number;
      const items = state.variant.items;
      return outAndBackIn(async (out) => {
        for (let j = 0; j < changed; j++) {
          state.repo.get(itemKey(j), ItemSchema)!.set("count", toggledCount(j, out, items));
        }
        await state.repo.flush();
        sink.value += readResults(state.query!);
      });
    },
    teardown: cairnTeardown,
  }),
  sqlite: side({
    setup(ctx: SqlCtx, variant) {
      const state = sqlSetup(ctx, variant);
      state.statement = state.db.prepare(FILTER);
      return { ...state, update: state.db.prepare(UPDATE_COUNT) };
    },
    sample(state: SqlState & { update: SqlStatement }) {
      const { changed, items, results } = state.variant as Record<string, number>;
      return outAndBackIn((out) => {
        state.db.exec("BEGIN");
        for (let j = 0; j < changed; j++) state.update.run(toggledCount(j, out, items), itemKey(j));
        state.db.exec("COMMIT");
        sink.value += runSql(state.statement!, results);
      });
    },
    teardown(state: SqlState & { update: SqlStatement }) {
      state.update.finalize();
      sqlTeardown(state);
    },
  }),
};

/**
 * W20: the filter as the first thing a process does with a store it has just opened, counting
 * the open: Cairn reads and verifies its whole log at open, SQLite reads pages as the query needs
 * them, so timing only the query would leave Cairn's loading outside the clock and SQLite's in it.
 */
export const filterFreshOpen: SqlBenchWorkload = {
  id: "W20.v4",
  title: "Open + filter query, no index",
  family: "queries",
  unit: "µs",
  better: "lower",
  scale: "us",
  variants: (quick) => [filterVariant(big(quick), big(quick) / 100, quick)],
  timed: {
    cairn: "Timed: `Cairn.open` and `db.open` on a repository of N items written and closed " +
      "before (no index declared), then `repo.query({ schema, where: { count: { lt: R } } })` " +
      "until its results are complete (`await ready`) and reading each result's key, title and " +
      "count (what SQLite's rows carry): loading the log, then a scan of every item.",
    sqlite: "Timed: a new connection (empty page cache) to a database of N items with no index " +
      "on count, then preparing `" + FILTER + "` and running it once, collecting the rows into " +
      "an array (rows as arrays) and reading each row's id, title and count: a table scan.",
  },
  indexes: { cairn: "none", sqlite: "primary-key index on id (not usable: a table scan)" },
  fairness: "Both go from a closed store to the query's rows, with nothing cached but the OS " +
    "file cache (warm on both sides). Closing happens after the clock.",
  cairn: side({
    requires: ["storage", "query"],
    async setup(ctx: CairnCtx, variant) {
      const { db, location } = await filledRepo(ctx, variant.items);
      await db.close();
      return { ctx, location, variant };
    },
    async sample({ ctx, location, variant }, index) {
      const start = now();
      const { db, repo } = await openRepo(ctx, location);
      const query = await openQuery(repo, { countBelow: coldBound({ variant }, index) });
      sink.value += readResults(query);
      const elapsed = now() - start;
      query.close();
      await db.close();
      return elapsed * 1000;
    },
  }),
  sqlite: side({
    setup(ctx: SqlCtx, variant) {
      requirePersistent(ctx);
      const name = uniqueName("w20");
      freshDatabase(ctx.engine, name, variant.items).close();
      return { ctx, name, variant };
    },
    sample({ ctx, name, variant }, index) {
      const start = now();
      const db = ctx.engine.open(name);
      const statement = db.prepare(FILTER);
      sink.value += runSql(statement, coldBound({ variant }, index));
      const elapsed = now() - start;
      statement.finalize();
      db.close();
      return elapsed * 1000;
    },
    teardown: ({ ctx, name }) => ctx.engine.remove(name),
  }),
};

export const QUERIES = [
  {
    ...coldPair("W12.v3", "Filter query, cold, indexed", false, filterVariants),
    context: goatdbContext("W12"),
  },
  warmPair("W13.v3", "Filter query, warm", false, filterVariants),
  {
    ...coldPair("W14.v3", "Filter + sort query, cold, indexed", true, smallVariant),
    context: goatdbContext("W14"),
  },
  warmPair("W15.v3", "Filter + sort query, warm", true, smallVariant),
  liveUpdate,
];

export const FRESH_FILTER = [filterFreshOpen];
