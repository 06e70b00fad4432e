/** Summary statistics over benchmark samples. */

export interface Summary {
  samples: number;
  median: number;
  mean: number;
  stddev: number;
  /** Coefficient of variation: stddev / mean. */
  cv: number;
  min: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const variance = n > 1 ? sorted.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1) : 0;
  const middle = n >> 1;
  const median = n % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  const stddev = Math.sqrt(variance);
  return { samples: n, median, mean, stddev, cv: mean === 0 ? 0 : stddev / mean, min: sorted[0], max: sorted[n - 1] };
}

/** Runs `sample` (which returns one measurement) `warmup` times unrecorded, then `count` times. */
export async function collect(count: number, warmup: number, sample: () => number | Promise<number>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await sample();
  const values: number[] = [];
  for (let i = 0; i < count; i++) values.push(await sample());
  return values;
}
