/**
 * What opening a repository from its log alone costs: `Cairn.open` + `db.open(path)` of a
 * repository of N items (signed, created in blocks of 1,000) whose checkpoint is deleted before
 * each open, so the whole log is read, checked and replayed. Exists to measure how the log is read
 * (docs/architecture.md, "Logs are read in windows").
 * Run: ./node_modules/.bin/deno run -A bench/micro/open_log.ts [items=100000] [samples=7]
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cairn } from "../../src/mod.ts";
import { ItemSchema } from "../contenders/cairn.ts";
import { itemKey, itemValues } from "../lib/items.ts";
import { collect, summarize } from "../lib/stats.ts";

const ITEMS = Number(Deno.args[0] ?? 100_000);
const SAMPLES = Number(Deno.args[1] ?? 7);
const PER_BLOCK = 1_000;
const REPO = "/items";

const path = await mkdtemp(join(tmpdir(), "cairn-open-log-"));
try {
  const db = await Cairn.open({ path, schemas: [ItemSchema] });
  const repo = await db.open(REPO);
  for (let first = 0; first < ITEMS; first += PER_BLOCK) {
    for (let i = first; i < Math.min(ITEMS, first + PER_BLOCK); i++) {
      repo.create(ItemSchema, itemValues(i), { key: itemKey(i) });
    }
    await repo.flush();
  }
  await db.close();

  const dropCheckpoints = async () => {
    for (const name of await readdir(path)) {
      if (name.endsWith(".ckpt")) await rm(join(path, name));
    }
  };
  const times = await collect(SAMPLES, 2, async () => {
    await dropCheckpoints();
    const start = performance.now();
    const db = await Cairn.open({ path, schemas: [ItemSchema] });
    const repo = await db.open(REPO);
    const ms = performance.now() - start;
    if (repo.get(itemKey(ITEMS - 1), ItemSchema)?.get("count") !== ITEMS - 1) {
      throw new Error("the last item did not come back");
    }
    await db.close();
    return ms;
  });
  const { median, min, max } = summarize(times);
  console.log(
    `open of ${ITEMS.toLocaleString("en")} items from the log alone: median ${
      median.toFixed(1)
    } ms (${min.toFixed(1)}–${max.toFixed(1)}, ${SAMPLES} samples)`,
  );
} finally {
  await rm(path, { recursive: true, force: true });
}
