/**
 * What two trusted writers gone bad got accepted (test/harness/hostile_writers.ts) is stored as
 * it was held: the database opened again from its checkpoint, and again from its log alone (the
 * checkpoint removed), reads exactly as before it closed. Binary and JSONL logs, with and
 * without the schemas registered.
 *
 * Seeded: CAIRN_HOSTILE_RUNS=N runs N streams, CAIRN_HOSTILE_SEED=S replays stream S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { Cairn } from "cairndb";
import { envInteger } from "../harness/peers.ts";
import { All, everything, hostileStream, PATH } from "../harness/hostile_writers.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const RUNS = envInteger("CAIRN_HOSTILE_RUNS") ?? 8;
const FIRST_SEED = envInteger("CAIRN_HOSTILE_SEED") ?? 20261128;

async function reopened(path: string, withSchemas: boolean): Promise<unknown> {
  const db = await Cairn.open({ path, schemas: withSchemas ? [All] : [], onWarning: () => {} });
  try {
    return everything(await db.open(PATH));
  } finally {
    await db.close();
  }
}

test(`hostile commits that were accepted read the same after reopening, from the checkpoint and from the log (${RUNS} streams, seed ${FIRST_SEED})`, async () => {
  let checkpoints = 0;
  for (let run = 0; run < RUNS; run++) {
    const seed = FIRST_SEED + run;
    // By the seed, so that a replay runs the same variant. Streams under the registered schema
    // only, with the schemas: no item waits, so the close writes a checkpoint (two seeds in four);
    // the others leave items waiting.
    const variant = seed % 4;
    const withSchemas = variant !== 1;
    const onlyRegistered = variant % 2 === 0;
    await withTempDirectory("hostile", async (path) => {
      try {
        if (variant >= 2) {
          // The log format is chosen when the database is made.
          await (await Cairn.open({ path, format: "jsonl" })).close();
        }
        const { held } = await hostileStream(seed, { withSchemas, onlyRegistered, path });
        const files = await readdir(path);
        const checkpoint = files.find((name) => name.endsWith(".ckpt"));
        if (checkpoint) checkpoints++;
        assert.deepEqual(await reopened(path, withSchemas), held, "reopened");
        if (checkpoint) await rm(join(path, checkpoint));
        assert.deepEqual(await reopened(path, withSchemas), held, "from the log alone");
      } catch (err) {
        throw new Error(`seed ${seed} (CAIRN_HOSTILE_SEED=${seed} CAIRN_HOSTILE_RUNS=1)`, {
          cause: err,
        });
      }
    });
  }
  assert.ok(checkpoints >= RUNS / 2, `${checkpoints} of ${RUNS} closed with a checkpoint`);
});
