/**
 * `useRepository(path)`: the repository at `path` of the provider's database, opened once and
 * shared by every component that asks for it. Opening is asynchronous, so the hook returns
 * `undefined` until the repository is open (every hook that takes a repository accepts
 * `undefined` and shows nothing meanwhile); a failed open is thrown to the nearest error boundary,
 * and tried again at the next render. A repository closed since it was opened is opened again.
 */
import { useSyncExternalStore } from "react";
import type { Cairn, RepositoryHandle } from "cairndb";
import { useDatabase } from "./provider.ts";

/** One path's opening: pending, open or failed, and who waits for it to settle. */
class Opening {
  handle: RepositoryHandle | undefined;
  failure: { error: unknown } | undefined;
  readonly #waiting = new Set<() => void>();

  static start(database: Cairn, path: string): Opening {
    const opening = new Opening();
    database.open(path).then(
      (handle) => opening.#settle(() => (opening.handle = handle)),
      (error) => opening.#settle(() => (opening.failure = { error })),
    );
    return opening;
  }

  static done(handle: RepositoryHandle): Opening {
    const opening = new Opening();
    opening.handle = handle;
    return opening;
  }

  subscribe = (onChange: () => void): () => void => {
    this.#waiting.add(onChange);
    return () => this.#waiting.delete(onChange);
  };

  #settle(record: () => void): void {
    record();
    for (const onChange of this.#waiting) onChange();
    this.#waiting.clear();
  }
}

/** Per database, per path. A WeakMap: a database no longer referenced takes its entries along. */
const openings = new WeakMap<Cairn, Map<string, Opening>>();

function openingsOf(database: Cairn): Map<string, Opening> {
  let byPath = openings.get(database);
  if (!byPath) openings.set(database, byPath = new Map());
  return byPath;
}

/** Makes an already open repository available at once (CairnProvider's `repositories`). */
export function rememberRepository(database: Cairn, repo: RepositoryHandle): void {
  const byPath = openingsOf(database);
  if (byPath.get(repo.path)?.handle !== repo) byPath.set(repo.path, Opening.done(repo));
}

export function useRepository(path: string): RepositoryHandle | undefined {
  const database = useDatabase();
  const byPath = openingsOf(database);
  let opening = byPath.get(path);
  // A repository closed since (the app may have opened the path again) is opened anew.
  if (!opening || opening.handle?.closed) byPath.set(path, opening = Opening.start(database, path));
  const current = opening;
  const handle = useSyncExternalStore(
    current.subscribe,
    () => current.handle,
    () => current.handle,
  );
  if (current.failure) {
    // Thrown once to the error boundary; the next render (after it resets) tries again.
    if (byPath.get(path) === current) byPath.delete(path);
    throw current.failure.error;
  }
  return handle;
}
