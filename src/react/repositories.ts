/**
 * `useRepository(path)`: the repository at `path` of the provider's database, opened once and
 * shared by every component that asks for it. Opening is asynchronous, so the hook returns
 * `undefined` until the repository is open (every hook that takes a repository accepts
 * `undefined` and shows nothing meanwhile); a failed open is thrown to the nearest error boundary,
 * and tried again by the first render after that (once the boundary resets). A repository closed
 * since it was opened is opened again: its close renders every component that holds it. Once the
 * database closes, its repositories are `undefined`.
 */
import { useSyncExternalStore } from "react";
import { type Cairn, CairnError, isCairnError, RepositoryHandle } from "cairndb";
import { useDatabase } from "./provider.ts";

/** How long after an open refused while the database was closing it is asked for again. */
const CLOSING_RETRY_MS = 250;

/** One path's opening: pending, open (until its repository closes) or failed. */
class Opening {
  handle: RepositoryHandle | undefined;
  failure: { error: unknown } | undefined;
  /** Counts the changes (opened, failed, closed): what the hook compares between renders. */
  #version = 0;
  #dropping = false;
  readonly #listeners = new Set<() => void>();

  static start(database: Cairn, path: string): Opening {
    const opening = new Opening();
    database.open(path).then(
      (handle) => opening.#opened(handle),
      (error) => {
        // The database is closing (its repositories' closes rendered their holders, which
        // asked for the path again): nothing to show, and nothing gone wrong in the app. Thrown
        // to a boundary before, the usual "close, then give the provider another database"
        // ended on an error screen. A close can fail and leave the database open: asked again
        // a moment later while anything shows the path, until the database has closed.
        if (isCairnError(error, "E_CLOSED")) opening.#askAgainUnless(database);
        else opening.failure = { error };
        opening.#changed();
      },
    );
    return opening;
  }

  static done(handle: RepositoryHandle): Opening {
    const opening = new Opening();
    opening.#opened(handle);
    return opening;
  }

  subscribe = (onChange: () => void): () => void => {
    this.#listeners.add(onChange);
    return () => this.#listeners.delete(onChange);
  };

  snapshot = (): number => this.#version;

  /**
   * Calls `drop` once, a task after the failure was first thrown: every render until then throws
   * it too (React renders a failed component again before it gives up on it), and the first one
   * after opens the path again.
   */
  dropAfterThrown(drop: () => void): void {
    if (this.#dropping) return;
    this.#dropping = true;
    setTimeout(drop, 0);
  }

  /** Set by #askAgainUnless: this opening is over, and the next render starts another. */
  stale = false;

  #askAgainUnless(database: Cairn): void {
    setTimeout(() => {
      if (database.closed || this.#listeners.size === 0) return;
      this.stale = true;
      this.#changed();
    }, CLOSING_RETRY_MS);
  }

  #opened(handle: RepositoryHandle): void {
    this.handle = handle;
    if (!handle.closed) handle.on("close", () => this.#changed());
    this.#changed();
  }

  #changed(): void {
    this.#version++;
    for (const onChange of [...this.#listeners]) onChange();
  }
}

/** Per database, per path. A WeakMap: a database no longer referenced takes its entries along. */
const openings = new WeakMap<Cairn, Map<string, Opening>>();

function openingsOf(database: Cairn): Map<string, Opening> {
  let byPath = openings.get(database);
  if (!byPath) openings.set(database, byPath = new Map());
  return byPath;
}

/**
 * Makes an already open repository available at once (CairnProvider's `repositories`). A closed
 * one is left out: the provider's props may still name it after the path was opened again. One
 * of another database is refused: components would read and write that database's repository
 * while everything else they do goes to the provider's.
 */
export function rememberRepository(database: Cairn, repo: RepositoryHandle): void {
  if (!(repo instanceof RepositoryHandle) || repo.database !== database) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      "CairnProvider's repositories must be opened from its database (await database.open(path)): " +
        (repo instanceof RepositoryHandle
          ? `${repo.path} is another database's`
          : "one is not a repository"),
    );
  }
  if (repo.closed) return;
  const byPath = openingsOf(database);
  if (byPath.get(repo.path)?.handle !== repo) byPath.set(repo.path, Opening.done(repo));
}

export function useRepository(path: string): RepositoryHandle | undefined {
  const database = useDatabase();
  const byPath = openingsOf(database);
  let opening = byPath.get(path);
  // A repository closed since (the app may have opened the path again) is opened anew.
  if (!opening || opening.handle?.closed || opening.stale) {
    byPath.set(path, opening = Opening.start(database, path));
  }
  const current = opening;
  useSyncExternalStore(current.subscribe, current.snapshot, current.snapshot);
  if (current.failure) {
    current.dropAfterThrown(() => {
      if (byPath.get(path) === current) byPath.delete(path);
    });
    throw current.failure.error;
  }
  return current.handle;
}
