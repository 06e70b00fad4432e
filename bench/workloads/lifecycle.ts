/** W01–W03: creating an instance and opening a database, empty or holding many items. */
import {
  fillRepo,
  fillRepoBlockPerItem,
  ItemSchema,
  openRepo,
  REPO_PATH,
} from "../contenders/cairn.ts";
import { itemKey, sink } from "../lib/items.ts";
import {
  freshDatabase,
  type OpenSteps,
  type PageSqlCtx,
  SELECT_TITLE,
  uniqueName,
} from "../lib/sql.ts";
import { now, perOpUs } from "../lib/timer.ts";
import { goatdbContext } from "../lib/goatdb_published.ts";
import { side, type Variant } from "../lib/types.ts";
import type { OpenReply } from "../fresh/protocol.ts";
import {
  big,
  CAIRN_MAP,
  freshProcess,
  itemsLabel,
  requirePersistent,
  SqlBenchWorkload,
  SQLITE_PK,
} from "./common.ts";

const IN_CHROMIUM = "In Chromium SQLite runs in a worker started, with its WebAssembly loaded, " +
  "before the clock (what a page does once when it loads); the clock covers installing its OPFS " +
  "pool (opfs-sahpool, on files a worker made before the clock) and the open in that worker.";

const COUNTED_ALIKE = "In Chromium neither side counts loading its code, but Cairn's side counts " +
  "more: `Cairn.open({ path })` starts the storage worker that owns its OPFS directory inside " +
  "the clock (its API has no earlier step), where SQLite's worker was started before it.";

/**
 * Chromium's SQLite side of W01 (`steps` empty: a new database each sample) and W02 (an existing
 * database with the items table, then preparing the select): before the clock a worker prepares
 * the OPFS pool (and W02's database) and ends, and a new worker starts and loads SQLite WASM;
 * inside it that worker installs the pool and opens. Closing, removing and ending the worker
 * happen after the clock.
 */
function inNewWorker(steps: OpenSteps) {
  const existing = steps.prepareSelect === true;
  return side({
    async setup(ctx: PageSqlCtx) {
      const pool = uniqueName("pool");
      const name = uniqueName("open");
      const worker = await ctx.startWorker();
      await worker.install(pool);
      if (existing) await worker.open(name, { createTable: true });
      await worker.stop();
      return { ctx, pool, name };
    },
    async sample({ ctx, pool, name }) {
      const opened = existing ? name : uniqueName("w01");
      const worker = await ctx.startWorker();
      const start = now();
      await worker.install(pool);
      await worker.open(opened, steps);
      const elapsed = now() - start;
      await worker.stop(existing ? undefined : opened);
      return perOpUs(elapsed, 1);
    },
  });
}

const createInstance: SqlBenchWorkload = {
  id: "W01.v3",
  context: goatdbContext("W01"),
  title: "Create instance",
  family: "startup",
  unit: "µs/op",
  better: "lower",
  scale: "us",
  variants: () => [{ label: "new", items: 0 }],
  timed: {
    cairn: "`await Cairn.open(options)`: a new session (Ed25519 key pair), an empty schema " +
      "registry; with storage, also the database directory (in Chromium: starting the storage " +
      "worker that owns it).",
    sqlite: "Opening a connection to a new database file (`new DatabaseSync(path)` / " +
      '`new oo1.DB(path, "c")`) and applying the profile\'s pragmas. ' + IN_CHROMIUM,
  },
  indexes: { cairn: "none", sqlite: "none" },
  fairness: "Both sides create an empty store ready for use; closing happens outside the clock. " +
    COUNTED_ALIKE,
  cairn: side({
    setup: (ctx) => ctx,
    async sample(ctx) {
      const location = ctx.newLocation();
      const start = now();
      const db = await ctx.openDb(location);
      const elapsed = now() - start;
      await db.close();
      return perOpUs(elapsed, 1);
    },
  }),
  sqlite: side({
    setup: (ctx) => ctx,
    sample({ engine }) {
      const name = uniqueName("w01");
      const start = now();
      const db = engine.open(name);
      const elapsed = now() - start;
      db.close();
      engine.remove(name);
      return perOpUs(elapsed, 1);
    },
  }),
  sqliteInPage: inNewWorker({}),
};

const openEmpty: SqlBenchWorkload = {
  id: "W02.v3",
  context: goatdbContext("W02"),
  title: "Open database (empty)",
  family: "startup",
  unit: "µs/op",
  better: "lower",
  scale: "us",
  variants: () => [{ label: "empty", items: 0 }],
  timed: {
    cairn: '`await Cairn.open(options)` then `await db.open("/bench/items")` on an empty ' +
      "repository (with storage: one created and closed before the clock starts; in Chromium " +
      "`Cairn.open` starts the storage worker that owns it).",
    sqlite: "Opening a connection to an existing database holding the empty items table, " +
      "applying the pragmas and preparing `SELECT title FROM items WHERE id = ?` (reads the " +
      "schema). " + IN_CHROMIUM,
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Both sides end ready to read an item. Cairn without storage opens a new in-memory " +
    "repository; SQLite opens a file. " + COUNTED_ALIKE,
  cairn: side({
    setup: (ctx) => ctx,
    async sample(ctx) {
      const location = ctx.newLocation();
      if (location !== undefined) await (await openRepo(ctx, location)).db.close();
      const start = now();
      const db = await ctx.openDb(location);
      await db.open(REPO_PATH);
      const elapsed = now() - start;
      await db.close();
      return perOpUs(elapsed, 1);
    },
  }),
  sqlite: side({
    setup(ctx) {
      requirePersistent(ctx);
      const name = uniqueName("w02");
      freshDatabase(ctx.engine, name, 0).close();
      return { engine: ctx.engine, name };
    },
    sample({ engine, name }) {
      const start = now();
      const db = engine.open(name);
      const select = db.prepare(SELECT_TITLE);
      const elapsed = now() - start;
      select.finalize();
      db.close();
      return perOpUs(elapsed, 1);
    },
    teardown: ({ engine, name }) => engine.remove(name),
  }),
  sqliteInPage: inNewWorker({ prepareSelect: true }),
};

/**
 * "100k items" (a warm JIT: the bench's process has run every row before), and the first open
 * in a fresh process, which is what an application sees when it starts. A fresh process has
 * nothing to warm up: its warm-up samples start none.
 */
function openVariants(quick: boolean): Variant[] {
  const items = big(quick);
  return [
    { label: itemsLabel(items), items },
    { label: `${itemsLabel(items)}, fresh process`, items, fresh: 1 },
    { label: `${itemsLabel(items)}, a block per item`, items, blockPerItem: 1 },
  ];
}

export const openFull: SqlBenchWorkload = {
  id: "W03.v1",
  context: goatdbContext("W03"),
  title: "Open database (filled)",
  family: "startup",
  unit: "ms",
  better: "lower",
  scale: "ms",
  variants: openVariants,
  timed: {
    cairn: '`await Cairn.open(options)`, `await db.open("/bench/items")` on a repository of ' +
      "N items written and closed before, then reading one item's title. The plain variant " +
      "runs in the bench's own process, whose JIT is warm from earlier rows and samples; the " +
      '"fresh process" variant times the same steps as the first open in a new process of the ' +
      "runtime (modules loaded, nothing run yet; one process per sample; starting the process " +
      "and loading modules are outside the clock). The other variants open a repository " +
      'written in one tick (a few blocks of 256 KiB); "a block per item" opens one written ' +
      "item by item, each create sealed and appended as a block of its own (N signed blocks, " +
      "as an app that saves each item as it is made leaves its log).",
    sqlite: "Opening a connection to a database file of N items, applying the pragmas, " +
      'preparing `SELECT title FROM items WHERE id = ?` and reading one title; the "fresh ' +
      'process" variant does the same as the first open in a new process, timed the same way. ' +
      'In "a block per item" SQLite opens the same file as in the plain variant, written in ' +
      "one transaction: its file does not keep how its rows came.",
  },
  indexes: { cairn: CAIRN_MAP, sqlite: SQLITE_PK },
  fairness: "Both sides end having answered one read. SQLite reads pages lazily, Cairn loads " +
    "the repository whole (that is its design: every later read is in memory). In a fresh " +
    "process both run their open code for the first time.",
  cairn: side({
    requires: ["storage"],
    async setup(ctx, variant, plan) {
      const run = variant.fresh === 1 ? freshProcess(ctx.inFreshProcess) : undefined;
      const { db, repo, location } = await openRepo(ctx);
      const fill = variant.blockPerItem === 1 ? fillRepoBlockPerItem : fillRepo;
      await fill(repo, 0, variant.items);
      await db.close();
      return { ctx, location: location!, run, warmup: plan.warmup };
    },
    async sample({ ctx, location, run, warmup }, index) {
      if (run) return index < warmup ? 0 : ((await run("open", location)) as OpenReply).ms;
      const start = now();
      const db = await ctx.openDb(location);
      const repo = await db.open(REPO_PATH);
      sink.value += repo.get(itemKey(0), ItemSchema)!.get("title").length;
      const elapsed = now() - start;
      await db.close();
      return elapsed;
    },
  }),
  sqlite: side({
    setup(ctx, variant, plan) {
      requirePersistent(ctx);
      const run = variant.fresh === 1 ? freshProcess(ctx.inFreshProcess) : undefined;
      const name = uniqueName("w03");
      freshDatabase(ctx.engine, name, variant.items).close();
      return { ctx, name, run, warmup: plan.warmup };
    },
    async sample({ ctx, name, run, warmup }, index) {
      if (run) return index < warmup ? 0 : ((await run("open", name)) as OpenReply).ms;
      const start = now();
      const db = ctx.engine.open(name);
      const select = db.prepare(SELECT_TITLE);
      sink.value += String(select.get(itemKey(0))!.title).length;
      const elapsed = now() - start;
      select.finalize();
      db.close();
      return elapsed;
    },
    teardown: ({ ctx, name }) => ctx.engine.remove(name),
  }),
};

export const LIFECYCLE = [createInstance, openEmpty, openFull];
