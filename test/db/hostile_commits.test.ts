/**
 * Whatever two trusted writers gone bad sign (test/harness/hostile_writers.ts), importBlocks
 * answers with CairnErrors only, a refused block leaves no trace (the repository ends exactly as
 * one that was given only the accepted blocks), and every read afterwards answers or fails with a
 * CairnError. With and without the schemas registered.
 *
 * And a commit naming a parent twice is refused, wherever the second one stands.
 *
 * Seeded: CAIRN_HOSTILE_RUNS=N runs N streams, CAIRN_HOSTILE_SEED=S replays stream S.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Cairn, defineSchema } from "cairndb";
import { encodeBlockPayload, sealBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { envInteger } from "../harness/peers.ts";
import { hostileStream } from "../harness/hostile_writers.ts";
import { CraftingAuthor } from "../harness/crafting_author.ts";

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

test("a commit naming a parent twice, next to each other or apart, is refused; the same merge naming each once applies", async () => {
  const suite = await cryptoSuite();
  const key = await suite.ed25519.generate();
  const session = await sessionIdFromPublicKey(key.publicKey, suite);
  const db = await Cairn.open({ trust: [toBase64Url(key.publicKey)] });
  const repo = await db.open("/merges");
  let prev = "";
  let seq = 0;
  const block = async (commits: Commit[]) => {
    const sealed = await sealBlock(
      { session, publicKey: key.publicKey, seq: seq + 1, prev, commits },
      { key, ed25519: suite.ed25519 },
      suite,
    );
    const report = await repo.importBlocks([
      encodeBlockPayload(sealed.body, sealed.block.signature),
    ]);
    if (report.applied === 1) [seq, prev] = [seq + 1, sealed.hash];
    return report;
  };
  const commit = (commitSeq: number, parents: string[]): Commit => ({
    session,
    seq: commitSeq,
    key: "a",
    hlc: 1_790_000_000_000 * 1024 + commitSeq,
    parents,
    schema: "note@1",
    kind: parents.length === 0 ? "value" : "delta",
    ...(parents.length === 0 ? { value: { n: 0 } } : { set: { n: commitSeq }, unset: [] }),
  } as Commit);
  const root = `${session}.1`;
  // Two concurrent leaves of "a", both children of its root.
  assert.equal((await block([commit(1, []), commit(2, [root]), commit(3, [root])])).applied, 1);
  const [left, right] = [`${session}.2`, `${session}.3`];
  for (const parents of [[left, left], [left, right, left]]) {
    const report = await block([commit(4, parents)]);
    assert.equal(report.applied, 0, parents.join(" "));
    assert.equal(report.rejected[0].error.code, "E_BAD_COMMIT");
    assert.match(report.rejected[0].error.message, new RegExp(`names parent ${left} twice`));
    assert.deepEqual([...repo.leaves("a")].sort(), [left, right].sort(), "nothing of it kept");
  }
  assert.equal((await block([commit(4, [left, right])])).applied, 1);
  assert.deepEqual(repo.leaves("a"), [`${session}.4`]);
  await db.close();
});

const V1 = defineSchema({
  ns: "n",
  version: 1,
  fields: { title: { type: "string", required: true }, x: { type: "string" } },
});
const V2 = defineSchema({
  ns: "n",
  version: 2,
  fields: { title: { type: "string", required: true }, x: { type: "number" } },
  upgrade: (old) => ({ title: old.title }),
});

test("a delta that would make a value its schema refuses is refused, with the schemas registered or not: one unsetting a required field, on a value of another schema, on a delete, on no parent", async () => {
  const cases: [string, (a: CraftingAuthor) => Commit[], string][] = [
    ["unsets a required field", (a) => [
      a.value("k", V1.id, [], { title: "t" }),
      a.delta("k", V1.id, [a.id(1)], {}, ["title"]),
    ], "unsets required field title"],
    ["under n@2 on a value under n@1", (a) => [
      a.value("k", V1.id, [], { title: "t", x: "str" }),
      a.delta("k", V2.id, [a.id(1)], { title: "u" }),
    ], "is a delta under n@2 on a value under n@1"],
    ["on a delete", (a) => [
      a.value("k", V1.id, [], { title: "t" }),
      a.del("k", V1.id, [a.id(1)]),
      a.delta("k", V1.id, [a.id(2)], { x: "y" }),
    ], "is a delta without a live first parent"],
    [
      "on no parent",
      (a) => [a.delta("k", V1.id, [], { x: "y" })],
      "is a delta without a live first parent",
    ],
  ];
  for (const schemas of [[V1, V2], []]) {
    for (const [name, commits, why] of cases) {
      // Unsetting a required field is known only to a replica that has the schema.
      if (schemas.length === 0 && name === "unsets a required field") continue;
      const author = await CraftingAuthor.make();
      const db = await Cairn.open({ schemas, trust: [author.trust] });
      const repo = await db.open("/r");
      const report = await repo.importBlocks([await author.block(commits(author))]);
      assert.equal(report.applied, 0, name);
      assert.equal(report.rejected[0].error.code, "E_BAD_COMMIT", name);
      assert.match(report.rejected[0].error.message, new RegExp(why), name);
      assert.equal(repo.has("k"), false, name);
      await db.close();
    }
  }
});

test("a replica accepts every delta and value an honest one writes: updates, unsets, text edits, writes through a newer version, re-creates", async () => {
  const Notes = defineSchema({
    ns: "n",
    version: 3,
    fields: { title: { type: "string", required: true }, body: { type: "text" } },
    upgrade: (old) => ({ title: old.title }),
  });
  const db = await Cairn.open({ schemas: [V1, V2, Notes] });
  const repo = await db.open("/r");
  const item = repo.create(V1, { title: "t", x: "a" }, { key: "k" });
  item.set("x", "b");
  item.set("x", undefined);
  repo.get("k", V2)!.set("x", 1);
  repo.get("k", V2)!.set("x", 2);
  repo.get("k", Notes)!.set("body", "hello");
  repo.get("k", Notes)!.insertText("body", 5, "!");
  repo.get("k", Notes)!.delete();
  repo.create(V1, { title: "again" }, { key: "k" });
  repo.get("k", V1)!.set("x", "c");
  await repo.flush();
  const peer = await Cairn.open({ schemas: [V1, V2, Notes], trust: [db.session.publicKey] });
  const peerRepo = await peer.open("/r");
  const report = await peerRepo.importBlocks(await repo.exportBlocks(peerRepo.versionVector()));
  assert.deepEqual(report.rejected, []);
  assert.deepEqual(peerRepo.get("k", V1)!.toObject(), { title: "again", x: "c" });
  await db.close();
  await peer.close();
});
