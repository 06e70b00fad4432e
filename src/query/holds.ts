/**
 * Which live queries stay open. A query a plain `repo.query()` call returned is kept until it is
 * closed. One made only for holders (`{ whileHeld: true }`: what `useQuery` asks for) stays open
 * while something holds it, and closes a moment after its last holder lets go — or after it was
 * made, if nothing ever held it (a render React threw away). The moment (RELEASE_GRACE_MS) lets a
 * holder that lets go and takes hold again at once (React's strict-mode effects, a component moved
 * in the tree) find the same query, with its results, instead of evaluating it anew.
 */

/** How long an unheld query that was made for holders stays open. */
export const RELEASE_GRACE_MS = 1_000;

interface Closable {
  readonly closed: boolean;
  close(): void;
}

export class QueryHolds<Q extends Closable> {
  /** Queries some plain call returned: open until `close()`. */
  readonly #kept = new WeakSet<Q>();
  readonly #holders = new Map<Q, number>();
  /** Made for holders, held by none: closed at the next sweep unless held or kept by then. */
  readonly #unheld = new Set<Q>();
  #sweep: ReturnType<typeof setTimeout> | undefined;

  /** `query` was returned to a plain caller, or made for holders (`whileHeld`). */
  handedOut(query: Q, whileHeld: boolean): void {
    if (!whileHeld) {
      this.#kept.add(query);
      this.#unheld.delete(query);
    } else if (!this.#kept.has(query) && !this.#holders.has(query)) {
      this.#markUnheld(query);
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
    this.#unheld.add(query);
    this.#sweep ??= setTimeout(() => this.#closeUnheld(), RELEASE_GRACE_MS);
  }

  #closeUnheld(): void {
    this.#sweep = undefined;
    const unheld = [...this.#unheld];
    this.#unheld.clear();
    for (const query of unheld) query.close();
  }
}
