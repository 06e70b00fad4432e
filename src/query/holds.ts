/**
 * Which live queries stay open. A query a plain `repo.query()` call returned is kept until it is
 * closed. One made only for holders (`{ whileHeld: true }`: what `useQuery` asks for) stays open
 * while something holds it, and closes RELEASE_GRACE_MS after its last holder let go — or after it
 * was made, if nothing held it by then (a render React threw away). The grace lets a holder that
 * lets go and takes hold again (React's strict-mode effects, a component moved in the tree, a
 * render that takes a while to commit) find the same query, with its results. A query still
 * scanning in slices is not closed: a component suspended on its `ready` holds nothing meanwhile.
 */

/** How long an unheld query that was made for holders stays open. */
export const RELEASE_GRACE_MS = 1_000;

interface Closable {
  readonly closed: boolean;
  /** A first evaluation still running in slices. */
  readonly pending: boolean;
  close(): void;
}

export class QueryHolds<Q extends Closable> {
  /** Queries some plain call returned: open until `close()`. */
  readonly #kept = new WeakSet<Q>();
  readonly #holders = new Map<Q, number>();
  /** Made for holders, held by none: each closes at its deadline (ms) unless held or kept. */
  readonly #unheld = new Map<Q, number>();
  #sweep: ReturnType<typeof setTimeout> | undefined;

  /** `query` was returned to a plain caller, or made for holders (`whileHeld`). */
  handedOut(query: Q, whileHeld: boolean): void {
    if (!whileHeld) {
      this.#kept.add(query);
      this.#unheld.delete(query);
    } else if (!this.#kept.has(query) && !this.#holders.has(query)) {
      this.#markUnheld(query); // made, or asked for again (a render): its grace starts now
    }
  }

  /** Holds `query` open until the returned function is called (once; later calls do nothing). */
  hold(query: Q): () => void {
    if (query.closed) return () => {};
    this.#holders.set(query, (this.#holders.get(query) ?? 0) + 1);
    this.#unheld.delete(query);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const holders = this.#holders.get(query);
      if (holders === undefined) return; // closed meanwhile
      if (holders > 1) this.#holders.set(query, holders - 1);
      else {
        this.#holders.delete(query);
        if (!this.#kept.has(query)) this.#markUnheld(query);
      }
    };
  }

  /**
   * Whether `query` was made for holders only and nothing holds it now: what it would report as
   * uncaught no code could listen to (its holders were the ones to show it).
   */
  unheld(query: Q): boolean {
    return this.#unheld.has(query);
  }

  /** `query` was closed (by a holder, or with its repository). */
  closed(query: Q): void {
    this.#holders.delete(query);
    this.#unheld.delete(query);
  }

  /** The repository closed: no sweep is left pending. */
  dispose(): void {
    clearTimeout(this.#sweep);
    this.#sweep = undefined;
    this.#unheld.clear();
  }

  #markUnheld(query: Q): void {
    this.#unheld.set(query, Date.now() + RELEASE_GRACE_MS);
    this.#sweep ??= setTimeout(() => this.#closeDue(), RELEASE_GRACE_MS);
  }

  /** Closes the queries whose grace is over; the sweep comes back for the others. */
  #closeDue(): void {
    this.#sweep = undefined;
    const now = Date.now();
    let next = Infinity;
    for (const [query, deadline] of [...this.#unheld]) {
      if (deadline > now) next = Math.min(next, deadline);
      else if (query.pending) {
        this.#unheld.set(query, now + RELEASE_GRACE_MS);
        next = Math.min(next, now + RELEASE_GRACE_MS);
      } else {
        this.#unheld.delete(query);
        query.close();
      }
    }
    if (next !== Infinity) this.#sweep = setTimeout(() => this.#closeDue(), next - now);
  }
}
