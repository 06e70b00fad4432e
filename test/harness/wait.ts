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
