/**
 * When to try again after a connection failed: exponential backoff with full jitter (a random
 * delay between 0 and a cap that doubles per failure), so that clients a server dropped at once
 * do not all come back at once.
 */

export interface BackoffOptions {
  /** The cap of the first delay. */
  readonly initialMs: number;
  /** The largest cap. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 };

/** The delay before attempt `failures` (0 after the first failure): random * cap. */
export function backoffDelay(
  failures: number,
  options: BackoffOptions,
  random: () => number,
): number {
  const cap = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(failures, 52));
  return Math.floor(random() * cap);
}

export class Backoff {
  readonly #options: BackoffOptions;
  readonly #random: () => number;
  #failures = 0;

  constructor(options: BackoffOptions, random: () => number) {
    this.#options = options;
    this.#random = random;
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    return backoffDelay(this.#failures++, this.#options, this.#random);
  }

  /** A connection worked: the next failure starts from the first delay again. */
  reset(): void {
    this.#failures = 0;
  }
}
