/**
 * What sealing one large block costs, step by step: 100,000 value commits in one block; then
 * the same tick sealed as blocks of at most 256 KiB (what a repository does), and a small tick.
 * Run: ./node_modules/.bin/deno run -A bench/micro/seal_block.ts
 */
import {
  blockBody,
  type BlockFields,
  decodeBlock,
  encodeBlock,
  sealBlock,
  sealBlocks,
  sessionIdFromPublicKey,
  verifyBlock,
} from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";

const COMMITS = 100_000;
const CAP = 256 * 1024;
/** Commits of the small tick, and how many of them are sealed per timing. */
const SMALL_TICK = 10;
const SMALL_TICKS = 1000;
const SAMPLES = 7;

/** Median wall time of `SAMPLES` runs of `step`, after one warm-up run. */
async function medianMillis(step: () => unknown): Promise<number> {
  await step();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now();
    await step();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const suite = await cryptoSuite();
const key = await suite.ed25519.generate();
const session = await sessionIdFromPublicKey(key.publicKey, suite);
const fields: BlockFields = {
  session,
  publicKey: key.publicKey,
  seq: 1,
  prev: "",
  commits: Array.from({ length: COMMITS }, (_, i): Commit => ({
    session,
    seq: i + 1,
    key: `item-${i}`,
    hlc: 1_790_000_000_000 * 1024 + i,
    parents: [],
    schema: "item@1",
    kind: "value",
    value: { title: `Item ${i}`, count: i, tags: [`category${i % 5}`, `tag${i}`] },
  })),
};

const body = blockBody(fields);
const sealed = await sealBlock(fields, { key, ed25519: suite.ed25519 }, suite);
const encoded = encodeBlock(sealed);

const results: [string, number][] = [
  ["build body (msgpack)", await medianMillis(() => blockBody(fields))],
  ["SHA-256 of body", await medianMillis(() => suite.sha256(body))],
  [
    `sign (${suite.ed25519.implementation})`,
    await medianMillis(() => suite.ed25519.sign(key, body)),
  ],
  [
    "sealBlock (all three)",
    await medianMillis(() => sealBlock(fields, { key, ed25519: suite.ed25519 }, suite)),
  ],
  [
    `sealBlocks capped at 256 KiB (${
      (await sealBlocks(fields, { key, ed25519: suite.ed25519 }, suite, CAP)).length
    } blocks)`,
    await medianMillis(() => sealBlocks(fields, { key, ed25519: suite.ed25519 }, suite, CAP)),
  ],
  ["encodeBlock", await medianMillis(() => encodeBlock(sealed))],
  [
    "decodeBlock (validate + canonical check + hash)",
    await medianMillis(() => decodeBlock(encoded, suite)),
  ],
  ["verifyBlock", await medianMillis(() => verifyBlock(sealed, suite))],
];

console.log(
  `block of ${COMMITS.toLocaleString("en")} commits, body ${(body.length / 1e6).toFixed(2)} MB, ` +
    `median of ${SAMPLES} (${navigator.userAgent})`,
);
for (const [step, ms] of results) {
  console.log(
    `${step.padEnd(50)} ${ms.toFixed(2).padStart(8)} ms  ${
      (ms * 1000 / COMMITS).toFixed(3)
    } µs/commit`,
  );
}

const small = { ...fields, commits: fields.commits.slice(0, SMALL_TICK) };
const signer = { key, ed25519: suite.ed25519 };
for (
  const [step, seal] of [
    ["sealBlock", () => sealBlock(small, signer, suite)],
    ["sealBlocks capped at 256 KiB", () => sealBlocks(small, signer, suite, CAP)],
  ] as const
) {
  const ms = await medianMillis(async () => {
    for (let i = 0; i < SMALL_TICKS; i++) await seal();
  });
  console.log(
    `${`tick of ${SMALL_TICK} commits: ${step}`.padEnd(50)} ${
      (ms * 1000 / SMALL_TICKS).toFixed(2).padStart(8)
    } µs/tick`,
  );
}
