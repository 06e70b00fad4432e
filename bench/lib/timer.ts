/** Clock helpers for sides: time a block, or one operation in µs. */

export function now(): number {
  return performance.now();
}

/** Elapsed ms of `fn` (awaited if it returns a promise). */
export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export function timeSync(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** µs per operation from a sample's elapsed ms. */
export function perOpUs(ms: number, ops: number): number {
  return (ms * 1000) / ops;
}

/** µs per call of `op`, over `ops` calls one after the other. */
export function perOpSync(ops: number, op: () => unknown): number {
  const start = performance.now();
  for (let i = 0; i < ops; i++) op();
  return perOpUs(performance.now() - start, ops);
}

/** µs per call of `op`, over `ops` calls, each awaited before the next starts. */
export async function perOpAwaited(ops: number, op: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ops; i++) await op();
  return perOpUs(performance.now() - start, ops);
}

/**
 * µs per call of `op`, calling it in groups of `group` until at least `minMs` has passed: lets
 * sub-µs operations be timed with a coarse clock (the browser's is 5 µs).
 */
export function perOpLoop(minMs: number, op: (i: number) => void, group = 16): number {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    for (let k = 0; k < group; k++) op(ops++);
    elapsed = performance.now() - start;
  } while (elapsed < minMs);
  return (elapsed * 1000) / ops;
}
