/**
 * A database whose disk fills up, end to end (issue #15): writes go on in memory, flush and
 * close fail with E_IO and drop nothing, and once there is room again they succeed and a
 * reopened database holds every item. The storage is the real file-system backend wrapped by
 * test/harness/faulty_backend.ts, given to Cairn through its internal seam (openCairnOn).
 *
 * Everything comes from the sources (not "cairndb"): the seam is internal, and a schema made by
 * one copy of the library is not accepted by another.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { openCairnOn } from "../../src/db/database.ts";
import {
  Cairn,
  type CairnErrorCode,
  defineSchema,
  isCairnError,
  type RepositoryHandle,
} from "../../src/mod.ts";
import type { Durability } from "../../src/storage/repository_log.ts";
import { openFsBackend } from "../../src/storage/backends/fs.ts";
import {
  FailingCalls,
  type FaultPlan,
  type FaultyBackend,
  faultyBackend,
  RandomFaults,
} from "../harness/faulty_backend.ts";
import { envInteger } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { TITLE_AND_NUMBER } from "../harness/schemas.ts";

const Doc = defineSchema(TITLE_AND_NUMBER);

function hasCode(code: CairnErrorCode): (err: unknown) => boolean {
  return (err) => isCairnError(err, code);
}

/** Every live item's key and value, sorted by key. */
function contents(repo: RepositoryHandle) {
  return [...repo.keys()].sort().map((key) => [key, repo.get(key, Doc)!.toObject()]);
}

/** Opens the database at `path` on the file-system backend wrapped to fail as `plan` says. */
async function openFaulty(
  path: string,
  plan: FaultPlan,
  options: { format?: "binary" | "jsonl"; durability?: Durability; warnings?: string[] } = {},
) {
  let backend: FaultyBackend | undefined;
  const db = await openCairnOn({
    path,
    format: options.format,
    durability: options.durability,
    schemas: [Doc],
    onWarning: (warning) => options.warnings?.push(warning.message),
  }, async (directory) => (backend = faultyBackend(await openFsBackend(directory), plan)));
  return { db, backend: backend! };
}

/** What a plain (fault-free) reopening of the database at `path` holds in `/docs`. */
async function reopened(path: string) {
  const warnings: string[] = [];
  const db = await Cairn.open({
    path,
    schemas: [Doc],
    onWarning: (warning) => warnings.push(warning.message),
  });
  const repo = await db.open("/docs");
  const held = { contents: contents(repo), stats: repo.stats(), warnings };
  await db.close();
  return held;
}

for (const durability of ["relaxed", "durable"] as const) {
  test(`${durability}: a full disk fails flush and close without losing a write; with room again both succeed and a reopen finds every item`, async () => {
    await withTempDirectory("write-failures", async (path) => {
      const plan = new FailingCalls();
      const { db, backend } = await openFaulty(path, plan, { durability });
      const repo = await db.open("/docs");
      for (let i = 0; i < 20; i++) {
        repo.create(Doc, { title: `before ${i}`, n: i }, { key: `a${i}` });
      }
      await db.flush();

      plan.diskFull();
      // Writes still succeed in memory; their commit fails, as do flushes.
      const during = repo.create(Doc, { title: "during", n: -1 }, { key: "during" });
      await assert.rejects(during.commit(), hasCode("E_IO"));
      repo.get("a3", Doc)!.set("title", "edited during the outage");
      repo.get("a4", Doc)!.delete();
      for (let i = 0; i < 10; i++) repo.create(Doc, { title: `later ${i}` }, { key: `b${i}` });
      await assert.rejects(repo.flush(), hasCode("E_IO"));
      await assert.rejects(db.flush(), hasCode("E_IO"));
      assert.ok(backend.faults.failed.append > 0, "the disk was full for the log");

      // close() does not pretend: it fails, and keeps the repository (and everything in it).
      await assert.rejects(db.close(), hasCode("E_IO"));
      const expected = contents(repo);
      assert.equal(expected.length, 30);
      assert.equal(repo.get("a3", Doc)!.get("title"), "edited during the outage");
      assert.throws(() => repo.create(Doc, { title: "x" }), hasCode("E_CLOSED"));
      assert.equal(await db.open("/docs"), repo, "the closing repository is still the open one");
      await assert.rejects(db.close(), hasCode("E_IO"), "still full: close fails again");

      plan.clear();
      await db.close();
      await assert.rejects(db.open("/docs"), hasCode("E_CLOSED"));
      const held = await reopened(path);
      assert.deepEqual(held.contents, expected);
      assert.deepEqual(held.stats, { damaged: [], tornTailBytes: 0, unloadable: [] });
    });
  });
}

test("a flush after the disk has room again covers the writes whose commit failed", async () => {
  await withTempDirectory("write-failures", async (path) => {
    const plan = new FailingCalls();
    const { db } = await openFaulty(path, plan, { durability: "durable" });
    const repo = await db.open("/docs");
    plan.diskFull();
    const lost = repo.create(Doc, { title: "not yet stored" }, { key: "first" });
    await assert.rejects(lost.commit(), hasCode("E_IO"));
    plan.clear();
    // A later item's commit writes the earlier block first: both are stored when it resolves.
    await repo.create(Doc, { title: "second" }, { key: "second" }).commit();
    const expected = contents(repo);
    await db.close();
    assert.deepEqual((await reopened(path)).contents, expected);
  });
});

test("no checkpoint is written while blocks wait to be written; once they are, it matches the log", async () => {
  await withTempDirectory("write-failures", async (path) => {
    const plan = new FailingCalls();
    const { db } = await openFaulty(path, plan);
    const repo = await db.open("/docs");
    for (let i = 0; i < 20; i++) repo.create(Doc, { title: `t${i}`, n: i }, { key: `k${i}` });
    await db.flush();
    plan.failing.add("append"); // checkpoint writes still work: only the log is stuck
    repo.create(Doc, { title: "waiting" }, { key: "waiting" });
    await assert.rejects(db.close(), hasCode("E_IO"));
    assert.ok(
      !(await readdir(path)).some((file) => file.endsWith(".ckpt")),
      "a checkpoint of memory would name items the log lacks",
    );
    plan.clear();
    const expected = contents(repo);
    await db.close();
    assert.ok((await readdir(path)).some((file) => file.endsWith(".ckpt")));
    const held = await reopened(path);
    assert.deepEqual(held.contents, expected);
    assert.deepEqual(held.warnings, [], "the checkpoint matched the log");
  });
});

test("a checkpoint that cannot be written is reported and skipped; flush and close succeed", async () => {
  await withTempDirectory("write-failures", async (path) => {
    const plan = new FailingCalls();
    const warnings: string[] = [];
    const { db, backend } = await openFaulty(path, plan, { warnings });
    const repo = await db.open("/docs");
    for (let i = 0; i < 50; i++) repo.create(Doc, { title: `t${i}`, n: i }, { key: `k${i}` });
    plan.failing.add("writeFileAtomic");
    await db.flush();
    const expected = contents(repo);
    await db.close();
    assert.equal(backend.faults.failed.writeFileAtomic, 1, "the closing checkpoint failed");
    assert.ok(warnings.some((w) => /could not write its checkpoint/.test(w)), String(warnings));
    assert.ok(!(await readdir(path)).some((file) => file.endsWith(".ckpt")));
    assert.deepEqual((await reopened(path)).contents, expected);
  });
});

// ── fuzz: random faults under random writes, then recovery and reopen ──────────────────────

const replaySeed = envInteger("CAIRN_WRITE_FUZZ_SEED");
const schedules = envInteger("CAIRN_WRITE_FUZZ") ?? 30;

/**
 * One seeded schedule: creates, edits and deletes, commits, flushes and closes, while appends
 * write part of their bytes and fail, syncs, truncates and checkpoint writes fail, at random.
 * Then the failures stop, close() succeeds, and the reopened database equals what memory held.
 */
async function fuzzSchedule(seed: number, injected: Record<string, number>): Promise<void> {
  const random = seededRandom(seed);
  const format = random() < 0.5 ? "binary" : "jsonl";
  const durability: Durability = random() < 0.5 ? "relaxed" : "durable";
  const trace: string[] = [`${format} ${durability}`];
  await withTempDirectory("write-fuzz", async (path) => {
    const plan = new RandomFaults(random, {
      append: 0.3,
      sync: 0.3,
      truncate: 0.2,
      writeFileAtomic: 0.5,
    });
    plan.on = false; // opening writes the log's header: the failures start after it
    const { db, backend } = await openFaulty(path, plan, { format, durability, warnings: [] });
    const repo = await db.open("/docs");
    plan.on = true;
    try {
      let created = 0;
      const outcomes: Promise<unknown>[] = [];
      const expectIo = (promise: Promise<unknown>) => {
        const checked = promise.then(() => "ok", (err) => {
          if (!isCairnError(err, "E_IO")) throw err;
          return "E_IO";
        });
        outcomes.push(checked);
        return checked;
      };
      let closing = false;
      const steps = 10 + Math.floor(random() * 20);
      for (let step = 0; step < steps; step++) {
        const action = random();
        const keys = [...repo.keys()];
        if (closing) {
          trace.push("write refused while closing");
          assert.throws(() => repo.create(Doc, { title: "x" }), hasCode("E_CLOSED"));
          break;
        } else if (action < 0.35 || keys.length === 0) {
          const count = 1 + Math.floor(random() * 5);
          trace.push(`create ${count}`);
          for (let i = 0; i < count; i++) {
            repo.create(Doc, { title: `item ${created}`, n: created }, { key: `k${created++}` });
          }
        } else if (action < 0.55) {
          const key = keys[Math.floor(random() * keys.length)];
          trace.push(`edit ${key}`);
          repo.get(key, Doc)!.set("n", Math.floor(random() * 1000));
        } else if (action < 0.62) {
          const key = keys[Math.floor(random() * keys.length)];
          trace.push(`delete ${key}`);
          repo.get(key, Doc)!.delete();
        } else if (action < 0.75) {
          const key = keys[Math.floor(random() * keys.length)];
          trace.push(`commit ${key}: ${await expectIo(repo.get(key, Doc)!.commit())}`);
        } else if (action < 0.85) {
          trace.push(`repo.flush: ${await expectIo(repo.flush())}`);
        } else if (action < 0.95) {
          trace.push(`db.flush: ${await expectIo(db.flush())}`);
        } else {
          const before = contents(repo);
          const result = await expectIo(db.close());
          trace.push(`db.close: ${result}`);
          if (result === "ok") {
            assert.deepEqual((await reopened(path)).contents, before);
            return;
          }
          closing = true;
        }
      }
      await Promise.all(outcomes);
      const expected = contents(repo);
      plan.on = false;
      trace.push("failures stop; close");
      await db.close();
      const held = await reopened(path);
      assert.deepEqual(held.contents, expected, "the reopened database equals what memory held");
      assert.deepEqual(held.stats, { damaged: [], tornTailBytes: 0, unloadable: [] });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(
        `write-failure fuzz failed for seed ${seed}; replay it alone with ` +
          `CAIRN_WRITE_FUZZ_SEED=${seed} (e.g. CAIRN_WRITE_FUZZ_SEED=${seed} deno test -A ` +
          `test/server/write_failures.test.ts)\n${message}\nsteps:\n  ${trace.join("\n  ")}`,
        { cause: err },
      );
    } finally {
      for (const [call, n] of Object.entries(backend.faults.failed)) {
        injected[call] = (injected[call] ?? 0) + n;
      }
    }
  });
}

test(
  replaySeed === undefined
    ? `write-failure fuzz through Cairn: ${schedules} seeded fault schedules, then a reopen equals memory (CAIRN_WRITE_FUZZ=N for more)`
    : `write-failure fuzz through Cairn: replay of seed ${replaySeed}`,
  { timeout: 300_000 },
  async () => {
    const seeds = replaySeed === undefined
      ? Array.from({ length: schedules }, (_, i) => 20260701 + i)
      : [replaySeed];
    const injected: Record<string, number> = {};
    for (const seed of seeds) await fuzzSchedule(seed, injected);
    if (seeds.length >= 20) {
      for (const call of ["append", "sync", "truncate", "writeFileAtomic"]) {
        assert.ok(injected[call] > 0, `the fuzz never failed a ${call}`);
      }
    }
  },
);
