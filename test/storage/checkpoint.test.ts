import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isCairnError } from "../../src/core/errors.ts";
import type { Commit, FieldRecord } from "../../src/core/commit.ts";
import type { ItemSnapshot, RepositorySnapshot } from "../../src/core/snapshot.ts";
import { assertFieldRecord } from "../../src/core/wire_validation.ts";
import {
  type Checkpoint,
  decodeCheckpoint,
  encodeCheckpoint,
  encodeCheckpointInSlices,
} from "../../src/storage/checkpoint.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { HybridClock } from "../../src/core/hlc.ts";
import { defineSchema, SchemaRegistry } from "../../src/core/schema.ts";
import { Repository } from "../../src/repo/repository.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { commit as commitArb, fieldRecord } from "../harness/arbitrary.ts";
import { seededRandom } from "../harness/random.ts";

const LOG = { length: 12_345, crc: 0xdeadbeef };
const HEADER = 12;

interface Item {
  key: string;
  state: ItemSnapshot;
}

/**
 * Any item a repository can hold: one to three leaves of any kind; a value or none; the first
 * leaf's full value, when chosen, being the item's value itself (the common single-leaf case).
 */
const itemArb: fc.Arbitrary<Item> = fc.record({
  key: fc.string({ maxLength: 20 }),
  leaves: fc.array(commitArb, { minLength: 1, maxLength: 3 }),
  wire: fc.option(fieldRecord, { nil: undefined }),
  valueIsFirstLeaf: fc.boolean(),
  schema: fc.stringMatching(/^[a-z]{1,6}@[1-9]$/),
  deltas: fc.oneof(fc.nat(40), fc.constant(Infinity)),
}, { noNullPrototype: true }).map(({ key, leaves, wire, valueIsFirstLeaf, schema, deltas }) => {
  const own: Commit[] = leaves.map((leaf) => ({ ...leaf, key }));
  if (valueIsFirstLeaf && wire !== undefined) {
    const { session, seq, key: ownKey, hlc, parents, schema: leafSchema } = own[0];
    own[0] = {
      session,
      seq,
      key: ownKey,
      hlc,
      parents,
      schema: leafSchema,
      kind: "value",
      value: wire,
    };
  }
  return { key, state: { leaves: own, wire, schema, deltas } };
});

const snapshotArb: fc.Arbitrary<RepositorySnapshot> = fc.record({
  commitSeq: fc.nat(1e9),
  tips: fc.array(
    fc.tuple(fc.string({ maxLength: 8 }), fc.nat(1e6), fc.string({ maxLength: 12 }), fc.nat(1e6)),
    { maxLength: 3 },
  ),
  items: fc.uniqueArray(itemArb, { selector: (item) => item.key, maxLength: 12 }),
}, { noNullPrototype: true }).map(({ commitSeq, tips, items }) => ({
  commitSeq,
  tips: new Map(tips.map(([session, seq, hash, lastCommitSeq]) => [session, {
    seq,
    hash,
    lastCommitSeq,
  }])),
  items: items.map(({ key, state }) => [key, state] as const),
}));

/** An item as plain data to compare; `live` as the checkpoint tells it, or from its value. */
function plain(key: string, state: ItemSnapshot, live = state.wire !== undefined) {
  const { wire, schema, deltas } = state;
  return { key, live, wire, schema, deltas, leaves: state.leaves.map((leaf) => ({ ...leaf })) };
}

/** What a decoded checkpoint holds, read through its lazy items. */
function contents(checkpoint: Checkpoint) {
  const { items } = checkpoint;
  return {
    log: [checkpoint.logLength, checkpoint.logCrc],
    commitSeq: checkpoint.commitSeq,
    tips: checkpoint.tips,
    items: Array.from(
      { length: items.count },
      (_, i) => plain(items.keyAt(i), items.itemAt(i), items.isLive(i)),
    ),
    liveCount: items.liveCount,
  };
}

/** What `contents` must give for a checkpoint of `snapshot`. */
function expected(snapshot: RepositorySnapshot) {
  const items = snapshot.items.map(([key, state]) => plain(key, state));
  return {
    log: [LOG.length, LOG.crc],
    commitSeq: snapshot.commitSeq,
    tips: snapshot.tips,
    items,
    liveCount: items.filter((item) => item.live).length,
  };
}

/** A checkpoint with `payload` changed, its checksum made to match again. */
function withValidCrc(file: Uint8Array, change: (payload: Uint8Array) => void): Uint8Array {
  const copy = file.slice();
  change(copy.subarray(HEADER));
  new DataView(copy.buffer).setUint32(8, crc32c(copy.subarray(HEADER)), true);
  return copy;
}

test("every item, value and leaf comes back from a checkpoint, for any snapshot", () => {
  fc.assert(
    fc.property(snapshotArb, (snapshot) => {
      const decoded = decodeCheckpoint(encodeCheckpoint(snapshot, LOG));
      assert.deepEqual(contents(decoded), expected(snapshot));
    }),
    { seed: 0xc4e7, numRuns: 300 },
  );
});

test("a checkpoint built in slices is the same file, with a pause between every two steps", async () => {
  const many = fc.sample(itemArb, { seed: 0x511ce, numRuns: 1500 });
  const unique = [...new Map(many.map((item) => [item.key, item])).values()];
  const large = {
    commitSeq: 7,
    tips: new Map(),
    items: unique.map((i) => [i.key, i.state] as const),
  };
  const snapshots = [large, ...fc.sample(snapshotArb, { seed: 0x511cf, numRuns: 40 })];
  for (const snapshot of snapshots) {
    let pauses = 0;
    const pause = () => {
      pauses++;
      return Promise.resolve();
    };
    const sliced = await encodeCheckpointInSlices(snapshot, LOG, { sliceMs: 0, pause });
    assert.deepEqual(sliced, encodeCheckpoint(snapshot, LOG));
    assert.deepEqual(contents(decodeCheckpoint(sliced)), expected(snapshot));
    // Every 256 items, the nine columns, the two texts, the joined file: each ends a step.
    const steps = Math.floor(snapshot.items.length / 256) + 9 + 2 + 1;
    assert.equal(pauses, steps, `${snapshot.items.length} items`);
    // With time to spare, no pause at all.
    pauses = 0;
    await encodeCheckpointInSlices(snapshot, LOG, { sliceMs: 60_000, pause });
    assert.equal(pauses, 0);
  }
  assert.ok(large.items.length > 1000, `${large.items.length} distinct items`);
  // The default pause: the event loop's next turn (a task of its own).
  const turns = await encodeCheckpointInSlices(large, LOG, { sliceMs: 0 });
  assert.deepEqual(turns, encodeCheckpoint(large, LOG));
});

test("writes made between the slices of a repository's checkpoint do not reach it", async () => {
  const Note = defineSchema({
    ns: "note",
    version: 1,
    fields: { title: { type: "string", required: true }, n: { type: "number" } },
  });
  const registry = new SchemaRegistry();
  registry.register(Note);
  const repo = new Repository("/notes", {
    session: "sliced-checkpoint-test",
    publicKey: new Uint8Array(32),
    signer: null,
    suite: await cryptoSuite(),
    registry,
    clock: new HybridClock(),
    isTrusted: () => true,
  });
  const note = (i: number, n: number) => Note.createWire({ title: `note ${i}`, n });
  for (let i = 0; i < 2000; i++) repo.create(`k${i}`, Note.id, note(i, i));
  for (let i = 0; i < 2000; i += 7) repo.writeChange(`k${i}`, Note.id, note(i, -i), { n: -i }, []);
  for (let i = 3; i < 2000; i += 11) repo.delete(`k${i}`);
  await repo.flush();
  const snapshot = repo.snapshot()!;
  const file = encodeCheckpoint(snapshot, LOG);

  let round = 0;
  const writeSome = async () => {
    round++;
    const live = (key: string) => repo.value(key) !== undefined;
    // Updates (as a delta and as a full value), a delete, a deleted item back, a new item.
    const [delta, full, gone, back] = [round, round + 500, round + 1000, 3 + 11 * round];
    if (live(`k${delta}`)) repo.writeChange(`k${delta}`, Note.id, note(delta, 1e6), { n: 1e6 }, []);
    if (live(`k${full}`)) repo.writeValue(`k${full}`, Note.id, note(full, 2e6));
    if (live(`k${gone}`)) repo.delete(`k${gone}`);
    if (!live(`k${back}`)) repo.create(`k${back}`, Note.id, note(back, 3e6));
    repo.create(`new${round}`, Note.id, note(round, 4e6));
    await repo.flush(); // sealed into a block between two slices
  };
  const sliced = await encodeCheckpointInSlices(snapshot, LOG, { sliceMs: 0, pause: writeSome });
  assert.ok(round > 10, `${round} pauses with writes`);
  assert.notDeepEqual(encodeCheckpoint(repo.snapshot()!, LOG), file, "the writes changed items");
  assert.deepEqual(sliced, file);
});

test("keys are found by the index, and a leaf by session and seq is its item's own object", () => {
  fc.assert(
    fc.property(snapshotArb, fc.string({ maxLength: 20 }), (snapshot, other) => {
      const { items, leaf } = decodeCheckpoint(encodeCheckpoint(snapshot, LOG));
      const ids = new Map<string, number>();
      snapshot.items.forEach(([key, state], i) => {
        assert.equal(items.indexOf(key), i);
        for (const l of state.leaves) {
          ids.set(`${l.session}.${l.seq}`, (ids.get(`${l.session}.${l.seq}`) ?? 0) + 1);
        }
      });
      if (!snapshot.items.some(([key]) => key === other)) assert.equal(items.indexOf(other), -1);
      for (let i = 0; i < items.count; i++) {
        for (const own of items.itemAt(i).leaves) {
          if (ids.get(`${own.session}.${own.seq}`) === 1) {
            assert.equal(leaf(own.session, own.seq), own);
          }
        }
      }
      assert.equal(leaf("no such session", 1), undefined);
    }),
    { seed: 0x1eaf, numRuns: 200 },
  );
});

test("re-encoding restored items copies their bytes: the same file, read or not", () => {
  fc.assert(
    fc.property(snapshotArb, fc.boolean(), (snapshot, read) => {
      const file = encodeCheckpoint(snapshot, LOG);
      const { items, tips, commitSeq } = decodeCheckpoint(file);
      const restored: [string, ItemSnapshot][] = [];
      for (let i = 0; i < items.count; i++) {
        const state = items.itemAt(i);
        if (read) void state.wire, state.leaves;
        restored.push([items.keyAt(i), state]);
      }
      assert.deepEqual(encodeCheckpoint({ commitSeq, tips, items: restored }, LOG), file);
    }),
    { seed: 0xc097, numRuns: 200 },
  );
});

test("restored and changed items together re-encode to what they hold", () => {
  fc.assert(
    fc.property(snapshotArb, snapshotArb, (first, second) => {
      const { items } = decodeCheckpoint(encodeCheckpoint(first, LOG));
      const keys = new Set(first.items.map(([key]) => key));
      // Every other restored item, then the second snapshot's items under other keys.
      const mixed: (readonly [string, ItemSnapshot])[] = [];
      for (let i = 0; i < items.count; i += 2) mixed.push([items.keyAt(i), items.itemAt(i)]);
      for (const [key, state] of second.items) if (!keys.has(key)) mixed.push([key, state]);
      const snapshot = { commitSeq: 1, tips: new Map(), items: mixed };
      const decoded = decodeCheckpoint(encodeCheckpoint(snapshot, LOG));
      assert.deepEqual(contents(decoded), expected(snapshot));
    }),
    { seed: 0x3a11, numRuns: 150 },
  );
});

test("the common item costs no leaf value: its one leaf's full value is the item's value", () => {
  const value: FieldRecord = { title: "x".repeat(1000) };
  const leaf: Commit = {
    session: "s",
    seq: 1,
    key: "k",
    hlc: 1,
    parents: [],
    schema: "a@1",
    kind: "value",
    value,
  };
  const state = { leaves: [leaf], wire: value, schema: "a@1", deltas: 0 };
  const file = encodeCheckpoint({ commitSeq: 1, tips: new Map(), items: [["k", state]] }, LOG);
  assert.ok(file.length < 1200, `${file.length} bytes: the value is stored once`);
  const restored = decodeCheckpoint(file).items.itemAt(0);
  assert.equal(
    restored.leaves[0].kind === "value" && restored.leaves[0].value,
    restored.wire,
  );
});

/** A checkpoint of realistic content: deltas, deletes, several leaves, parents. */
function sampleFile(): Uint8Array {
  const items: [string, ItemSnapshot][] = [];
  for (let i = 0; i < 40; i++) {
    const key = `item-${i}`;
    const wire = {
      title: `t${i}`,
      n: i * 1.5,
      tags: ["a", `b${i}`],
      meta: { x: [1, { y: null }] },
    };
    const base = { session: `s${i % 3}`, seq: i + 1, key, hlc: 1000 + i, schema: "doc@1" };
    const leaves: Commit[] = i % 4 === 0
      ? [{ ...base, parents: [`s0.${i}`], kind: "delta", set: { n: i }, unset: ["x"] }]
      : i % 4 === 1
      ? [{ ...base, parents: [], kind: "delete" }]
      : i % 4 === 2
      ? [
        { ...base, parents: [`s1.${i}`], kind: "value", value: { title: "other" } },
        { ...base, seq: i + 100, parents: [`s1.${i}`], kind: "delete" },
      ]
      : [{ ...base, parents: [], kind: "value", value: wire }];
    items.push([key, { leaves, wire: i % 4 === 1 ? undefined : wire, schema: "doc@1", deltas: i }]);
  }
  return encodeCheckpoint({
    commitSeq: 40,
    tips: new Map([["s0", { seq: 3, hash: "h", lastCommitSeq: 40 }]]),
    items,
  }, LOG);
}

/** Decodes, then reads everything the way a repository would: it must all work. */
function readAll(file: Uint8Array): void {
  const { items, leaf } = decodeCheckpoint(file);
  const restored: [string, ItemSnapshot][] = [];
  for (let i = 0; i < items.count; i++) {
    const state = items.itemAt(i);
    const key = items.keyAt(i);
    assert.equal(typeof key, "string");
    assert.equal(items.isLive(i), state.wire !== undefined);
    if (state.wire !== undefined) assertFieldRecord(state.wire, "value");
    for (const commit of state.leaves) {
      assert.equal(leaf(commit.session, commit.seq) !== undefined, true);
      if (commit.kind === "value") assertFieldRecord(commit.value, "leaf value");
      if (commit.kind === "delta") {
        assertFieldRecord(commit.set, "leaf delta");
        assert.ok(commit.unset.every((name) => typeof name === "string"));
      }
    }
    restored.push([key, state]);
  }
  encodeCheckpoint({ commitSeq: 0, tips: new Map(), items: restored }, LOG);
}

test("a flipped byte or a cut anywhere is E_CORRUPT_ENCODING, never another error", () => {
  const file = sampleFile();
  readAll(file);
  for (let at = 0; at < file.length; at++) {
    const flipped = file.slice();
    flipped[at] ^= 1 << (at % 8);
    assert.throws(
      () => decodeCheckpoint(flipped),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
    );
    assert.throws(
      () => decodeCheckpoint(file.subarray(0, at)),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      `cut at ${at}`,
    );
  }
});

test("hostile bytes with a valid checksum: refused as E_CORRUPT_ENCODING, or every read works", () => {
  const file = sampleFile();
  const seed = 0x5eed17;
  const random = seededRandom(seed);
  let accepted = 0;
  for (let run = 0; run < 3000; run++) {
    const changes = 1 + Math.floor(random() * 3);
    const hostile = withValidCrc(file, (payload) => {
      for (let c = 0; c < changes; c++) {
        payload[Math.floor(random() * payload.length)] = Math.floor(random() * 256);
      }
    });
    try {
      readAll(hostile);
      accepted++;
    } catch (err) {
      assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), `seed ${seed}, run ${run}: ${err}`);
    }
  }
  assert.ok(accepted > 0, "some changes leave a valid checkpoint (a value's text, say)");
});

test("a checkpoint of another version is refused: it is rebuilt from the log", () => {
  const file = sampleFile();
  for (const version of [1, 3]) {
    const other = file.slice();
    new DataView(other.buffer).setUint16(6, version, true);
    assert.throws(
      () => decodeCheckpoint(other),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING") && /version/.test((err as Error).message),
    );
  }
});
