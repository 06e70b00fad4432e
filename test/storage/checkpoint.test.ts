import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { isCairnError } from "../../src/core/errors.ts";
import type { Commit, FieldRecord, WireValue } from "../../src/core/commit.ts";
import type { ItemState } from "../../src/core/item_state.ts";
import type { RepositorySnapshot } from "../../src/core/snapshot.ts";
import { assertFieldRecord } from "../../src/core/wire_validation.ts";
import {
  type Checkpoint,
  decodeCheckpoint,
  encodeCheckpoint,
  encodeCheckpointInSlices,
} from "../../src/storage/checkpoint.ts";
import type { CheckpointOwner } from "../../src/storage/checkpoint_seal.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { packValue, unpackBytes } from "../../src/core/commit_codec.ts";
import { defineSchema } from "../../src/core/schema.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { commit as commitArb, fieldRecord } from "../harness/arbitrary.ts";
import { seededRandom } from "../harness/random.ts";
import { trustedRepository } from "../harness/repositories.ts";
import { TITLE_AND_NUMBER } from "../harness/schemas.ts";

const LOG = { length: 12_345, crc: 0xdeadbeef };
/** Magic and version (8 bytes), the payload's SHA-256 (32), its signature (64). */
const HEADER = 104;

const suite = await cryptoSuite();
const OWNER: CheckpointOwner = {
  key: await suite.ed25519.generate(),
  repository: "/docs",
  suite,
};

const encode = (snapshot: RepositorySnapshot) => encodeCheckpoint(snapshot, LOG, OWNER);
const decode = (file: Uint8Array) => decodeCheckpoint(file, OWNER);

interface Item {
  key: string;
  state: ItemState;
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
  waiting: fc.oneof(fc.array(fc.boolean(), { maxLength: 12 }), fc.constant("all" as const)),
}, { noNullPrototype: true }).map(({ commitSeq, tips, items, waiting }) => ({
  commitSeq,
  tips: new Map(tips.map(([session, seq, hash, lastCommitSeq]) => [session, {
    seq,
    hash,
    lastCommitSeq,
  }])),
  items: items.map(({ key, state }) => [key, state] as const),
  unresolved: waiting === "all"
    ? waiting
    : new Set(items.filter((_, i) => waiting[i]).map(({ key }) => key)),
}));

/** An item as plain data to compare; `live` as the checkpoint tells it, or from its value. */
function plain(key: string, state: ItemState, live = state.wire !== undefined) {
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
    unresolved: checkpoint.unresolved,
  };
}

/** What `contents` must give for a checkpoint of `snapshot`. */
function expected(snapshot: RepositorySnapshot) {
  const items = snapshot.items.map(([key, state]) => plain(key, state));
  const waiting = snapshot.unresolved;
  return {
    log: [LOG.length, LOG.crc],
    commitSeq: snapshot.commitSeq,
    tips: snapshot.tips,
    items,
    liveCount: items.filter((item) => item.live).length,
    unresolved: waiting === "all"
      ? waiting
      : items.filter(({ key }) => waiting?.has(key)).map(({ key }) => key),
  };
}

/** The message a checkpoint's signature covers (docs/storage.md), for `repository`. */
function signedMessage(repository: string, digest: Uint8Array): Uint8Array {
  const tag = new TextEncoder().encode("cairn checkpoint v3");
  const path = new TextEncoder().encode(repository);
  const message = new Uint8Array(tag.length + 4 + path.length + 32);
  message.set(tag);
  new DataView(message.buffer).setUint32(tag.length, path.length, true);
  message.set(path, tag.length + 4);
  message.set(digest, tag.length + 4 + path.length);
  return message;
}

/**
 * A checkpoint with `payload` changed, its digest made to match again; its signature made again
 * too when `sign` says by whom (as whoever holds the key could), else left as it was.
 */
async function resealed(
  file: Uint8Array,
  change: (payload: Uint8Array) => void,
  sign?: CheckpointOwner,
): Promise<Uint8Array> {
  const copy = file.slice();
  change(copy.subarray(HEADER));
  const digest = await suite.sha256(copy.subarray(HEADER));
  copy.set(digest, 8);
  if (sign) {
    copy.set(await suite.ed25519.sign(sign.key, signedMessage(sign.repository, digest)), 40);
  }
  return copy;
}

test("every item, value and leaf comes back from a checkpoint, for any snapshot", async () => {
  await fc.assert(
    fc.asyncProperty(snapshotArb, async (snapshot) => {
      const decoded = await decode(await encode(snapshot));
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
    const sliced = await encodeCheckpointInSlices(snapshot, LOG, OWNER, { sliceMs: 0, pause });
    assert.deepEqual(sliced, await encode(snapshot));
    assert.deepEqual(contents(await decode(sliced)), expected(snapshot));
    // Every 256 items, the nine columns, the two texts, the joined file: each ends a step.
    const steps = Math.floor(snapshot.items.length / 256) + 9 + 2 + 1;
    assert.equal(pauses, steps, `${snapshot.items.length} items`);
    // With time to spare, no pause at all.
    pauses = 0;
    await encodeCheckpointInSlices(snapshot, LOG, OWNER, { sliceMs: 60_000, pause });
    assert.equal(pauses, 0);
  }
  assert.ok(large.items.length > 1000, `${large.items.length} distinct items`);
  // The default pause: the event loop's next turn (a task of its own).
  const turns = await encodeCheckpointInSlices(large, LOG, OWNER, { sliceMs: 0 });
  assert.deepEqual(turns, await encode(large));
});

test("writes made between the slices of a repository's checkpoint do not reach it", async () => {
  const Note = defineSchema(TITLE_AND_NUMBER);
  const repo = trustedRepository("/notes", "sliced-checkpoint-test", Note);
  const note = (i: number, n: number) => Note.createWire({ title: `note ${i}`, n });
  for (let i = 0; i < 2000; i++) repo.create(`k${i}`, Note.id, note(i, i));
  for (let i = 0; i < 2000; i += 7) repo.writeChange(`k${i}`, Note.id, note(i, -i), { n: -i }, []);
  for (let i = 3; i < 2000; i += 11) repo.delete(`k${i}`);
  await repo.flush();
  const snapshot = repo.snapshot()!;
  const file = await encode(snapshot);

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
  const sliced = await encodeCheckpointInSlices(snapshot, LOG, OWNER, {
    sliceMs: 0,
    pause: writeSome,
  });
  assert.ok(round > 10, `${round} pauses with writes`);
  assert.notDeepEqual(await encode(repo.snapshot()!), file, "the writes changed items");
  assert.deepEqual(sliced, file);
});

test("keys are found by the index, and a leaf by session and seq is its item's own object", async () => {
  await fc.assert(
    fc.asyncProperty(snapshotArb, fc.string({ maxLength: 20 }), async (snapshot, other) => {
      const { items, leaf } = await decode(await encode(snapshot));
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

test("re-encoding restored items copies their bytes: the same file, read or not", async () => {
  await fc.assert(
    fc.asyncProperty(snapshotArb, fc.boolean(), async (snapshot, read) => {
      const file = await encode(snapshot);
      const { items, tips, commitSeq, unresolved } = await decode(file);
      const restored: [string, ItemState][] = [];
      for (let i = 0; i < items.count; i++) {
        const state = items.itemAt(i);
        if (read) void state.wire, state.leaves;
        restored.push([items.keyAt(i), state]);
      }
      const waiting = unresolved === "all" ? unresolved : new Set(unresolved);
      const again = { commitSeq, tips, items: restored, unresolved: waiting };
      assert.deepEqual(await encode(again), file);
    }),
    { seed: 0xc097, numRuns: 200 },
  );
});

test("restored and changed items together re-encode to what they hold", async () => {
  await fc.assert(
    fc.asyncProperty(snapshotArb, snapshotArb, async (first, second) => {
      const { items } = await decode(await encode(first));
      const keys = new Set(first.items.map(([key]) => key));
      // Every other restored item, then the second snapshot's items under other keys.
      const mixed: (readonly [string, ItemState])[] = [];
      for (let i = 0; i < items.count; i += 2) mixed.push([items.keyAt(i), items.itemAt(i)]);
      for (const [key, state] of second.items) if (!keys.has(key)) mixed.push([key, state]);
      const snapshot = { commitSeq: 1, tips: new Map(), items: mixed };
      const decoded = await decode(await encode(snapshot));
      assert.deepEqual(contents(decoded), expected(snapshot));
    }),
    { seed: 0x3a11, numRuns: 150 },
  );
});

test("the common item costs no leaf value: its one leaf's full value is the item's value", async () => {
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
  const file = await encode({ commitSeq: 1, tips: new Map(), items: [["k", state]] });
  assert.ok(file.length < 1200, `${file.length} bytes: the value is stored once`);
  const restored = (await decode(file)).items.itemAt(0);
  assert.equal(
    restored.leaves[0].kind === "value" && restored.leaves[0].value,
    restored.wire,
  );
});

/** A checkpoint of realistic content: deltas, deletes, several leaves, parents. */
function sampleFile(): Promise<Uint8Array> {
  const items: [string, ItemState][] = [];
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
  return encode({
    commitSeq: 40,
    tips: new Map([["s0", { seq: 3, hash: "h", lastCommitSeq: 40 }]]),
    items,
    unresolved: new Set(["item-2", "item-6", "item-39"]),
  });
}

/** Decodes, then reads everything the way a repository would: it must all work. */
async function readAll(file: Uint8Array): Promise<void> {
  const { items, leaf, unresolved } = await decode(file);
  for (const key of unresolved) assert.ok(items.indexOf(key) >= 0, `${key} waits`);
  const restored: [string, ItemState][] = [];
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
  await encode({ commitSeq: 0, tips: new Map(), items: restored });
}

test("a flipped byte or a cut anywhere is refused: E_BAD_SIGNATURE in the signature, else E_CORRUPT_ENCODING", async () => {
  const file = await sampleFile();
  await readAll(file);
  for (let at = 0; at < file.length; at++) {
    const flipped = file.slice();
    flipped[at] ^= 1 << (at % 8);
    const code = at >= 40 && at < HEADER ? "E_BAD_SIGNATURE" : "E_CORRUPT_ENCODING";
    await assert.rejects(decode(flipped), (err) => isCairnError(err, code), `flipped at ${at}`);
    await assert.rejects(
      decode(file.subarray(0, at)),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      `cut at ${at}`,
    );
  }
});

test("hostile bytes signed with the key: refused as E_CORRUPT_ENCODING, or every read works", async () => {
  const file = await sampleFile();
  const seed = 0x5eed17;
  const random = seededRandom(seed);
  let accepted = 0;
  for (let run = 0; run < 3000; run++) {
    const changes = 1 + Math.floor(random() * 3);
    const hostile = await resealed(file, (payload) => {
      for (let c = 0; c < changes; c++) {
        payload[Math.floor(random() * payload.length)] = Math.floor(random() * 256);
      }
    }, OWNER);
    try {
      await readAll(hostile);
      accepted++;
    } catch (err) {
      assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), `seed ${seed}, run ${run}: ${err}`);
    }
  }
  assert.ok(accepted > 0, "some changes leave a valid checkpoint (a value's text, say)");
});

test("the header holds the payload's SHA-256 and the owner's signature of tag, path and digest", async () => {
  const file = await sampleFile();
  const digest = await suite.sha256(file.subarray(HEADER));
  assert.deepEqual(file.subarray(8, 40), digest);
  const signature = file.subarray(40, HEADER);
  const { publicKey } = OWNER.key;
  assert.ok(await suite.ed25519.verify(publicKey, signature, signedMessage("/docs", digest)));
  assert.equal(
    await suite.ed25519.verify(publicKey, signature, digest),
    false,
    "not the bare digest",
  );
});

test("an edited checkpoint is refused though its digest is made to match: E_BAD_SIGNATURE", async () => {
  const file = await sampleFile();
  const text = new TextEncoder().encode("other");
  const at = file.findIndex((_, i) => text.every((byte, j) => file[i + j] === byte));
  assert.ok(at > HEADER, "the sample holds a value with that text");
  const edit = (payload: Uint8Array) => payload.set(new TextEncoder().encode("OTHER"), at - HEADER);
  await assert.rejects(
    decode(await resealed(file, edit)),
    (err) => isCairnError(err, "E_BAD_SIGNATURE"),
  );
  // The same edit signed with the key is a valid checkpoint: it is the signature that refused it.
  // (Whoever holds the key can sign blocks as well: docs/storage.md.)
  const signed = await resealed(file, edit, OWNER);
  await readAll(signed);
  const leaf = (await decode(signed)).items.itemAt(2).leaves[0];
  assert.deepEqual(leaf.kind === "value" && leaf.value, { title: "OTHER" });
});

test("another repository's or another session's checkpoint is refused: E_BAD_SIGNATURE", async () => {
  const file = await sampleFile();
  const others: CheckpointOwner[] = [
    { ...OWNER, repository: "/other" },
    { ...OWNER, repository: "/docs/x" },
    { ...OWNER, key: await suite.ed25519.generate() },
  ];
  for (const other of others) {
    await assert.rejects(
      decodeCheckpoint(file, other),
      (err) => isCairnError(err, "E_BAD_SIGNATURE"),
      `${other.repository}, ${other.key === OWNER.key ? "same" : "other"} key`,
    );
  }
  // A signature of the bare digest (what a block signs) is not a checkpoint's.
  const digest = file.subarray(8, 40);
  const blockLike = file.slice();
  blockLike.set(await suite.ed25519.sign(OWNER.key, digest), 40);
  await assert.rejects(decode(blockLike), (err) => isCairnError(err, "E_BAD_SIGNATURE"));
});

test("a checkpoint of another version is refused: it is rebuilt from the log", async () => {
  const file = await sampleFile();
  for (const version of [1, 2, 4]) {
    const other = file.slice();
    new DataView(other.buffer).setUint16(6, version, true);
    await assert.rejects(
      decode(other),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING") && /version/.test((err as Error).message),
    );
  }
  // Version 2: the same content behind a CRC-32C, which anyone can make match again.
  const payload = file.subarray(HEADER);
  const v2 = new Uint8Array(12 + payload.length);
  v2.set(file.subarray(0, 6));
  new DataView(v2.buffer).setUint16(6, 2, true);
  new DataView(v2.buffer).setUint32(8, crc32c(payload), true);
  v2.set(payload, 12);
  await assert.rejects(
    decode(v2),
    (err) => isCairnError(err, "E_CORRUPT_ENCODING") && /version 2/.test((err as Error).message),
  );
});

test("the items waiting for a schema: a file without them reads as none, true as all; a list out of order, out of range or empty is refused", async () => {
  const file = await sampleFile();
  assert.deepEqual((await decode(file)).unresolved, ["item-2", "item-6", "item-39"]);
  const metaLength = new DataView(file.buffer).getUint32(HEADER, true);
  const meta = unpackBytes(file, "meta", HEADER + 4, HEADER + 4 + metaLength) as WireValue[];
  assert.deepEqual(meta[9], [2, 6, 39]);
  /** The sample file with its meta's list of waiting items replaced (none: left out), resealed. */
  const withList = (list?: WireValue) => {
    const packed = packValue(list === undefined ? meta.slice(0, 9) : [...meta.slice(0, 9), list]);
    const rest = file.subarray(HEADER + 4 + metaLength);
    const payload = new Uint8Array(4 + packed.length + rest.length);
    new DataView(payload.buffer).setUint32(0, packed.length, true);
    payload.set(packed, 4);
    payload.set(rest, 4 + packed.length);
    const header = file.slice(0, HEADER);
    const rebuilt = new Uint8Array(HEADER + payload.length);
    rebuilt.set(header);
    return resealed(rebuilt, (target) => target.set(payload), OWNER);
  };
  assert.deepEqual((await decode(await withList())).unresolved, []);
  assert.deepEqual((await decode(await withList([0, 39]))).unresolved, ["item-0", "item-39"]);
  assert.equal((await decode(await withList(true))).unresolved, "all");
  for (const list of [[], [6, 2], [2, 2], [40], [-1], [1.5], ["item-2"], 3, null, false]) {
    await assert.rejects(
      decode(await withList(list)),
      (err) => isCairnError(err, "E_CORRUPT_ENCODING"),
      JSON.stringify(list),
    );
  }
});
