/**
 * Transient PostgreSQL failures (a restart, a lost connection, the server unreachable) are waited
 * out: the step runs again with backoff for up to a minute, so a pusher sees a delay, not an
 * error. A CairnError (the input's fault, or the schema's) is not retried.
 */
import { CairnError } from "../../core/errors.ts";

/** How long a push waits for PostgreSQL to come back before it fails. */
const RETRY_FOR_MS = 60_000;
const FIRST_RETRY_MS = 50;
const LAST_RETRY_MS = 2_000;

/**
 * Runs `step` until it succeeds, with backoff, while `keepTrying(delay)` says to wait `delay` ms
 * and try again (by default: for up to RETRY_FOR_MS).
 */
export async function retrying<T>(
  step: () => Promise<T>,
  keepTrying: (delay: number) => boolean = forAMinute(),
): Promise<T> {
  for (let delay = FIRST_RETRY_MS;; delay = Math.min(delay * 2, LAST_RETRY_MS)) {
    try {
      return await step();
    } catch (err) {
      if (err instanceof CairnError || !keepTrying(delay)) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

function forAMinute(): (delay: number) => boolean {
  const deadline = Date.now() + RETRY_FOR_MS;
  return (delay) => Date.now() + delay <= deadline;
}
