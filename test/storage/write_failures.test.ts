/**
 * A repository log on real storage (node:fs on Deno and Node, OPFS in the browser) whose writes,
 * syncs and truncates fail on purpose (test/harness/faulty_backend.ts): nothing handed to the log
 * may be lost, the file is cut back to its good length before anything else is appended, and
 * once the failures stop, a flush leaves exactly every block in order, with the log's position
 * (length and CRC, what checkpoints name) matching the file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { SealedBlock } from "../../src/core/block.ts";
import { type CairnErrorCode, isCairnError } from "../../src/core/errors.ts";
import type { CryptoSuite } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import type { StorageBackend } from "../../src/storage/backend.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { LOG_FORMATS } from "../../src/storage/log_convert.ts";
import type { LogFormat } from "../../src/storage/log_format.ts";
import { type Durability, RepositoryLog } from "../../src/storage/repository_log.ts";
import { trustedChain } from "../harness/blocks.ts";
import {
  FailingCalls,
  type FaultPlan,
  type FaultyBackend,
  faultyBackend,
  RandomFaults,
} from "../harness/faulty_backend.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";
import { withScratchBackend } from "../harness/scratch_backend.ts";

let fixture: Promise<{ suite: CryptoSuite; blocks: SealedBlock[] }> | undefined;

/** 60 small trusted blocks of one session, of varied sizes (a torn record can end anywhere). */
function setup() {
  fixture ??= (async () => {
    const suite = await cryptoSuite();
    return { suite, blocks: await trustedChain(suite, 60, (seq) => (seq * 37) % 300) };
  })();
  return fixture;
}

const hashes = (blocks: readonly SealedBlock[]) => blocks.map((block) => block.hash);

function hasCode(code: CairnErrorCode): (err: unknown) => boolean {
  return (err) => isCairnError(err, code);
}

interface Scene {
  suite: CryptoSuite;
  blocks: SealedBlock[];
  /** The real backend, to read what the file holds. */
  real: StorageBackend;
  faulty: FaultyBackend;
  name: string;
  open(): Promise<RepositoryLog>;
}

/** A log named after `format` in a fresh directory, opened through a backend failing per `plan`. */
async function withLog(
  format: LogFormat,
  durability: Durability,
  plan: FaultPlan,
  run: (scene: Scene) => Promise<void>,
): Promise<void> {
  const { suite, blocks } = await setup();
  await withScratchBackend("write-failures", async (real) => {
    const faulty = faultyBackend(real, plan);
    const name = `log${format.fileExtension}`;
    const open = async () => {
      const bytes = (await real.readFile(name)) ?? new Uint8Array();
      return (await RepositoryLog.open(faulty, name, bytes, format, durability, suite, undefined))
        .log;
    };
    try {
      await run({ suite, blocks, real, faulty, name, open });
    } finally {
      await faulty.closeFiles();
    }
  });
}

/** The file holds exactly `expected`, in order, nothing after them, and the log's position is its end. */
async function assertHolds(
  scene: Scene,
  format: LogFormat,
  log: RepositoryLog,
  expected: readonly SealedBlock[],
  context = "",
): Promise<void> {
  const bytes = (await scene.real.readFile(scene.name))!;
  const scan = await format.scan(bytes, scene.suite);
  assert.deepEqual(hashes(scan.blocks), hashes(expected), `blocks in the file ${context}`);
  assert.deepEqual(scan.damaged, [], `no damaged record ${context}`);
  assert.equal(scan.tornTail, undefined, `no torn tail ${context}`);
  assert.deepEqual(
    log.position(),
    { length: bytes.length, crc: crc32c(bytes) },
    `the log's position is the file's end ${context}`,
  );
}

for (const format of LOG_FORMATS) {
  for (const durability of ["relaxed", "durable"] as const) {
    const mode = `${format.name}, ${durability}`;

    test(`${mode}: a failed append is cut back; its block and later ones are written in order by the next attempt`, async () => {
      const plan = new FailingCalls();
      await withLog(format, durability, plan, async (scene) => {
        const { blocks } = scene;
        const log = await scene.open();
        await log.append(blocks[0]);
        const good = log.position();
        plan.diskFull();
        const first = log.append(blocks[1]);
        const queuedBehind = log.append(blocks[2]); // same tick: waits for the next attempt
        await assert.rejects(first, hasCode("E_IO"));
        await assert.rejects(queuedBehind, hasCode("E_IO"));
        await assert.rejects(log.append(blocks[3]), hasCode("E_IO"));
        await assert.rejects(log.flush(), hasCode("E_IO"));
        assert.ok(scene.faulty.faults.failed.append >= 3, "the appends did fail");
        // Half-written records sit past the good length; the log does not count them.
        const torn = (await scene.real.readFile(scene.name))!;
        assert.ok(torn.length > good.length, "a failed append left part of its bytes");
        assert.deepEqual(log.position(), good);
        assert.equal(log.idle, false, "blocks wait to be written: no checkpoint may be taken");

        plan.clear();
        await log.flush();
        assert.ok(scene.faulty.faults.truncatedTo.includes(good.length), "cut to the good length");
        await assertHolds(scene, format, log, blocks.slice(0, 4), "after the flush");
        assert.equal(log.idle, true);
        await log.append(blocks[4]);
        await log.close();
        const reopened = await scene.open();
        await assertHolds(scene, format, reopened, blocks.slice(0, 5), "after reopening");
        await reopened.close();
      });
    });

    test(`${mode}: while the cut-back fails, nothing is appended behind the torn bytes`, async () => {
      const plan = new FailingCalls();
      await withLog(format, durability, plan, async (scene) => {
        const { blocks } = scene;
        const log = await scene.open();
        await log.append(blocks[0]);
        plan.diskFull().failing.add("truncate");
        await assert.rejects(log.append(blocks[1]), hasCode("E_IO"));
        const torn = (await scene.real.readFile(scene.name))!.length;
        await assert.rejects(log.append(blocks[2]), hasCode("E_IO"));
        await assert.rejects(log.flush(), hasCode("E_IO"));
        assert.ok(scene.faulty.faults.failed.truncate >= 2, "the cut-back did fail");
        assert.equal(
          (await scene.real.readFile(scene.name))!.length,
          torn,
          "no append was tried before the file was cut back",
        );
        // Room again, but the truncate still fails: appends still wait for it.
        plan.failing.delete("append");
        await assert.rejects(log.flush(), hasCode("E_IO"));
        assert.equal((await scene.real.readFile(scene.name))!.length, torn);

        plan.clear();
        await log.flush();
        await assertHolds(scene, format, log, blocks.slice(0, 3));
        await log.close();
      });
    });

    test(`${mode}: a failed sync counts as a failed write; the batch is written again, once`, async () => {
      const plan = new FailingCalls();
      await withLog(format, durability, plan, async (scene) => {
        const { blocks } = scene;
        const log = await scene.open();
        await log.append(blocks[0]);
        await log.sync();
        const lastSync = log.position().length;
        plan.failing.add("sync");
        if (durability === "durable") {
          await assert.rejects(log.append(blocks[1]), hasCode("E_IO"));
        } else {
          await log.append(blocks[1]); // relaxed: handed to the system, not synced
          await log.append(blocks[2]);
          await assert.rejects(log.sync(), hasCode("E_IO"));
        }
        assert.ok(scene.faulty.faults.failed.sync >= 1);
        assert.equal(log.idle, false, "what the failed sync covered waits to be written again");
        const appendedBefore = scene.faulty.faults.appendedBytes;
        const written = durability === "durable" ? blocks.slice(0, 2) : blocks.slice(0, 3);

        plan.clear();
        await log.sync();
        // Cut back to what the last good sync covered, and written again: syncing again alone
        // could succeed with the bytes still missing (the system may have dropped those pages,
        // or marked them clean without writing them).
        const { truncatedTo, appendedBytes } = scene.faulty.faults;
        assert.equal(truncatedTo.at(-1), lastSync, "cut back to the last successful sync");
        assert.equal(
          appendedBytes - appendedBefore,
          log.position().length - lastSync,
          "everything after it was written again",
        );
        await assertHolds(scene, format, log, written);
        await log.close();
      });
    });
  }

  test(`${format.name}: when bytes a failed sync covered cannot be read back, the log says so for good`, async () => {
    const plan = new FailingCalls();
    await withLog(format, "relaxed", plan, async (scene) => {
      const { blocks } = scene;
      const log = await scene.open();
      await log.append(blocks[0]);
      await log.sync();
      await log.append(blocks[1]);
      plan.failing.add("sync").add("readFile");
      await assert.rejects(log.sync(), hasCode("E_IO"));
      assert.equal(scene.faulty.faults.failed.readFile, 1, "the read-back was tried");
      plan.clear();
      const lost = (err: unknown) => isCairnError(err, "E_IO") && /read back/.test(err.message);
      await assert.rejects(log.flush(), lost);
      await assert.rejects(log.sync(), lost);
      await assert.rejects(log.append(blocks[2]), lost);
      await assert.rejects(log.close(), lost);
    });
  });
}

// ── fuzz: random failures interleaved with writes, then recovery ───────────────────────────

const replaySeed = envInteger("CAIRN_WRITE_FUZZ_SEED");
const schedules = envInteger("CAIRN_WRITE_FUZZ") ?? 40;

/**
 * One seeded schedule: batches of appends (a tick's worth, not awaited one by one), flushes and
 * syncs, while appends write part of their bytes and fail, syncs and truncates fail, at random.
 * After every successful flush the file holds exactly the blocks appended so far; once the
 * failures stop, a flush succeeds, and the reopened log holds every block, in order.
 */
async function fuzzSchedule(seed: number, injected: Record<string, number>): Promise<void> {
  const random = seededRandom(seed);
  const format = LOG_FORMATS[Math.floor(random() * LOG_FORMATS.length)];
  const durability: Durability = random() < 0.5 ? "relaxed" : "durable";
  const plan = new RandomFaults(random, { append: 0.3, sync: 0.3, truncate: 0.25 });
  const trace: string[] = [`${format.name} ${durability}`];
  try {
    await withLog(format, durability, plan, async (scene) => {
      plan.on = false; // opening writes the header: the failures start after it
      const log = await scene.open();
      plan.on = true;
      let next = 0;
      const pending: Promise<void>[] = [];
      const settle = async () => {
        for (const result of await Promise.allSettled(pending.splice(0))) {
          if (result.status === "rejected" && !isCairnError(result.reason, "E_IO")) {
            throw result.reason;
          }
        }
      };
      const steps = 8 + Math.floor(random() * 12);
      for (let step = 0; step < steps && next < scene.blocks.length - 3; step++) {
        const action = random();
        if (action < 0.6) {
          const count = 1 + Math.floor(random() * 3);
          trace.push(`append ${next}..${next + count - 1}`);
          for (let i = 0; i < count; i++) {
            const appended = log.append(scene.blocks[next++]);
            appended.catch(() => {}); // looked at in settle(), maybe after it fails
            pending.push(appended);
          }
          if (random() < 0.5) await settle();
          continue;
        }
        const sync = action < 0.8;
        trace.push(sync ? "sync" : "flush");
        const done = await (sync ? log.sync() : log.flush()).then(() => true, (err) => {
          if (!isCairnError(err, "E_IO")) throw err;
          return false;
        });
        trace.push(done ? "  ok" : "  failed");
        await settle();
        if (done) await assertHolds(scene, format, log, scene.blocks.slice(0, next), trace.at(-2));
      }
      await settle();
      plan.on = false;
      trace.push("failures stop; close");
      await log.close();
      const reopened = await scene.open();
      await assertHolds(scene, format, reopened, scene.blocks.slice(0, next), "after reopening");
      await reopened.close();
      assert.ok(next > 0);
      for (const [call, n] of Object.entries(scene.faulty.faults.failed)) {
        injected[call] = (injected[call] ?? 0) + n;
      }
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(
      `write-failure fuzz failed for seed ${seed}; replay it alone with ` +
        `CAIRN_WRITE_FUZZ_SEED=${seed} (e.g. CAIRN_WRITE_FUZZ_SEED=${seed} deno test -A ` +
        `test/storage/write_failures.test.ts)\n${message}\nsteps:\n  ${trace.join("\n  ")}`,
      { cause: err },
    );
  }
}

test(
  replaySeed === undefined
    ? `write-failure fuzz: ${schedules} seeded fault schedules lose nothing (CAIRN_WRITE_FUZZ=N for more)`
    : `write-failure fuzz: replay of seed ${replaySeed}`,
  { timeout: 300_000 },
  async () => {
    const seeds = replaySeed === undefined
      ? Array.from({ length: schedules }, (_, i) => 20260601 + i)
      : [replaySeed];
    const injected: Record<string, number> = {};
    for (const seed of seeds) await fuzzSchedule(seed, injected);
    if (seeds.length >= 20) {
      for (const call of ["append", "sync", "truncate"]) {
        assert.ok(injected[call] > 0, `the fuzz never failed a ${call}`);
      }
    }
  },
);
