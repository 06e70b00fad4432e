/**
 * What the two log formats cost: encode and scan 100,000 value commits written as 100 blocks of
 * 1,000 commits (signed), as one log file. Scan includes decoding and hashing every block
 * (decodeBlock / blockFromJson), not verifying signatures.
 * Run: ./node_modules/.bin/deno run -A bench/micro/log_scan.ts
 */
import {
  type BlockFields,
  blockFromJson,
  blockToJson,
  decodeBlock,
  encodeBlock,
  sealBlock,
  type SealedBlock,
  sessionIdFromPublicKey,
} from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";
import { binaryLog } from "../../src/storage/binary_log.ts";
import { crc32c } from "../../src/storage/crc32c.ts";
import { jsonlLog } from "../../src/storage/jsonl_log.ts";
import type { LogFormat } from "../../src/storage/log_format.ts";
import { collect, summarize } from "../lib/stats.ts";

const COMMITS = 100_000;
const PER_BLOCK = 1_000;
const SAMPLES = 9;
const WARMUP = 2;

const suite = await cryptoSuite();
const key = await suite.ed25519.generate();
const session = await sessionIdFromPublicKey(key.publicKey, suite);
const signer = { key, ed25519: suite.ed25519 };

const blocks: SealedBlock[] = [];
let prev = "";
for (let first = 1; first <= COMMITS; first += PER_BLOCK) {
  const commits = Array.from({ length: PER_BLOCK }, (_, i): Commit => {
    const seq = first + i;
    return {
      session,
      seq,
      key: `item-${seq}`,
      hlc: 1_790_000_000_000 * 1024 + seq,
      parents: seq > 1 ? [`${session}.${seq - 1}`] : [],
      schema: "item@1",
      kind: "value",
      value: { title: `Item ${seq}`, count: seq, tags: [`category${seq % 5}`, `tag${seq}`] },
    };
  });
  const fields: BlockFields = {
    session,
    publicKey: key.publicKey,
    seq: blocks.length + 1,
    prev,
    commits,
  };
  const sealed = await sealBlock(fields, signer, suite);
  blocks.push(sealed);
  prev = sealed.hash;
}

function fileOf(format: LogFormat): Uint8Array {
  const header = format.header();
  const records = format.encode(blocks).bytes;
  const file = new Uint8Array(header.length + records.length);
  file.set(header);
  file.set(records, header.length);
  return file;
}

// The block codec alone, without the log framing around it: what a scan cannot go below.
const payloads = blocks.map(encodeBlock);
const jsonTexts = blocks.map((sealed) => JSON.stringify(blockToJson(sealed)));
const decodeLabel = { binary: "decodeBlock alone", jsonl: "JSON.parse + blockFromJson" };
const decodeAll = {
  binary: async () => {
    for (const payload of payloads) await decodeBlock(payload, suite);
  },
  jsonl: async () => {
    for (const text of jsonTexts) await blockFromJson(JSON.parse(text), suite);
  },
};

async function medianMillis(step: () => unknown): Promise<number> {
  const times = await collect(SAMPLES, WARMUP, async () => {
    const start = performance.now();
    await step();
    return performance.now() - start;
  });
  return summarize(times).median;
}

function row(label: string, bytes: number, ms: number): string {
  const mbPerSecond = bytes / 1e6 / (ms / 1000);
  return `${label.padEnd(38)} ${ms.toFixed(1).padStart(8)} ms ${
    mbPerSecond.toFixed(0).padStart(6)
  } MB/s ${(ms * 1000 / COMMITS).toFixed(3).padStart(7)} µs/commit`;
}

console.log(
  `${COMMITS.toLocaleString("en")} commits in blocks of ${PER_BLOCK.toLocaleString("en")}, ` +
    `median of ${SAMPLES} (${navigator.userAgent})`,
);
for (const format of [binaryLog, jsonlLog]) {
  const file = fileOf(format);
  const scanned = await format.scan(file, suite);
  if (scanned.blocks.length !== blocks.length || scanned.validEnd !== file.length) {
    throw new Error(`${format.name}: scan did not read back every block`);
  }
  console.log(`${format.name} log: ${(file.length / 1e6).toFixed(2)} MB`);
  console.log(row(`  encode`, file.length, await medianMillis(() => format.encode(blocks).bytes)));
  console.log(
    row(
      `  scan (frame, crc, decode, hash)`,
      file.length,
      await medianMillis(() => format.scan(file, suite)),
    ),
  );
  console.log(
    row(
      `  of which: ${decodeLabel[format.name]}`,
      file.length,
      await medianMillis(decodeAll[format.name]),
    ),
  );
  console.log(
    row(`  crc32c of the whole file`, file.length, await medianMillis(() => crc32c(file))),
  );
}
