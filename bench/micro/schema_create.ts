/**
 * Micro-benchmark of the write hot path: `schema.create` on a 3-field record, and
 * `schema.checkField` on one field. Prints the median ns/op over several samples.
 *
 *   ./node_modules/.bin/deno run -A bench/micro/schema_create.ts
 */
import { defineSchema } from "../../src/core/schema.ts";

const SAMPLES = 9;
const OPS_PER_SAMPLE = 100_000;

const Item = defineSchema({
  ns: "item",
  version: 1,
  fields: {
    title: { type: "string", required: true },
    count: { type: "number" },
    tags: { type: "set" },
  },
});

/** Inputs are built before timing so only the schema's work is measured. */
const inputs = Array.from({ length: OPS_PER_SAMPLE }, (_, i) => ({
  title: `Item ${i}`,
  count: i,
  tags: new Set([`tag${i}`, `category${i % 5}`]),
}));

/** Keeps results alive so the engine cannot drop the work as dead code. */
let sink: unknown;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function measure(name: string, run: () => void): void {
  run(); // warm-up sample, not counted
  const nsPerOp: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    const start = performance.now();
    run();
    nsPerOp.push(((performance.now() - start) * 1e6) / OPS_PER_SAMPLE);
  }
  const all = nsPerOp.map((ns) => ns.toFixed(0)).join(" ");
  console.log(`${name}: median ${median(nsPerOp).toFixed(0)} ns/op (samples: ${all})`);
}

measure("schema.create, 3 fields", () => {
  for (let i = 0; i < OPS_PER_SAMPLE; i++) sink = Item.create(inputs[i]);
});

measure("schema.checkField, number", () => {
  for (let i = 0; i < OPS_PER_SAMPLE; i++) sink = Item.checkField("count", i);
});

if (sink === undefined) console.log("(no result)");
