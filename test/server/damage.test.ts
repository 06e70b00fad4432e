/**
 * A damaged record in the middle of a log costs only the items whose history passes through it,
 * and a peer that holds the lost blocks restores them through the usual exchange, after which
 * the log is whole again (docs/storage.md, "Damage and repair").
 *
 * The writer works in rounds, one block per round, and keeps every item's value after each
 * round. Damaging round d's record must leave each item that round d touched as it was before
 * round d (its later commits wait for the lost one), and every other item as it is at the end.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { logFormatNamed } from "../../src/storage/log_convert.ts";
import { recordSpans } from "../harness/log_records.ts";
import { seededRandom } from "../harness/random.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";
import { Cairn, type CairnWarning, defineSchema, type RepositoryHandle } from "cairndb";
import { TITLE_AND_NUMBER } from "../harness/schemas.ts";

const Note = defineSchema(TITLE_AND_NUMBER);

const TRIALS = Number(process.env.CAIRN_FUZZ ?? 40);
const SEED = Number(process.env.CAIRN_FUZZ_SEED ?? 20261125);

type Values = Map<string, string>;

function valuesOf(repo: RepositoryHandle): Values {
  const values: Values = new Map();
  for (const key of repo.keys()) values.set(key, JSON.stringify(repo.get(key, Note)!.toObject()));
  return values;
}

interface Written {
  /** Item values after each round (index r: after round r). */
  readonly after: Values[];
  /** Keys each round wrote. */
  readonly touched: Set<string>[];
  /** A peer that imported every block: the source of the repair. */
  readonly peer: Cairn;
  readonly peerRepo: RepositoryHandle;
}

/** Rounds of random creates, updates and deletes, one flushed block per round. */
async function writeRounds(
  repo: RepositoryHandle,
  db: Cairn,
  rounds: number,
  random: () => number,
): Promise<Written> {
  const after: Values[] = [];
  const touched: Set<string>[] = [];
  let next = 0;
  for (let round = 0; round < rounds; round++) {
    const keys = new Set<string>();
    const ops = 2 + Math.floor(random() * 5);
    for (let op = 0; op < ops; op++) {
      const live = [...repo.keys()];
      const pick = random();
      if (live.length < 4 || pick < 0.35) {
        const key = `k${next++}`;
        repo.create(Note, { title: `t${round}.${op}`, n: round }, { key });
        keys.add(key);
      } else {
        const key = live[Math.floor(random() * live.length)];
        if (pick < 0.85) repo.get(key, Note)!.set("title", `u${round}.${op}`);
        else repo.get(key, Note)!.delete();
        keys.add(key);
      }
    }
    await repo.flush();
    after.push(valuesOf(repo));
    touched.push(keys);
  }
  const peer = await Cairn.open({ trust: [db.session.publicKey] });
  const peerRepo = await peer.open(repo.path);
  const report = await peerRepo.importBlocks(await repo.exportBlocks());
  assert.deepEqual(report.rejected, []);
  return { after, touched, peer, peerRepo };
}

/** What each item must hold when `damaged` rounds' blocks are lost. */
function expectedAfterLoss(written: Written, damaged: readonly number[]): Values {
  const final = written.after[written.after.length - 1];
  const expected: Values = new Map(final);
  const decided = new Set<string>();
  for (const round of [...damaged].sort((a, b) => a - b)) {
    const before = round === 0 ? new Map() : written.after[round - 1];
    for (const key of written.touched[round]) {
      if (decided.has(key)) continue;
      decided.add(key);
      if (before.has(key)) expected.set(key, before.get(key)!);
      else expected.delete(key);
    }
  }
  return expected;
}

async function damagedRecordsIn(path: string, logName: string, format: "binary" | "jsonl") {
  const suite = await cryptoSuite();
  const scan = await logFormatNamed(format).scan(await readFile(join(path, logName)), suite);
  return scan.damaged.length;
}

for (const format of ["binary", "jsonl"] as const) {
  test(`${format}: a damaged record costs only the items whose history passes through it; a peer repairs it (seed ${SEED}, ${TRIALS} trials)`, async () => {
    const logName = format === "binary" ? "notes.log" : "notes.jsonl";
    for (let trial = 0; trial < TRIALS; trial++) {
      const seed = SEED + trial;
      const random = seededRandom(seed);
      const where = `seed ${seed}`;
      await withTempDirectory("damage", async (path) => {
        const db = await Cairn.open({ path, format });
        const repo = await db.open("/notes");
        const rounds = 20 + Math.floor(random() * 20);
        const written = await writeRounds(repo, db, rounds, random);
        const final = written.after[rounds - 1];
        await db.close();

        // Damage one or two records, never the last (a damaged last record is a torn tail).
        const bytes = new Uint8Array(await readFile(join(path, logName)));
        const spans = recordSpans(format, bytes);
        assert.equal(spans.length, rounds, `${where}: one record per round`);
        const damaged = new Set<number>();
        const count = 1 + Math.floor(random() * 2);
        while (damaged.size < count) damaged.add(Math.floor(random() * (rounds - 1)));
        for (const round of damaged) {
          const [start, end] = spans[round];
          const at = start + 12 + Math.floor(random() * (end - start - 13));
          bytes[at] ^= 1 << Math.floor(random() * 8);
        }
        await writeFile(join(path, logName), bytes);

        const warnings: CairnWarning[] = [];
        const again = await Cairn.open({ path, onWarning: (w) => warnings.push(w) });
        const reopened = await again.open("/notes");
        const expected = expectedAfterLoss(written, [...damaged]);
        assert.deepEqual(valuesOf(reopened), expected, `${where}: damaged rounds ${[...damaged]}`);
        // Adjacent damaged records are reported as one run of bad bytes.
        const runs = [...damaged].filter((round) => !damaged.has(round - 1)).length;
        assert.equal(reopened.stats().damaged.length, runs, where);
        const missing = reopened.missingHistory();
        const lost = missing.blocks.reduce((n, run) => n + run.last - run.first + 1, 0);
        assert.equal(lost, damaged.size, `${where}: every lost block is named`);
        assert.ok(warnings.some((w) => w.message.includes("history lost to damage")), where);

        // Repair: the usual exchange with a peer that holds the blocks.
        const since = reopened.versionVector();
        const report = await reopened.importBlocks(await written.peerRepo.exportBlocks(since));
        assert.deepEqual(report.rejected, [], where);
        assert.equal(report.applied, damaged.size, `${where}: the lost blocks come back`);
        assert.deepEqual(valuesOf(reopened), final, `${where}: repaired`);
        assert.deepEqual(reopened.missingHistory(), {
          blocks: [],
          heldBackCommits: 0,
          heldBackItems: 0,
        });
        await again.flush();
        assert.equal(await damagedRecordsIn(path, logName, format), 0, `${where}: log whole again`);

        // A new peer gets everything, in an order it can import.
        const fresh = await Cairn.open({ trust: [db.session.publicKey] });
        const freshRepo = await fresh.open("/notes");
        const all = await freshRepo.importBlocks(await reopened.exportBlocks());
        assert.deepEqual(all.rejected, [], where);
        assert.deepEqual(valuesOf(freshRepo), final, where);
        await again.close();

        // Reopened: no warning, nothing missing, and new writes continue the chain.
        const quiet: CairnWarning[] = [];
        const third = await Cairn.open({ path, onWarning: (w) => quiet.push(w) });
        const repaired = await third.open("/notes");
        assert.deepEqual(quiet, [], where);
        assert.deepEqual(valuesOf(repaired), final, where);
        repaired.create(Note, { title: "after repair" }, { key: "after" });
        const more = await freshRepo.importBlocks(
          await repaired.exportBlocks(freshRepo.versionVector()),
        );
        assert.deepEqual(more.rejected, [], where);
        assert.equal(freshRepo.get("after", Note)?.get("title"), "after repair", where);
        await third.close();
        await fresh.close();
        await written.peer.close();
      });
    }
  });
}

test("a lost block of another session: its commits wait, the repair comes from that peer, and exports keep a causal order", async () => {
  await withTempDirectory("damage-peer", async (path) => {
    const db = await Cairn.open({ path });
    const peer = await Cairn.open();
    await db.trust(peer.session.publicKey);
    await peer.trust(db.session.publicKey);
    const mine = await db.open("/shared");
    const theirs = await peer.open("/shared");
    // Alternate: the peer writes a block, we import it and build on it, and so on.
    for (let round = 0; round < 6; round++) {
      theirs.create(Note, { title: `peer ${round}` }, { key: `p${round}` });
      if (round > 0) theirs.get(`p${round - 1}`, Note)!.set("n", round);
      await mine.importBlocks(await theirs.exportBlocks(mine.versionVector()));
      mine.get(`p${round}`, Note)!.set("title", `seen ${round}`);
      mine.create(Note, { title: `mine ${round}` }, { key: `m${round}` });
      await mine.flush();
      await theirs.importBlocks(await mine.exportBlocks(theirs.versionVector()));
    }
    const final = valuesOf(mine);
    await db.close();

    // The peer's third block (record 4: peer, mine, peer, mine, peer…) is damaged.
    const file = join(path, "shared.log");
    const bytes = new Uint8Array(await readFile(file));
    const [start, end] = recordSpans("binary", bytes)[4];
    bytes[(start + end) >> 1] ^= 0x10;
    await writeFile(file, bytes);

    const again = await Cairn.open({ path, trust: [peer.session.publicKey], onWarning: () => {} });
    const reopened = await again.open("/shared");
    assert.deepEqual(reopened.missingHistory().blocks, [
      { session: peer.session.id, first: 3, last: 3 },
    ]);
    // p2 was created in the lost block: it is gone until the repair, and so are its later edits;
    // p1 got its `n` there. Items the lost block never touched are as they were.
    assert.equal(reopened.has("p2"), false);
    assert.equal(reopened.get("p1", Note)?.get("n"), undefined);
    assert.equal(reopened.get("m2", Note)?.get("title"), "mine 2");
    assert.equal(reopened.versionVector()[peer.session.id], 2, "asks the peer from the gap");

    const report = await reopened.importBlocks(
      await theirs.exportBlocks(reopened.versionVector()),
    );
    assert.deepEqual(report.rejected, []);
    assert.deepEqual(valuesOf(reopened), final);
    // A third database receives every block in an order it accepts.
    const third = await Cairn.open({ trust: [db.session.publicKey, peer.session.publicKey] });
    const thirdRepo = await third.open("/shared");
    const all = await thirdRepo.importBlocks(await reopened.exportBlocks());
    assert.deepEqual(all.rejected, []);
    assert.deepEqual(valuesOf(thirdRepo), final);
    await again.close();
    await third.close();
    await peer.close();
  });
});

test("writes to an item whose history was lost, made before the repair, merge with it like concurrent edits", async () => {
  await withTempDirectory("damage-write", async (path) => {
    const db = await Cairn.open({ path });
    const repo = await db.open("/notes");
    repo.create(Note, { title: "first" }, { key: "a" });
    repo.create(Note, { title: "other" }, { key: "b" });
    await repo.flush();
    repo.get("a", Note)!.set("n", 1); // the block that will be lost
    await repo.flush();
    repo.get("a", Note)!.set("n", 2);
    repo.get("b", Note)!.set("title", "other, edited");
    await repo.flush();
    const peer = await Cairn.open({ trust: [db.session.publicKey] });
    const peerRepo = await peer.open("/notes");
    await peerRepo.importBlocks(await repo.exportBlocks());
    await db.close();

    const file = join(path, "notes.log");
    const bytes = new Uint8Array(await readFile(file));
    const [start, end] = recordSpans("binary", bytes)[1];
    bytes[(start + end) >> 1] ^= 0x01;
    await writeFile(file, bytes);

    const again = await Cairn.open({ path, onWarning: () => {} });
    const reopened = await again.open("/notes");
    assert.equal(reopened.get("a", Note)?.get("n"), undefined, "as before the lost block");
    assert.equal(reopened.get("b", Note)?.get("title"), "other, edited", "not touched by it");
    reopened.get("a", Note)!.set("title", "written while damaged");
    await reopened.importBlocks(await peerRepo.exportBlocks(reopened.versionVector()));
    assert.deepEqual(reopened.missingHistory().blocks, []);
    // Both edits survive: the lost history and the write made without it.
    assert.deepEqual(reopened.get("a", Note)?.toObject(), { title: "written while damaged", n: 2 });
    await peerRepo.importBlocks(await reopened.exportBlocks(peerRepo.versionVector()));
    assert.deepEqual(valuesOf(peerRepo), valuesOf(reopened));
    await again.close();
    await peer.close();
  });
});

test("a log whose lost block was appended back before a crash opens whole and is written anew", async () => {
  await withTempDirectory("damage-late", async (path) => {
    const db = await Cairn.open({ path });
    const repo = await db.open("/notes");
    const written = await writeRounds(repo, db, 12, seededRandom(SEED));
    const final = written.after[11];
    await db.close();
    const file = join(path, "notes.log");
    const original = new Uint8Array(await readFile(file));
    const [start, end] = recordSpans("binary", original)[5];
    const damaged = original.slice();
    damaged[start + 20] ^= 0xff;
    // The state a repair leaves if the process dies before writing the log anew: the lost
    // block appended after everything else.
    await writeFile(file, new Uint8Array([...damaged, ...original.subarray(start, end)]));
    await rm(join(path, "notes.ckpt"), { force: true });

    const again = await Cairn.open({ path, onWarning: () => {} });
    const reopened = await again.open("/notes");
    assert.deepEqual(reopened.missingHistory().blocks, []);
    assert.deepEqual(valuesOf(reopened), final);
    await again.flush();
    assert.equal(await damagedRecordsIn(path, "notes.log", "binary"), 0);
    await again.close();
    await written.peer.close();
  });
});
