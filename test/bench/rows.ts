/** Envelopes and rows made up for the report tests: a Deno runtime, rows of known medians. */
import type { Envelope } from "../../bench/lib/envelope.ts";
import type { Row, RuntimeInfo } from "../../bench/lib/types.ts";
import { WORKLOADS } from "../../bench/workloads/index.ts";

export const INFO: RuntimeInfo = {
  runtime: "deno",
  version: "2.9.5",
  engine: "V8",
  sqlite: { native: "3.53.2", wasm: "3.54.1" },
  timerResolutionUs: 0.4,
  features: { storage: true, query: true, text: true },
  contenders: ["cairn", "sqlite-wal", "sqlite-wasm-mem"],
  baseline: "sqlite-wal",
};

export function row(
  workload: string,
  variant: string,
  contender: string,
  samples: number[],
  extra: Partial<Row> = {},
): Row {
  const w = WORKLOADS.find((w) => w.id === workload)!;
  return {
    workload,
    variant,
    contender,
    status: "ok",
    unit: w.unit,
    better: w.better,
    samples,
    ms: 10,
    ...extra,
  };
}

/** Five samples with the given median, spread by ±`spread` of it. */
export function around(median: number, spread = 0.005): number[] {
  return [-2, -1, 0, 1, 2].map((k) => median * (1 + k * spread));
}

export function envelope(rows: Row[], quick = false): Envelope {
  return {
    format: "cairn-bench/1",
    createdAt: "2026-11-25T08:44:41.199Z",
    commit: "test",
    machine: { cpu: "test CPU", cores: 2, memoryBytes: 2 ** 33, os: "test", fingerprint: "t" },
    settings: { quick, filter: "", runtimes: ["deno"] },
    runtimes: { deno: { info: INFO, rows, ms: 1000 } },
  };
}
