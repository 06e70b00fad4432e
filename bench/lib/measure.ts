/**
 * The one sampling loop every side goes through, wherever it runs (main thread, Node, Deno, the
 * browser's SQLite worker): setup, warm-up, samples, latency pass, teardown.
 */
import type { Plan, Side, Variant, Workload } from "./types.ts";

export interface SideResult {
  samples: number[];
  latencies?: number[];
}

export type Progress = (phase: string, i: number, n: number) => void;

/** Called around the measured samples (after warm-up): bench/profile.ts profiles only those. */
export interface SampleHooks {
  beforeSamples(): Promise<void>;
  afterSamples(): Promise<void>;
}

/**
 * Samples per row: ≥ 30 for µs-scale rows, ≥ 7 for ms-scale rows (one warm-up for rows of
 * seconds); quick mode takes a few. A size does not change between samples of one document: one.
 */
const PLANS: Record<Workload["scale"], { quick: Plan; full: Plan }> = {
  us: {
    quick: { warmup: 2, samples: 5, latencyOps: 2_000, sliceMs: 0 },
    full: { warmup: 5, samples: 30, latencyOps: 20_000, sliceMs: 0 },
  },
  ms: {
    quick: { warmup: 1, samples: 3, latencyOps: 0, sliceMs: 0 },
    full: { warmup: 2, samples: 7, latencyOps: 0, sliceMs: 0 },
  },
  long: {
    quick: { warmup: 1, samples: 3, latencyOps: 0, sliceMs: 0 },
    full: { warmup: 1, samples: 7, latencyOps: 0, sliceMs: 0 },
  },
  fixed: {
    quick: { warmup: 1, samples: 3, latencyOps: 0, sliceMs: 150 },
    full: { warmup: 1, samples: 7, latencyOps: 0, sliceMs: 1_000 },
  },
  memory: {
    quick: { warmup: 0, samples: 1, latencyOps: 0, sliceMs: 0 },
    full: { warmup: 0, samples: 3, latencyOps: 0, sliceMs: 0 },
  },
  size: {
    quick: { warmup: 0, samples: 1, latencyOps: 0, sliceMs: 0 },
    full: { warmup: 0, samples: 1, latencyOps: 0, sliceMs: 0 },
  },
};

export function planFor(workload: Pick<Workload, "scale">, quick: boolean): Plan {
  const plans = PLANS[workload.scale];
  return quick ? plans.quick : plans.full;
}

export async function runSide<C>(
  side: Side<C>,
  ctx: C,
  variant: Variant,
  plan: Plan,
  progress: Progress,
  hooks?: SampleHooks,
): Promise<SideResult> {
  progress("setup", 0, 1);
  const state = await side.setup(ctx, variant, plan);
  try {
    let index = 0;
    for (let i = 0; i < plan.warmup; i++) {
      progress("warm-up", i + 1, plan.warmup);
      await side.sample(state, index++);
    }
    const samples: number[] = [];
    await hooks?.beforeSamples();
    for (let i = 0; i < plan.samples; i++) {
      progress("sample", i + 1, plan.samples);
      samples.push(await side.sample(state, index++));
    }
    await hooks?.afterSamples();
    let latencies: number[] | undefined;
    if (side.latency) {
      progress("latency", 0, 1);
      latencies = await side.latency(state, plan.latencyOps);
    }
    return { samples, latencies };
  } finally {
    await side.teardown?.(state);
  }
}
