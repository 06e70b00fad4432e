/**
 * Cooperative scheduling for work that may be long (a cold scan of a large repository, a
 * checkpoint): whether the runtime wants it cut into slices and how long a slice may run, and how
 * to give the event loop a turn between slices. The layers above ask these questions instead of
 * looking at browser globals themselves.
 */

interface PrioritizedScheduler {
  yield(): Promise<void>;
}

/** How long one slice of long work may run on a browser page before the event loop's turn. */
const PAGE_SLICE_MS = 8;

/**
 * The time budget of a slice of long work, or null for "do it in one go": sliced on a browser
 * page, whose main thread must stay responsive to input and rendering; in one go on Deno, Node
 * and in workers, where long synchronous work blocks nobody who is waiting.
 */
export function sliceBudgetMs(): number | null {
  return typeof (globalThis as { document?: unknown }).document === "object" ? PAGE_SLICE_MS : null;
}

/**
 * Resolves once the event loop has had a turn: pending input, rendering and other tasks run
 * first. Uses `scheduler.yield()` where the runtime has it (Chromium: the continuation keeps its
 * priority, ahead of the page's other tasks), else nextTurn(). For work a caller waits on.
 */
export function nextSlice(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: Partial<PrioritizedScheduler> }).scheduler;
  if (scheduler !== undefined && typeof scheduler.yield === "function") {
    return scheduler.yield();
  }
  return nextTurn();
}

/**
 * Resolves in a task of its own, queued behind the page's other tasks, rendering and input: for
 * background work, which should take turns with the page rather than go ahead of it (a
 * continuation of `scheduler.yield()` goes first: slicing a checkpoint with it, Chromium was seen
 * to render no frame for ~100 ms at a time). A MessageChannel message: a task without the timer
 * clamp.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof MessageChannel === "function") {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close(); // an open port would keep Deno or Node running
        resolve();
      };
      channel.port2.postMessage(null);
    } else setTimeout(resolve, 0);
  });
}
