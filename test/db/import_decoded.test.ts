/**
 * A sync server's stores hand their repository blocks they decoded already (DecodedBlock), so a
 * pushed block is decoded once. Such a block must be checked exactly as its bytes would be: its
 * signature verified, its author trusted, its chain and commits checked. And nothing given to
 * the public importBlocks may pass for one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, repositoryOf } from "../../src/db/database.ts";
import { decodeBlock } from "../../src/core/block.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { DecodedBlock, type ImportReport } from "../../src/repo/repository.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { joinFrame, splitFrame } from "../harness/peers.ts";

const Note = defineSchema({ ns: "note", version: 1, fields: { title: { type: "string" } } });
const PATH = "/notes";

async function framesOf(db: Cairn, count: number): Promise<Uint8Array[]> {
  const repo = await db.open(PATH);
  for (let i = 0; i < count; i++) {
    repo.create(Note, { title: `note ${i}` });
    await repo.flush();
  }
  return await repo.exportBlocks();
}

function outcome(report: ImportReport) {
  const { applied, duplicates, rejected } = report;
  return { applied, duplicates, rejected: rejected.map(({ index, error }) => [index, error.code]) };
}

test("blocks given decoded are checked as their bytes are: forged, untrusted and repeated ones refused alike", async () => {
  const suite = await cryptoSuite();
  const alice = await Cairn.open({ schemas: [Note] });
  const mallory = await Cairn.open({ schemas: [Note] });
  const genuine = await framesOf(alice, 6);
  const { body, signature } = splitFrame(genuine[3]);
  const flipped = signature.slice();
  flipped[5] ^= 0x10;
  const frames = [
    genuine[0],
    genuine[1],
    joinFrame({ body, signature: flipped }), // forged: alice's block 4 with a bad signature
    genuine[2],
    (await framesOf(mallory, 1))[0], // a stranger's
    genuine[1], // repeated
    ...genuine.slice(3),
  ];
  const decoded = await Promise.all(
    frames.map(async (bytes) => new DecodedBlock(bytes, await decodeBlock(bytes, suite))),
  );
  const trust = [alice.session.publicKey];
  const asBytes = await Cairn.open({ schemas: [Note], trust });
  const asDecoded = await Cairn.open({ schemas: [Note], trust });
  const byBytes = await (await asBytes.open(PATH)).importBlocks(frames);
  await asDecoded.open(PATH);
  const byDecoded = await repositoryOf(asDecoded, PATH).importBlocks(decoded);

  assert.deepEqual(outcome(byDecoded), outcome(byBytes));
  assert.deepEqual(outcome(byDecoded), {
    applied: 6,
    duplicates: 1,
    rejected: [[2, "E_BAD_SIGNATURE"], [4, "E_UNTRUSTED_SESSION"]],
  });
  assert.deepEqual(
    (await asDecoded.open(PATH)).versionVector(),
    (await asBytes.open(PATH)).versionVector(),
  );
  for (const db of [alice, mallory, asBytes, asDecoded]) await db.close();
});

test("the public importBlocks takes no look-alike of a decoded block: refused as bytes that are not a block", async () => {
  const suite = await cryptoSuite();
  const alice = await Cairn.open({ schemas: [Note] });
  const [frame] = await framesOf(alice, 1);
  const lookAlike = { bytes: frame, sealed: await decodeBlock(frame, suite) };
  const db = await Cairn.open({ schemas: [Note], trust: [alice.session.publicKey] });
  const repo = await db.open(PATH);
  const report = await repo.importBlocks([lookAlike as unknown as Uint8Array]);
  assert.deepEqual(outcome(report), {
    applied: 0,
    duplicates: 0,
    rejected: [[0, "E_CORRUPT_ENCODING"]],
  });
  assert.equal((await repo.importBlocks([frame])).applied, 1, "its bytes still import");
  for (const each of [alice, db]) await each.close();
});
