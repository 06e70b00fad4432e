/** M01: memory held per item once N items are loaded. */
import { type CairnCtx, fillRepo, openRepo, REPO_PATH } from "../contenders/cairn.ts";
import { freshDatabase, type SqlCtx, uniqueName } from "../lib/sql.ts";
import { NotApplicable, side } from "../lib/types.ts";
import { sink } from "../lib/items.ts";
import { heap, PER_ITEM, SqlBenchWorkload } from "./common.ts";

const memory: SqlBenchWorkload = {
  id: "M01.v2",
  title: "Memory per item",
  ...PER_ITEM,
  zeroSample: "SQLite reuses memory the process already holds, and RSS and WebAssembly memory " +
    "change in whole pages, so this measure cannot see SQLite's share",
  timed: {
    cairn: "JS heap plus ArrayBuffer memory in use (after a full GC) with the repository open " +
      "holding N items, minus the same before, divided by N. With storage: just after opening N " +
      "items written earlier (values not read yet: they stay checkpoint bytes until first read); " +
      "without: after writing them (commit graph included).",
    sqlite: "Memory after writing N items and scanning them once, minus before, divided by N: " +
      "process RSS for native SQLite, the growth of the WebAssembly memory for SQLite WASM. " +
      "Rough: SQLite keeps a file database on disk and caches at most its page cache (2 MiB by " +
      "default), and reuses memory it already holds, so figures near 0 are expected.",
  },
  indexes: { cairn: "none", sqlite: "primary-key index on id" },
  fairness: "Different measures (JS heap vs. RSS or WASM memory): shown side by side, never as " +
    "a ratio. Runs first in each runtime, before other rows have grown the process.",
  cairn: side({
    setup: (ctx: CairnCtx, variant) => ({ ctx, items: variant.items }),
    async sample({ ctx, items }) {
      let location: string | undefined;
      if (ctx.features.storage) {
        const written = await openRepo(ctx);
        await fillRepo(written.repo, 0, items);
        await written.db.close();
        location = written.location;
      }
      const before = await heap(ctx);
      const db = await ctx.openDb(location ?? ctx.newLocation());
      const repo = await db.open(REPO_PATH);
      if (!ctx.features.storage) await fillRepo(repo, 0, items);
      const after = await heap(ctx);
      sink.value += repo.count();
      await db.close();
      return (after - before) / items;
    },
  }),
  sqlite: side({
    setup: (ctx: SqlCtx, variant) => ({ ctx, items: variant.items }),
    sample({ ctx, items }) {
      ctx.gc();
      const measure = () => ctx.engine.wasmMemoryBytes?.() ?? ctx.rssBytes();
      const before = measure();
      if (before === undefined) throw new NotApplicable("memory is not measurable here");
      const name = uniqueName("m01");
      const db = freshDatabase(ctx.engine, name, items);
      const scan = db.prepare("SELECT id, title, count, tags FROM items");
      scan.each([], (row) => {
        sink.value += String(row.id).length;
      });
      const after = measure()!;
      scan.finalize();
      db.close();
      ctx.engine.remove(name);
      return (after - before) / items;
    },
  }),
};

export const MEMORY = [memory];
