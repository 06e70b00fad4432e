/**
 * When a repository's handles stop working. One `RepositoryLifetime` is shared by a repository's
 * handle, every item handle taken from it and its live queries, so that ending it is one write
 * and checking it one field read on each call.
 *
 * The lifetime ends when `db.close(path)` (or `db.close()`) has closed the repository: everything
 * written is stored and its files are closed. From then on every use of those handles is
 * E_CLOSED, even once the path is opened again (that gives a new handle): reading an old handle
 * would show a copy that no longer follows the stored repository. Until then reads work: a close
 * that failed (E_IO, a full disk) leaves the repository open for reads and `flush()`, while the
 * repository itself refuses writes from the moment its close began.
 */
import { CairnError } from "../core/errors.ts";

export class RepositoryLifetime {
  readonly path: string;
  /** True once the repository is closed. */
  ended = false;
  readonly #onEnd = new Set<() => void>();

  constructor(path: string) {
    this.path = path;
  }

  /** Throws E_CLOSED once the repository is closed. */
  check(): void {
    if (this.ended) throw this.closedError();
  }

  closedError(): CairnError {
    return new CairnError(
      "E_CLOSED",
      `repository ${this.path} is closed (open it again for a new handle)`,
    );
  }

  /** Calls `action` when the lifetime ends; returns the function that stops that. */
  onEnd(action: () => void): () => void {
    this.#onEnd.add(action);
    return () => this.#onEnd.delete(action);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const action of [...this.#onEnd]) action();
    this.#onEnd.clear();
  }
}
