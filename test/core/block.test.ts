import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  BLOCK_FORMAT_VERSION,
  blockBody,
  type BlockFields,
  blockFromJson,
  blockToJson,
  type BlockVersion,
  type ChainTip,
  checkChain,
  decodeBlock,
  encodeBlock,
  sealBlock,
  type SealedBlock,
  sessionIdFromPublicKey,
  verifyBlock,
} from "../../src/core/block.ts";
import { bytesEqual } from "../../src/core/bytes.ts";
import { type Commit, makeCommit, makeOwnParentCommit } from "../../src/core/commit.ts";
import { COMMIT_FORMAT_VERSION, commitToJson } from "../../src/core/commit_codec.ts";
import { type CairnErrorCode, isCairnError } from "../../src/core/errors.ts";
import type { CryptoSuite } from "../../src/core/signing.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { type Author, blockFields, newAuthor } from "../harness/blocks.ts";
import { seededRandom } from "../harness/random.ts";
import { pack as packValue } from "../harness/msgpack.ts";

interface Fixture {
  suite: CryptoSuite;
  alice: Author;
  mallory: Author;
}

let fixture: Promise<Fixture> | undefined;

function setup(): Promise<Fixture> {
  fixture ??= cryptoSuite().then(async (suite) => ({
    suite,
    alice: await newAuthor(suite),
    mallory: await newAuthor(suite),
  }));
  return fixture;
}

function commits(session: string, firstSeq: number, count: number): Commit[] {
  return Array.from({ length: count }, (_, i) => ({
    session,
    seq: firstSeq + i,
    key: `item-${firstSeq + i}`,
    hlc: 1_790_000_000_000 * 1024 + i,
    parents: i === 0 ? [] : [`${session}.${firstSeq + i - 1}`],
    schema: "task@1",
    kind: "value",
    value: { title: `Item ${i}`, count: i, tags: ["a", "b"] },
  }));
}

function fieldsOf(
  author: Author,
  { seq = 1, prev = "", firstCommitSeq = 1, count = 2 } = {},
): BlockFields {
  return {
    session: author.session,
    publicKey: author.key.publicKey,
    seq,
    prev,
    commits: commits(author.session, firstCommitSeq, count),
  };
}

async function sealAs(author: Author, fields: BlockFields): Promise<SealedBlock> {
  const { suite } = await setup();
  return sealBlock(fields, { key: author.key, ed25519: suite.ed25519 }, suite);
}

function hasCode(...codes: CairnErrorCode[]): (err: unknown) => boolean {
  return (err) => codes.some((code) => isCairnError(err, code));
}

/**
 * A commit as the array a body holds, built independently of the writer in src/. Version 2: no
 * session, and a parent by the commit's own session as its seq. Version 1: all of it spelled out.
 */
function commitToTuple(commit: Commit, version: BlockVersion = 2): unknown[] {
  const { session, seq, key, hlc, parents, schema } = commit;
  const own = (id: string) => {
    const digits = id.slice(session.length + 1);
    const mine = id.startsWith(`${session}.`) && /^[1-9][0-9]*$/.test(digits);
    return mine && Number.isSafeInteger(Number(digits)) ? Number(digits) : id;
  };
  const head = version === 1
    ? [COMMIT_FORMAT_VERSION, session, seq, key, hlc, parents, schema]
    : [seq, key, hlc, parents.map(own), schema];
  if (commit.kind === "value") return [...head, 0, commit.value];
  if (commit.kind === "delta") return [...head, 1, commit.set, commit.unset];
  return [...head, 2];
}

/** The body's fields as MessagePack sees them, to build hostile variants from. */
function bodyTuple(fields: BlockFields, version: BlockVersion = BLOCK_FORMAT_VERSION): unknown[] {
  const { session, publicKey, seq, prev } = fields;
  const commits = fields.commits.map((commit) => commitToTuple(commit, version));
  return [version, session, publicKey, seq, prev, commits];
}

function frame(body: unknown, signature: unknown = new Uint8Array(64)): Uint8Array {
  return packValue([body, signature]);
}

function assertSameSealed(actual: SealedBlock, expected: SealedBlock): void {
  assert.ok(bytesEqual(actual.body, expected.body), "same body bytes");
  assert.equal(actual.hash, expected.hash);
  assert.deepEqual(actual.block, expected.block);
}

test("block: a signed block survives seal → encode → decode → verify", async () => {
  const { suite, alice } = await setup();
  await fc.assert(
    fc.asyncProperty(blockFields(alice), async (fields) => {
      const sealed = await sealAs(alice, fields);
      assert.equal(sealed.block.signature.length, 64);
      const decoded = await decodeBlock(encodeBlock(sealed), suite);
      assertSameSealed(decoded, sealed);
      await verifyBlock(decoded, suite);
    }),
    { numRuns: 60 },
  );
});

test("block: strings that start with a byte order mark pass the canonical check", async () => {
  // A decoder that drops a leading U+FEFF (TextDecoder's default) re-encodes another body, and a
  // peer would refuse the block as not canonical.
  const { suite, alice } = await setup();
  const base = fieldsOf(alice);
  const texts = ["\uFEFF", "\uFEFFshort", `\uFEFF${"a long note ".repeat(20)}`];
  const commits = base.commits.map((commit, i) => ({
    ...commit,
    key: texts[i],
    value: { title: texts.at(i - 1)!, note: texts[2] },
  } as Commit));
  const fields = { ...base, commits };
  const sealed = await sealAs(alice, fields);
  const decoded = await decodeBlock(encodeBlock(sealed), suite);
  assertSameSealed(decoded, sealed);
  assert.deepEqual(decoded.block.commits.map((commit) => commit.key), texts.slice(0, 2));
});

test("block: the payload is the MessagePack array [body, signature] for every header size", async () => {
  const { alice } = await setup();
  const sealed = await sealAs(alice, fieldsOf(alice));
  const random = seededRandom(7);
  // Bodies on both sides of the bin8 / bin16 / bin32 boundaries, signed and unsigned.
  for (const size of [0, 1, 255, 256, 65_535, 65_536, 70_000]) {
    const body = Uint8Array.from({ length: size }, () => Math.floor(random() * 256));
    for (const signature of [sealed.block.signature, new Uint8Array(0)]) {
      const block = { ...sealed.block, signature };
      const encoded = encodeBlock({ block, body });
      assert.ok(bytesEqual(encoded, packValue([body, signature])), `body of ${size} bytes`);
    }
  }
});

test("block: a local update's lazy parents read and encode as the same commit spelled out", async () => {
  const { alice } = await setup();
  fc.assert(
    fc.property(
      blockFields(alice),
      fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 5, maxLength: 5 }),
      (fields, parentSeqs) => {
        // Where parentSeqs[i] > 0, commit i names that one parent of its own session: once made
        // as a local update (parents made when read), once with its parents spelled out.
        const change = (c: Commit) =>
          c.kind === "value" ? c.value : c.kind === "delta" ? c.set : undefined;
        const unset = (c: Commit) => (c.kind === "delta" ? c.unset : undefined);
        const lazy = fields.commits.map((c, i) =>
          parentSeqs[i] > 0
            ? makeOwnParentCommit(
              c.session,
              c.seq,
              c.key,
              c.hlc,
              parentSeqs[i],
              c.schema,
              c.kind,
              change(c),
              unset(c),
            )
            : c
        );
        const spelled = fields.commits.map((c, i) =>
          parentSeqs[i] > 0
            ? makeCommit(
              c.session,
              c.seq,
              c.key,
              c.hlc,
              [`${c.session}.${parentSeqs[i]}`],
              c.schema,
              c.kind,
              change(c),
              unset(c),
            )
            : c
        );
        assert.ok(
          bytesEqual(
            blockBody({ ...fields, commits: lazy }),
            blockBody({ ...fields, commits: spelled }),
          ),
        );
        for (let i = 0; i < lazy.length; i++) {
          assert.deepEqual(commitToJson(lazy[i]), commitToJson(spelled[i]));
          assert.deepEqual(lazy[i].parents, spelled[i].parents);
        }
      },
    ),
    { numRuns: 200, seed: 23 },
  );
});

test("block: a trusted-mode block is unsigned, round-trips, and does not verify", async () => {
  const { suite, alice } = await setup();
  const sealed = await sealBlock(fieldsOf(alice), null, suite);
  assert.equal(sealed.block.signature.length, 0);
  const decoded = await decodeBlock(encodeBlock(sealed), suite);
  assertSameSealed(decoded, sealed);
  await assert.rejects(verifyBlock(decoded, suite), hasCode("E_BAD_SIGNATURE"));
});

test("block: binary → JSON text → binary is lossless and the signature still verifies", async () => {
  const { suite, alice } = await setup();
  await fc.assert(
    fc.asyncProperty(blockFields(alice), fc.boolean(), async (fields, signed) => {
      const sealed = signed ? await sealAs(alice, fields) : await sealBlock(fields, null, suite);
      const encoded = encodeBlock(sealed);
      const line = JSON.stringify(blockToJson(await decodeBlock(encoded, suite)));
      assert.ok(!line.includes("\n"));
      const fromJson = await blockFromJson(JSON.parse(line), suite);
      assertSameSealed(fromJson, sealed);
      assert.ok(bytesEqual(encodeBlock(fromJson), encoded), "same binary frame");
      if (signed) await verifyBlock(fromJson, suite);
    }),
    { numRuns: 60 },
  );
});

test("block: the JSON form names its fields and carries commits in their JSON form", async () => {
  const { alice } = await setup();
  const json = blockToJson(await sealAs(alice, fieldsOf(alice, { count: 1 })));
  assert.deepEqual(Object.keys(json), [
    "v",
    "session",
    "publicKey",
    "seq",
    "prev",
    "sig",
    "commits",
  ]);
  assert.equal(json.session, alice.session);
  assert.equal(json.sig.length, 86);
  assert.equal(json.commits[0].value?.title, "Item 0");
});

test("block: the body is deterministic and the same for equal fields", async () => {
  const { alice } = await setup();
  const fields = fieldsOf(alice, { count: 3 });
  const copy: BlockFields = JSON.parse(JSON.stringify({ ...fields, publicKey: [] }));
  const equal = { ...copy, publicKey: alice.key.publicKey.slice() };
  assert.ok(bytesEqual(blockBody(fields), blockBody(fields)));
  assert.ok(bytesEqual(blockBody(equal), blockBody(fields)));
});

test("block: the session id is 22 base64url characters of the key's hash", async () => {
  const { suite, alice, mallory } = await setup();
  assert.match(alice.session, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(await sessionIdFromPublicKey(alice.key.publicKey.slice(), suite), alice.session);
  assert.notEqual(mallory.session, alice.session);
});

test("block: changing any single byte of a signed block is detected", async () => {
  const { suite, alice } = await setup();
  const encoded = encodeBlock(await sealAs(alice, fieldsOf(alice)));
  for (let i = 0; i < encoded.length; i++) {
    for (const mask of [0x01, 0x80]) {
      const damaged = encoded.slice();
      damaged[i] ^= mask;
      await assert.rejects(
        decodeBlock(damaged, suite).then((block) => verifyBlock(block, suite)),
        hasCode("E_CORRUPT_ENCODING", "E_BAD_SIGNATURE", "E_BAD_KEY"),
        `byte ${i} ^ ${mask}`,
      );
    }
  }
});

test("block: changing any single byte of a trusted block fails to decode or changes its hash", async () => {
  const { suite, alice } = await setup();
  const original = await sealBlock(fieldsOf(alice), null, suite);
  const encoded = encodeBlock(original);
  for (let i = 0; i < encoded.length; i++) {
    const damaged = encoded.slice();
    damaged[i] ^= 0x01;
    try {
      const decoded = await decodeBlock(damaged, suite);
      assert.notEqual(decoded.hash, original.hash, `byte ${i}`);
    } catch (err) {
      assert.ok(isCairnError(err, "E_CORRUPT_ENCODING"), `byte ${i}: ${String(err)}`);
    }
  }
});

test("block: a signature made by another key does not verify", async () => {
  const { suite, alice, mallory } = await setup();
  const sealed = await sealAs(alice, fieldsOf(alice));
  // Mallory signs exactly what Alice signed (the body's digest), but with her own key.
  const forged = await suite.ed25519.sign(mallory.key, sealed.digest);
  const tampered = { ...sealed, block: { ...sealed.block, signature: forged } };
  await assert.rejects(verifyBlock(tampered, suite), hasCode("E_BAD_SIGNATURE"));
  // And the genuine signature is over the digest: it verifies with Alice's key.
  assert.equal(
    await suite.ed25519.verify(alice.key.publicKey, sealed.block.signature, sealed.digest),
    true,
  );
});

test("block: a public key that is not the session's is E_BAD_KEY", async () => {
  const { suite, alice, mallory } = await setup();
  const claimed = { ...fieldsOf(alice), publicKey: mallory.key.publicKey };
  const sealed = await sealAs(mallory, claimed);
  const decoded = await decodeBlock(encodeBlock(sealed), suite);
  await assert.rejects(verifyBlock(decoded, suite), hasCode("E_BAD_KEY"));
});

test("block: sealing refuses a signer that is not the block's key", async () => {
  const { alice, mallory } = await setup();
  await assert.rejects(sealAs(mallory, fieldsOf(alice)), hasCode("E_BAD_KEY"));
});

test("block: sealing refuses commits that decoding would refuse", async () => {
  const { alice, mallory } = await setup();
  const fields = fieldsOf(alice);
  for (
    const bad of [
      [],
      [...fields.commits, ...commits(mallory.session, 3, 1)],
      [...fields.commits, ...fields.commits],
    ]
  ) {
    await assert.rejects(
      sealAs(alice, { ...fields, commits: bad }),
      hasCode("E_CORRUPT_ENCODING"),
    );
  }
});

test("block: every truncation is E_CORRUPT_ENCODING", async () => {
  const { suite, alice } = await setup();
  const encoded = encodeBlock(await sealAs(alice, fieldsOf(alice)));
  for (let cut = 0; cut < encoded.length; cut++) {
    await assert.rejects(
      decodeBlock(encoded.subarray(0, cut), suite),
      hasCode("E_CORRUPT_ENCODING"),
      `cut at ${cut}`,
    );
  }
});

test("block: random bytes are E_CORRUPT_ENCODING, never another error", async () => {
  const { suite } = await setup();
  const random = seededRandom(0xb10c);
  for (let i = 0; i < 1000; i++) {
    const junk = Uint8Array.from(
      { length: Math.floor(random() * 200) },
      () => Math.floor(random() * 256),
    );
    await assert.rejects(decodeBlock(junk, suite), hasCode("E_CORRUPT_ENCODING"), `run ${i}`);
  }
});

test("block: random MessagePack values are E_CORRUPT_ENCODING, never another error", async () => {
  const { suite } = await setup();
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), fc.jsonValue(), async (body, signature) => {
      await assert.rejects(
        decodeBlock(frame(body, signature), suite),
        hasCode("E_CORRUPT_ENCODING"),
      );
      await assert.rejects(
        decodeBlock(frame(packValue(body)), suite),
        hasCode("E_CORRUPT_ENCODING"),
      );
    }),
    { numRuns: 200 },
  );
});

test("block: each malformed field is E_CORRUPT_ENCODING", async () => {
  const { suite, alice, mallory } = await setup();
  const fields = fieldsOf(alice);
  const valid = bodyTuple(fields);
  const withField = (index: number, value: unknown) => valid.with(index, value);
  const [first, second] = fields.commits;
  const tuples = (...list: Commit[]) => list.map((commit) => commitToTuple(commit));
  const parentsAre = (commit: Commit, parents: unknown) => commitToTuple(commit).with(3, parents);
  const ownId = `${alice.session}.${first.seq}`;
  assert.deepEqual(second.parents, [ownId]);
  const badBodies: [string, unknown[]][] = [
    ["version", withField(0, BLOCK_FORMAT_VERSION + 1)],
    ["version 0", withField(0, 0)],
    ["short session", withField(1, "s1")],
    ["session with a dot", withField(1, `${alice.session.slice(1)}.`)],
    ["session not a string", withField(1, 7)],
    ["public key of 31 bytes", withField(2, alice.key.publicKey.subarray(1))],
    ["public key as text", withField(2, "key")],
    ["seq 0", withField(3, 0)],
    ["fractional seq", withField(3, 1.5)],
    ["a hash as prev of the first block", withField(4, "x".repeat(43))],
    ["prev of the first block not a repository path", withField(4, "data/notes")],
    ["a repository path as prev of a later block", withField(3, 2).with(4, "/data/notes")],
    ["no prev on a later block", withField(3, 2)],
    ["prev not a hash", withField(3, 2).with(4, "not-a-hash")],
    ["no commits", withField(5, [])],
    ["commits not an array", withField(5, {})],
    ["a malformed commit", withField(5, [[1, 2, 3]])],
    ["a version 1 commit in a version 2 body", withField(5, [commitToTuple(first, 1)])],
    ["a parent seq of 0", withField(5, [tuples(first)[0], parentsAre(second, [0])])],
    ["a fractional parent seq", withField(5, [tuples(first)[0], parentsAre(second, [1.5])])],
    ["a parent that is neither", withField(5, [tuples(first)[0], parentsAre(second, [null])])],
    ["parents not an array", withField(5, [tuples(first)[0], parentsAre(second, 1)])],
    // Spelled out, an own parent is valid but not canonical: version 2 writes it as a number.
    ["an own parent as an id", withField(5, [tuples(first)[0], parentsAre(second, [ownId])])],
    ["repeated commit seq", withField(5, tuples(first, { ...second, seq: first.seq }))],
    ["decreasing commit seqs", withField(5, tuples(second, first))],
    ["extra field", [...valid, 0]],
    ["missing field", valid.slice(0, 5)],
  ];
  for (const [what, body] of badBodies) {
    await assert.rejects(
      decodeBlock(frame(packValue(body)), suite),
      hasCode("E_CORRUPT_ENCODING"),
      what,
    );
  }
  const body = packValue(valid);
  const badFrames: [string, unknown][] = [
    ["signature of 63 bytes", [body, new Uint8Array(63)]],
    ["signature as text", [body, "sig"]],
    ["body as text", ["body", new Uint8Array(64)]],
    ["three parts", [body, new Uint8Array(64), 0]],
    ["a map", { body, signature: new Uint8Array(64) }],
  ];
  for (const [what, value] of badFrames) {
    await assert.rejects(decodeBlock(packValue(value), suite), hasCode("E_CORRUPT_ENCODING"), what);
  }
  await decodeBlock(frame(body), suite); // the unmodified tuple is accepted

  // Version 1 bodies carry a session per commit, which must be the block's.
  const v1 = bodyTuple(fields, 1);
  await decodeBlock(frame(packValue(v1)), suite);
  const foreign = [first, { ...second, session: mallory.session }].map((c) => commitToTuple(c, 1));
  await assert.rejects(
    decodeBlock(frame(packValue(v1.with(5, foreign))), suite),
    hasCode("E_CORRUPT_ENCODING"),
    "a commit of another session",
  );
});

test("block: version 1 blocks still decode, verify and go through JSON as version 1", async () => {
  const { suite, alice } = await setup();
  await fc.assert(
    fc.asyncProperty(blockFields(alice), fc.boolean(), async (fields, signed) => {
      const old = { ...fields, version: 1 as const };
      const sealed = signed ? await sealAs(alice, old) : await sealBlock(old, null, suite);
      assert.equal(sealed.body[1], 1, "the body says version 1");
      const decoded = await decodeBlock(encodeBlock(sealed), suite);
      assertSameSealed(decoded, sealed);
      assert.equal(decoded.block.version, 1);
      const json = blockToJson(decoded);
      assert.equal(json.v, 1);
      const fromJson = await blockFromJson(JSON.parse(JSON.stringify(json)), suite);
      assertSameSealed(fromJson, sealed);
      if (signed) await verifyBlock(fromJson, suite);
      // The same commits in the current layout: a different body, the same commits.
      const current = await sealBlock(fields, null, suite);
      assert.deepEqual(
        (await decodeBlock(encodeBlock(current), suite)).block.commits,
        sealed.block.commits,
      );
      assert.equal(current.body[1], BLOCK_FORMAT_VERSION);
    }),
    { numRuns: 40 },
  );
});

test("block: a version 2 body names the session once, not in every commit and parent", async () => {
  const { alice } = await setup();
  // Updates of one item, each over the one before: what a session mostly writes.
  const updates: Commit[] = Array.from(
    { length: 100 },
    (_, i) =>
      makeCommit(
        alice.session,
        i + 2,
        "item",
        1_000 + i,
        [`${alice.session}.${i + 1}`],
        "t@1",
        "delta",
        { n: i },
        [],
      ),
  );
  const fields = { ...fieldsOf(alice), commits: updates };
  const saved = blockBody({ ...fields, version: 1 }).length - blockBody(fields).length;
  // The session (22 characters and a header byte) twice per commit, the version once per commit.
  assert.ok(saved >= 100 * 46, `${saved} bytes saved`);
});

test("block: a body that is valid but not canonically encoded is refused", async () => {
  const { suite, alice } = await setup();
  const body = packValue(bodyTuple(fieldsOf(alice)));
  // [0x96, version, session (1 + 22 bytes), key (2 + 32 bytes), seq]: seq 1 as int8 0xd0 0x01.
  const seqAt = 1 + 1 + 23 + 34;
  assert.equal(body[seqAt], 0x01);
  const loose = new Uint8Array([
    ...body.subarray(0, seqAt),
    0xd0,
    0x01,
    ...body.subarray(seqAt + 1),
  ]);
  await assert.rejects(decodeBlock(frame(loose), suite), hasCode("E_CORRUPT_ENCODING"));
});

test("block: malformed JSON blocks are E_CORRUPT_ENCODING", async () => {
  const { suite, alice, mallory } = await setup();
  const json = blockToJson(await sealAs(alice, fieldsOf(alice)));
  const bad: [string, unknown][] = [
    ["null", null],
    ["array", []],
    ["version", { ...json, v: BLOCK_FORMAT_VERSION + 1 }],
    ["version 0", { ...json, v: 0 }],
    ["public key not base64url", { ...json, publicKey: "*".repeat(43) }],
    ["public key of 31 bytes", { ...json, publicKey: json.publicKey.slice(0, 42) }],
    ["public key as number", { ...json, publicKey: 5 }],
    ["signature of 10 bytes", { ...json, sig: "A".repeat(14) }],
    ["signature missing", { ...json, sig: undefined }],
    ["commits not an array", { ...json, commits: "x" }],
    ["no commits", { ...json, commits: [] }],
    ["a malformed commit", { ...json, commits: [{ v: 1 }] }],
    ["a commit of another session", {
      ...json,
      commits: json.commits.map((c) => ({ ...c, session: mallory.session })),
    }],
    ["seq as text", { ...json, seq: "1" }],
  ];
  for (const [what, value] of bad) {
    await assert.rejects(blockFromJson(value, suite), hasCode("E_CORRUPT_ENCODING"), what);
  }
});

test("block chain: blocks that continue the chain are accepted", async () => {
  const { alice } = await setup();
  const first = await sealAs(alice, fieldsOf(alice, { count: 2, prev: "/data/notes" }));
  checkChain(undefined, first, "/data/notes");
  const second = await sealAs(
    alice,
    fieldsOf(alice, { seq: 2, prev: first.hash, firstCommitSeq: 3 }),
  );
  checkChain({ seq: 1, hash: first.hash, lastCommitSeq: 2 }, second, "/data/notes");
});

test("block chain: a chain is bound to the repository its first block names; an unbound one to none", async () => {
  const { alice } = await setup();
  const bound = await sealAs(alice, fieldsOf(alice, { prev: "/data/notes" }));
  assert.equal(
    (await decodeBlock(encodeBlock(bound), (await setup()).suite)).block.prev,
    "/data/notes",
  );
  checkChain(undefined, bound, "/data/notes");
  assert.throws(
    () => checkChain(undefined, bound, "/data/other"),
    (err) =>
      isCairnError(err, "E_CHAIN_FORK") &&
      /in \/data\/notes, not in \/data\/other/.test(err.message),
    "replayed into another repository",
  );
  // Begun before chains were bound (prev ""): taken in any repository.
  const unbound = await sealAs(alice, fieldsOf(alice, {}));
  checkChain(undefined, unbound, "/data/notes");
  checkChain(undefined, unbound, "/data/other");
});

test("block chain: gaps, forks and stale blocks are told apart", async () => {
  const { alice } = await setup();
  const first = await sealAs(alice, fieldsOf(alice, { count: 2 }));
  const tip: ChainTip = { seq: 1, hash: first.hash, lastCommitSeq: 2 };
  const next = (options: { seq?: number; prev?: string; firstCommitSeq?: number }) =>
    sealAs(alice, fieldsOf(alice, { seq: 2, prev: first.hash, firstCommitSeq: 3, ...options }));
  const otherFirst = await sealAs(alice, fieldsOf(alice, { count: 3 }));
  const cases: [string, ChainTip | undefined, SealedBlock, CairnErrorCode][] = [
    ["second block with no first", undefined, await next({}), "E_CHAIN_GAP"],
    [
      "first block not starting at commit 1",
      undefined,
      await next({ seq: 1, prev: "" }),
      "E_CHAIN_FORK",
    ],
    ["a block skipped", tip, await next({ seq: 3 }), "E_CHAIN_GAP"],
    ["prev names another block", tip, await next({ prev: otherFirst.hash }), "E_CHAIN_FORK"],
    ["another block at the tip's seq", tip, otherFirst, "E_CHAIN_FORK"],
    ["commit seqs reused", tip, await next({ firstCommitSeq: 2 }), "E_CHAIN_FORK"],
    ["commit seqs skipped", tip, await next({ firstCommitSeq: 4 }), "E_CHAIN_FORK"],
    ["the tip again", tip, first, "E_CHAIN_STALE"],
    ["a block behind the tip", { ...tip, seq: 5 }, await next({}), "E_CHAIN_STALE"],
  ];
  for (const [what, previous, sealed, code] of cases) {
    assert.throws(() => checkChain(previous, sealed, "/data/notes"), hasCode(code), what);
  }
});
