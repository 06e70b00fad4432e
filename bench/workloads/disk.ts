/** D01: bytes on disk per item once N items are written and the database is closed. */
import { type CairnCtx, fillRepo, openRepo } from "../contenders/cairn.ts";
import { freshDatabase, type SqlCtx, uniqueName } from "../lib/sql.ts";
import { side } from "../lib/types.ts";
import { PER_ITEM, requirePersistent, SqlBenchWorkload } from "./common.ts";

export const disk: SqlBenchWorkload = {
  id: "D01.v1",
  title: "Bytes on disk per item",
  ...PER_ITEM,
  timed: {
    cairn: "All files of a new database after writing N items (one create each, one flush) and " +
      "closing it, divided by N: the repository's log (binary or JSONL, as the contender) and " +
      "its checkpoint, written on close, plus the settings file (126 bytes).",
    sqlite: "The database file after inserting N items in one transaction (`page_count × " +
      "page_size`, after a WAL checkpoint where the profile uses WAL), divided by N.",
  },
  indexes: { cairn: "none on disk", sqlite: "primary-key index on id" },
  fairness: "Different contents, shown side by side, never as a ratio: Cairn keeps every commit " +
    "(its log is the history, with a signature per block; trusted mode has none) and its " +
    "checkpoint repeats the current values so that opening reads no history (it can be deleted " +
    "and is rebuilt); SQLite keeps the current rows only.",
  cairn: side({
    requires: ["storage"],
    setup: (ctx: CairnCtx, variant) => ({ ctx, items: variant.items }),
    async sample({ ctx, items }) {
      const { db, repo, location } = await openRepo(ctx);
      await fillRepo(repo, 0, items);
      await db.close();
      return (await ctx.storedBytes(location!)) / items;
    },
  }),
  sqlite: side({
    setup(ctx: SqlCtx, variant) {
      requirePersistent(ctx);
      return { engine: ctx.engine, items: variant.items };
    },
    sample({ engine, items }) {
      const name = uniqueName("d01");
      const db = freshDatabase(engine, name, items);
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const pages = Number(db.prepare("PRAGMA page_count").get()!.page_count);
      const pageSize = Number(db.prepare("PRAGMA page_size").get()!.page_size);
      db.close();
      engine.remove(name);
      return (pages * pageSize) / items;
    },
  }),
};

export const DISK = [disk];
