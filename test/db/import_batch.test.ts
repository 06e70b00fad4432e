/**
 * An import of a list of blocks checks blocks ahead of the one it applies (their signatures
 * verified in parallel where the runtime can); the outcome must be the one of importing the same
 * frames one call each: the same blocks applied or refused, with the same errors, and the same
 * items. Seeded: a mix of good blocks from two writers, blocks with a bad signature, blocks by a
 * stranger, garbage and repeated frames among the genuine ones. Two lists imported into one
 * repository at the same moment end as one import of them all.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema, type ImportReport } from "cairndb";
import { joinFrame, snapshot, splitFrame } from "../harness/peers.ts";
import { seededRandom } from "../harness/random.ts";

const Note = defineSchema({
  ns: "note",
  version: 1,
  fields: { title: { type: "string", required: true }, likes: { type: "counter" } },
});
const PATH = "/notes";
const SEED = 20261127;

/** `count` blocks of one item write each (a flush apiece) by a new in-memory peer. */
async function writer(name: string, count: number): Promise<{ db: Cairn; frames: Uint8Array[] }> {
  const db = await Cairn.open({ schemas: [Note] });
  const repo = await db.open(PATH);
  for (let i = 0; i < count; i++) {
    const key = `${name}${i % 7}`;
    if (repo.has(key)) repo.get(key, Note)!.update({ title: `${name} ${i}` });
    else repo.create(Note, { title: `${name} ${i}` }, { key });
    await repo.flush();
  }
  return { db, frames: await repo.exportBlocks() };
}

function outcome(report: ImportReport, offset = 0) {
  return report.rejected.map((
    { index, session, seq, error },
  ) => [index + offset, session, seq, error.code]);
}

/** Two writers' genuine blocks, interleaved, with junk before some of them (seeded). */
async function seededMix() {
  const random = seededRandom(SEED);
  const alice = await writer("a", 60);
  const bob = await writer("b", 60);
  const mallory = await writer("m", 5);
  const frames: Uint8Array[] = [];
  const a = [...alice.frames];
  const b = [...bob.frames];
  while (a.length + b.length > 0) {
    const from = a.length === 0 ? b : b.length === 0 || random() < 0.5 ? a : b;
    const frame = from.shift()!;
    // Before the genuine frame, now and then: a copy with a flipped signature bit, a stranger's
    // block, garbage, or a frame sent earlier.
    const roll = random();
    if (roll < 0.08) {
      const { body, signature } = splitFrame(frame);
      const bad = signature.slice();
      bad[Math.floor(random() * bad.length)] ^= 1 << Math.floor(random() * 8);
      frames.push(joinFrame({ body, signature: bad }));
    } else if (roll < 0.12) {
      frames.push(mallory.frames[Math.floor(random() * mallory.frames.length)]);
    } else if (roll < 0.15) {
      frames.push(Uint8Array.from({ length: 20 }, () => Math.floor(random() * 256)));
    } else if (roll < 0.2 && frames.length > 0) {
      frames.push(frames[Math.floor(random() * frames.length)]);
    }
    frames.push(frame);
  }
  assert.ok(frames.length > 100);

  return { alice, bob, mallory, frames };
}

test(`a list imported at once ends as the same frames imported one by one (seed ${SEED})`, async () => {
  const { alice, bob, mallory, frames } = await seededMix();
  const trust = [alice.db.session.publicKey, bob.db.session.publicKey];
  const atOnce = await Cairn.open({ schemas: [Note], trust });
  const oneByOne = await Cairn.open({ schemas: [Note], trust });
  const together = await (await atOnce.open(PATH)).importBlocks(frames);
  const single = await oneByOne.open(PATH);
  const each = { applied: 0, duplicates: 0, rejected: [] as ReturnType<typeof outcome> };
  for (const [i, frame] of frames.entries()) {
    const report = await single.importBlocks([frame]);
    each.applied += report.applied;
    each.duplicates += report.duplicates;
    each.rejected.push(...outcome(report, i));
  }
  assert.deepEqual(
    { applied: together.applied, duplicates: together.duplicates, rejected: outcome(together) },
    each,
    `seed ${SEED}`,
  );
  assert.equal(together.applied, 120, "every genuine block applied");
  assert.deepEqual(
    new Set(together.rejected.map(({ error }) => error.code)),
    new Set(["E_BAD_SIGNATURE", "E_UNTRUSTED_SESSION", "E_CORRUPT_ENCODING"]),
    "the mix has every kind of refusal",
  );
  const keys = [...Array(7).keys()].flatMap((i) => [`a${i}`, `b${i}`]);
  assert.deepEqual(
    snapshot(await atOnce.open(PATH), keys),
    snapshot(single, keys),
    `seed ${SEED}`,
  );
  for (const db of [alice.db, bob.db, mallory.db, atOnce, oneByOne]) await db.close();
});

test(`two lists imported into one repository at the same moment apply each block once (seed ${SEED})`, async () => {
  const { alice, bob, mallory, frames } = await seededMix();
  const trust = [alice.db.session.publicKey, bob.db.session.publicKey];
  // Overlapping halves, the second in reverse: a chain's later block may come before its
  // predecessor in one list, and the other list brings that predecessor meanwhile.
  const first = frames.slice(0, Math.ceil(frames.length * 0.6));
  const second = frames.slice(Math.floor(frames.length * 0.4)).reverse();
  const racing = await Cairn.open({ schemas: [Note], trust });
  const repo = await racing.open(PATH);
  const reports = await Promise.all([repo.importBlocks(first), repo.importBlocks(second)]);
  // What a gap kept out comes with a second exchange, as sync does it.
  await repo.importBlocks(frames);

  const reference = await Cairn.open({ schemas: [Note], trust });
  const single = await reference.open(PATH);
  await single.importBlocks(frames);
  const keys = [...Array(7).keys()].flatMap((i) => [`a${i}`, `b${i}`]);
  assert.deepEqual(snapshot(repo, keys), snapshot(single, keys), `seed ${SEED}`);
  assert.deepEqual(repo.versionVector(), single.versionVector(), `seed ${SEED}`);
  const applied = reports.reduce((sum, report) => sum + report.applied, 0);
  assert.ok(applied <= 120, `no block applied twice (${applied})`);
  for (const db of [alice.db, bob.db, mallory.db, racing, reference]) await db.close();
});
