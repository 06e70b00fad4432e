/** Summary statistics over benchmark samples, latency percentiles, and noise-aware comparison. */

export interface Summary {
  samples: number;
  median: number;
  mean: number;
  /** Mean of the samples left after dropping the lowest and highest 10 % (at least one each). */
  trimmedMean: number;
  stddev: number;
  /** Coefficient of variation: stddev / mean. */
  cv: number;
  /** Robust spread: 1.4826 × median absolute deviation / median (≈ CV for normal noise). */
  robustCv: number;
  min: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const variance = n > 1 ? sorted.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1) : 0;
  const median = quantileSorted(sorted, 0.5);
  const stddev = Math.sqrt(variance);
  const cut = n >= 5 ? Math.max(1, Math.floor(n * 0.1)) : 0;
  const kept = sorted.slice(cut, n - cut);
  const trimmedMean = kept.reduce((sum, v) => sum + v, 0) / kept.length;
  const deviations = sorted.map((v) => Math.abs(v - median)).sort((a, b) => a - b);
  const mad = quantileSorted(deviations, 0.5);
  return {
    samples: n,
    median,
    mean,
    trimmedMean,
    stddev,
    cv: mean === 0 ? 0 : stddev / mean,
    robustCv: median === 0 ? 0 : (1.4826 * mad) / Math.abs(median),
    min: sorted[0],
    max: sorted[n - 1],
  };
}

/** The q-quantile (0…1) of sorted values, linearly interpolated. */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/**
 * A distribution-free confidence interval for the median of `values`: the pair of order
 * statistics that a median lies between with at least `level` probability, whatever the
 * distribution (the count of values below the median is binomial with p = 1/2). Needs at least
 * 6 values for 95 %; with fewer, the interval is the whole range.
 */
export function medianInterval(
  values: readonly number[],
  level = 0.95,
): { low: number; high: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const tail = (1 - level) / 2;
  // The largest k with P(X < k) ≤ tail for X ~ Binomial(n, 1/2): the interval runs from the
  // k-th smallest value to the k-th largest.
  let k = 0;
  let below = 0;
  let logChoose = 0; // log C(n, i), built up one i at a time
  for (let i = 0; i < n; i++) {
    below += Math.exp(logChoose - n * Math.LN2);
    if (below > tail) break;
    k = i + 1;
    logChoose += Math.log(n - i) - Math.log(i + 1);
  }
  if (k === 0) return { low: sorted[0], high: sorted[n - 1] };
  return { low: sorted[k - 1], high: sorted[n - k] };
}

export function percentiles(values: readonly number[]): { p50: number; p99: number; p999: number } {
  const sorted = Float64Array.from(values).sort();
  const s = Array.from(sorted);
  return {
    p50: quantileSorted(s, 0.5),
    p99: quantileSorted(s, 0.99),
    p999: quantileSorted(s, 0.999),
  };
}

/** Runs `sample` (which returns one measurement) `warmup` times unrecorded, then `count` times. */
export async function collect(
  count: number,
  warmup: number,
  sample: () => number | Promise<number>,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await sample();
  const values: number[] = [];
  for (let i = 0; i < count; i++) values.push(await sample());
  return values;
}

/**
 * Samples two contenders in rounds of one sample each, after `warmup` unrecorded rounds, so that
 * drift in a shared, noisy machine falls on both alike; their ratio is then best read per round.
 * Which one goes first alternates from round to round (a b, b a, a b, …): the one sampled second
 * would otherwise always run with the first one's garbage still to collect.
 */
export async function collectPaired(
  count: number,
  warmup: number,
  a: () => number | Promise<number>,
  b: () => number | Promise<number>,
): Promise<{ a: number[]; b: number[] }> {
  const values = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < warmup + count; i++) {
    let sampleA: number;
    let sampleB: number;
    if (i % 2 === 0) {
      sampleA = await a();
      sampleB = await b();
    } else {
      sampleB = await b();
      sampleA = await a();
    }
    if (i < warmup) continue;
    values.a.push(sampleA);
    values.b.push(sampleB);
  }
  return values;
}

export type Verdict = "faster" | "slower" | "tie";

/** Smallest difference ever called a difference, whatever the noise: 3 %. */
const MIN_DIFFERENCE = 0.03;

export interface Comparison {
  /** subject median / reference median (in the unit, whatever its direction). */
  ratio: number;
  /** How many times better the subject is (> 1 better), taking the unit's direction into account. */
  speedup: number;
  /** The relative difference below which the two count as a tie. */
  noise: number;
  verdict: Verdict;
}

/**
 * Compares two sets of samples. The difference of the medians counts only when it exceeds the
 * noise: twice the larger robust CV of the two (and at least 3 %); otherwise it is a tie.
 */
export function compare(
  subject: Summary,
  reference: Summary,
  better: "lower" | "higher",
): Comparison {
  const ratio = subject.median / reference.median;
  const speedup = better === "lower" ? 1 / ratio : ratio;
  const noise = Math.max(MIN_DIFFERENCE, 2 * Math.max(subject.robustCv, reference.robustCv));
  const verdict: Verdict = Math.abs(Math.log(speedup)) <= Math.log(1 + noise)
    ? "tie"
    : speedup > 1
    ? "faster"
    : "slower";
  return { ratio, speedup, noise, verdict };
}

/** The smallest step performance.now() shows on this runtime, in µs. */
export function timerResolutionUs(): number {
  let smallest = Infinity;
  for (let round = 0; round < 50; round++) {
    const start = performance.now();
    let next = performance.now();
    while (next === start) next = performance.now();
    smallest = Math.min(smallest, next - start);
  }
  return smallest * 1000;
}
