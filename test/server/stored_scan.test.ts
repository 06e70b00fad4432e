/**
 * The query oracle over repositories reopened from disk: a cold scan of a repository just opened
 * from its checkpoint tests each filter on the fields it reads from the stored bytes, and decodes
 * only the items that pass (query/registry.ts, storage/record_fields.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "cairndb";
import { seededRandom } from "../harness/random.ts";
import { TASK } from "../harness/schemas.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { check, localWrite, PlainNote, PlainNoteV2, randomQuery } from "../query/oracle_queries.ts";
import { int } from "../query/reference.ts";

/**
 * Items are written under two versions of one schema (the query's, and the one before, which an
 * upgrade turns into it). Every query is opened before anything reads the items (which would
 * decode them all); then each must equal a fresh scan, and a scan must have examined every
 * existing item. Items of the older version, deleted ones and ones written after the reopen take
 * the usual path beside the stored ones. Run in one go (Deno, Node) and in slices, as on a page.
 */
async function storedScans(seed: number, sliced: boolean): Promise<number> {
  const keys = Array.from({ length: 90 }, (_, i) => `s${i.toString(36)}`);
  let scans = 0;
  await withTempDirectory("stored-scan", async (dir) => {
    const rng = seededRandom(seed);
    const options = { path: dir, trusted: true, schemas: [PlainNote, PlainNoteV2] };
    const first = await Cairn.open(options);
    const written = await first.open("/stored");
    for (let n = 0; n < 160; n++) localWrite(rng, written, keys, PlainNoteV2);
    for (let n = 0; n < 40; n++) localWrite(rng, written, keys.map((k) => `o${k}`), PlainNote);
    await first.close();

    const db = await Cairn.open(options);
    try {
      const repo = await db.open("/stored");
      for (let n = int(rng, 0, 6); n > 0; n--) localWrite(rng, repo, keys, PlainNoteV2);
      const opened = Array.from(
        { length: 12 },
        () => randomQuery(rng, repo, undefined, PlainNoteV2),
      );
      await Promise.all(opened.map((open) => open.query.ready));
      const plans = opened.map((open) => open.query.explain());
      const existing = [...repo.keys()].length;
      opened.forEach((open, i) => {
        const where = `seed ${seed}${sliced ? " (sliced)" : ""} query ${i}`;
        check(repo, open, where);
        if (plans[i].mode !== "index") {
          scans++;
          assert.equal(plans[i].examined, existing, `${where}: items examined`);
        }
        open.query.close();
      });
    } finally {
      await db.close();
    }
  });
  return scans;
}

/** Makes this runtime look like a browser page to the scheduler, whose scans then run in slices. */
async function asOnAPage<T>(run: () => Promise<T>): Promise<T> {
  const global = globalThis as { document?: unknown };
  global.document = {};
  try {
    return await run();
  } finally {
    delete global.document;
  }
}

for (const sliced of [false, true]) {
  test(`cold scans of a reopened repository (${sliced ? "in slices" : "in one go"}) test filters on stored bytes as on decoded values`, async () => {
    let scans = 0;
    for (let seed = 1; seed <= 40; seed++) {
      try {
        scans += sliced
          ? await asOnAPage(() => storedScans(seed, true))
          : await storedScans(seed, false);
      } catch (err) {
        throw new Error(`stored scan failed at seed ${seed}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    assert.ok(scans > 300, `only ${scans} of 480 cold queries scanned`);
  });
}

const Task = defineSchema(TASK);

test("a scan cut into many slices reaches every item (the item map's iterator outlives each slice)", async () => {
  await asOnAPage(async () => {
    const db = await Cairn.open({ trusted: true, schemas: [Task] });
    const repo = await db.open("/data/sliced");
    for (let i = 0; i < 3_000; i++) repo.create(Task, { title: `t${i}`, done: i % 3 === 0 });
    // Every 100th item is slow to test, so every slice ends at its first deadline check
    // (each 256 items): the scan takes about a dozen slices, whatever the machine's speed.
    let tested = 0;
    const query = repo.query({
      schema: Task,
      where: (item) => {
        if (tested++ % 100 === 0) {
          const until = performance.now() + 9;
          while (performance.now() < until) { /* a slow predicate */ }
        }
        return item.get("done") === true;
      },
    });
    assert.equal(query.pending, true);
    const results = await query.ready;
    assert.equal(results.length, 1_000);
    assert.equal(query.explain().mode, "sliced scan");
    query.close();
    await db.close();
  });
});
