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
import { Cairn } from "cairndb";
import { encodeBlockPayload, sealBlock, sessionIdFromPublicKey } from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import { toBase64Url } from "../../src/core/bytes.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { envInteger } from "../harness/peers.ts";
import { hostileStream } from "../harness/hostile_writers.ts";

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
