/**
 * Transient PostgreSQL failures (a restart, a lost connection, the server unreachable) are waited
 * out: the step runs again with backoff for up to a minute, so a pusher sees a delay, not an
 * error. A CairnError (the input's fault, or the schema's) is not retried. A failure still there
 * when the retries end is E_IO, the driver's error its cause: a caller tells the store's failure
 * from its own by the code (a subscribe is then refused for its repository alone, not its whole
 * socket), and an app gets a CairnError from every call.
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
      if (err instanceof CairnError) throw err;
      if (!keepTrying(delay)) throw postgresFailure(err);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The errors postgresFailure made: told apart from a check's E_IO by identity, not by shape. */
const outages = new WeakSet<CairnError>();

/** A PostgreSQL driver's failure as E_IO (a CairnError as it is). */
export function postgresFailure(err: unknown): CairnError {
  if (err instanceof CairnError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const failure = new CairnError("E_IO", `PostgreSQL: ${message}`, { cause: err });
  outages.add(failure);
  return failure;
}

/** Whether `err` is PostgreSQL failing past the retries (postgresFailure), not a check's refusal. */
export function isPostgresFailure(err: unknown): boolean {
  return err instanceof CairnError && outages.has(err);
}

function forAMinute(): (delay: number) => boolean {
  const deadline = Date.now() + RETRY_FOR_MS;
  return (delay) => Date.now() + delay <= deadline;
}
