/**
 * Whatever two trusted writers gone bad sign (test/harness/hostile_writers.ts), importBlocks
 * answers with CairnErrors only, a refused block leaves no trace (the repository ends exactly as
 * one that was given only the accepted blocks), and every read afterwards answers or fails with a
 * CairnError. With and without the schemas registered.
 *
 * Seeded: CAIRN_HOSTILE_RUNS=N runs N streams, CAIRN_HOSTILE_SEED=S replays stream S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { envInteger } from "../harness/peers.ts";
import { hostileStream } from "../harness/hostile_writers.ts";

const RUNS = envInteger("CAIRN_HOSTILE_RUNS") ?? 12;
const FIRST_SEED = envInteger("CAIRN_HOSTILE_SEED") ?? 20261128;

test(`a trusted writer's hostile commits: CairnErrors only, and a refused block leaves no trace (${RUNS} streams, seed ${FIRST_SEED})`, async () => {
  let applied = 0;
  for (let run = 0; run < RUNS; run++) {
    const seed = FIRST_SEED + run;
    try {
      applied += (await hostileStream(seed, { withSchemas: seed % 2 === 0 })).applied;
    } catch (err) {
      throw new Error(`seed ${seed} (CAIRN_HOSTILE_SEED=${seed} CAIRN_HOSTILE_RUNS=1)`, {
        cause: err,
      });
    }
  }
  // The streams must reach the engine, not only its front door.
  assert.ok(applied >= RUNS * 20, `${applied} blocks applied`);
});
