/**
 * Waiting for something that happens over real sockets or in other processes: polled every
 * 10 ms, failing after 10 s with what was awaited (a hang guard, not a speed assertion).
 */
export async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * What `promise` came to within `ms`: "resolved", the error it rejected with, or "pending" when
 * it had not settled by then — for a test that a wait ends at all (a hang guard, not a speed
 * assertion).
 */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve("pending"), ms)));
  try {
    return await Promise.race([promise.then(() => "resolved", (err) => err), late]);
  } finally {
    clearTimeout(timer);
  }
}
