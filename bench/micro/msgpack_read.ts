/**
 * Cairn's MessagePack reader (src/core/msgpack_reader.ts) against msgpackr's `unpack` (records
 * extension off, as Cairn used it before), on the same bytes, in the same process:
 * - a block body of 10,000 value commits (what decoding a block does first);
 * - 10,000 item values decoded one by one (what lazy reads of a checkpoint's values do);
 * - a text field's runs: 2,000 runs of 40–200 characters, some of them not ASCII.
 * Each timing is one pass over its input; every sample is printed, then the medians and ratios.
 * Run: ./node_modules/.bin/deno run -A bench/micro/msgpack_read.ts
 */
import { Packr } from "msgpackr";
import { blockBody, type BlockFields } from "../../src/core/block.ts";
import type { Commit } from "../../src/core/commit.ts";
import { readMsgpack } from "../../src/core/msgpack_reader.ts";
import { MsgpackWriter } from "../../src/core/msgpack_writer.ts";

const COMMITS = 10_000;
const SAMPLES = 15;
const WARM_UP = 5;

const packr = new Packr({ useRecords: false, moreTypes: false });

const session = "abcdefghijklmnopqrstuv";
const fields: BlockFields = {
  session,
  publicKey: new Uint8Array(32).fill(7),
  seq: 1,
  prev: "",
  commits: Array.from({ length: COMMITS }, (_, i): Commit => ({
    session,
    seq: i + 1,
    key: `item-${i}`,
    hlc: 1_790_000_000_000 * 1024 + i,
    parents: i === 0 ? [] : [`${session}.${i}`],
    schema: "item@1",
    kind: "value",
    value: { title: `Item ${i}`, count: i, done: i % 3 === 0, tags: [`category${i % 5}`] },
  })),
};
const body = blockBody(fields);

const writer = new MsgpackWriter();
const values = fields.commits.map((commit) => {
  writer.value((commit as Commit & { value: Record<string, never> }).value);
  return writer.take();
});

const runs = Array.from({ length: 2_000 }, (_, i) => {
  const text = i % 4 === 0
    ? "Grüße aus Köln — ".repeat(1 + (i % 10))
    : "plain words ".repeat(4 + i % 12);
  return [`s${i % 7}`, i * 3, text];
});
writer.value(runs);
const textRuns = writer.take();

interface Case {
  name: string;
  ours: () => unknown;
  msgpackr: () => unknown;
}

const cases: Case[] = [
  {
    name: `block body, ${COMMITS.toLocaleString("en")} commits (${body.length} B)`,
    ours: () => readMsgpack(body),
    msgpackr: () => packr.unpack(body),
  },
  {
    name: `${COMMITS.toLocaleString("en")} item values one by one`,
    ours: () => {
      for (const value of values) readMsgpack(value);
    },
    msgpackr: () => {
      for (const value of values) packr.unpack(value);
    },
  },
  {
    name: `text runs, ${runs.length.toLocaleString("en")} runs (${textRuns.length} B)`,
    ours: () => readMsgpack(textRuns),
    msgpackr: () => packr.unpack(textRuns),
  },
];

function time(step: () => unknown): number {
  const start = performance.now();
  step();
  return performance.now() - start;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const format = (ms: number) => ms.toFixed(3);
for (const { name, ours, msgpackr } of cases) {
  for (let i = 0; i < WARM_UP; i++) [ours(), msgpackr()];
  const mine: number[] = [];
  const theirs: number[] = [];
  // Interleaved, so drift in the machine's speed touches both alike.
  for (let i = 0; i < SAMPLES; i++) {
    mine.push(time(ours));
    theirs.push(time(msgpackr));
  }
  console.log(`${name}`);
  console.log(`  ours ms:     ${mine.map(format).join(" ")}`);
  console.log(`  msgpackr ms: ${theirs.map(format).join(" ")}`);
  console.log(
    `  medians ${format(median(mine))} / ${format(median(theirs))} ms: ours is ${
      (median(mine) / median(theirs)).toFixed(2)
    }× msgpackr's time`,
  );
}
