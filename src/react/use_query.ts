/**
 * `useQuery`: a live query's results in a component, through `useSyncExternalStore` over the
 * query's own cache. `LiveQuery.results` is a frozen array that stays the same object until the
 * results change, and subscribers hear once per batch of changes that changes them, so a
 * component renders once per batch that concerns it, never for unrelated writes, and every
 * component reading one query in one render sees the same array (no tearing). While the query's
 * `where` predicate throws for an item (`LiveQuery.error`), that error is thrown into render, to
 * the nearest error boundary, as any error of a component's own code would be.
 */
import { useCallback, useEffect, useReducer, useSyncExternalStore } from "react";
import {
  type AnySchema,
  CairnError,
  type Item,
  LiveQuery,
  type QueryOptions,
  type RepositoryHandle,
  type Schema,
} from "cairndb";

const NO_RESULTS: readonly never[] = Object.freeze([]);
const NOT_LISTENING = () => () => {};

/** The results of a live query the caller made (`repo.query(…)`); empty for `undefined`. */
export function useQuery<R>(query: LiveQuery<R> | undefined): readonly R[];
/**
 * The results of `repo.query(options)`, which pools identical queries: each render finds the same
 * live query. A `where` or `sortBy` function needs an `id` (pooled under it), since two functions
 * cannot be told apart. Empty while `repo` is `undefined` (still opening).
 */
export function useQuery<S extends AnySchema = Schema>(
  repo: RepositoryHandle | undefined,
  options?: QueryOptions<S, Item<S>>,
): readonly Item<S>[];
export function useQuery(
  source: LiveQuery<unknown> | RepositoryHandle | undefined,
  options?: QueryOptions<AnySchema, Item<AnySchema>>,
): readonly unknown[] {
  const pooled = !(source instanceof LiveQuery);
  const query = pooled ? pooledQuery(source, options) : source;
  // A query closed meanwhile (its repository closed, or another holder closed a pooled one):
  // render again, to show nothing, or the pooled query made anew.
  const [, rerender] = useReducer((count: number) => count + 1, 0);
  useEffect(() => query?.onClose(rerender), [query]);
  const subscribe = useCallback((onChange: () => void) => {
    if (!query || query.closed) return NOT_LISTENING();
    // A query made `whileHeld` (this hook's own, or the caller's) closes once nothing holds it;
    // holding any other does nothing.
    const release = query.hold();
    const stopResults = query.subscribe(onChange);
    // A predicate that starts throwing for an item the results did not hold changes no result:
    // render again to throw it. A comparator's error leaves nothing to show: reported as
    // uncaught, as it would be with no listener.
    const stopErrors = query.onError((error) => {
      if (query.error) onChange();
      else {queueMicrotask(() => {
          throw error;
        });}
    });
    return () => {
      stopResults();
      stopErrors();
      release();
    };
  }, [query]);
  const snapshot = useCallback(
    () => query && !query.closed ? query.error ?? query.results : NO_RESULTS,
    [query],
  );
  const shown = useSyncExternalStore(subscribe, snapshot, snapshot);
  if (shown instanceof CairnError) throw shown;
  return shown;
}

function pooledQuery(
  repo: RepositoryHandle | undefined,
  options: QueryOptions<AnySchema, Item<AnySchema>> | undefined,
): LiveQuery<Item<AnySchema>> | undefined {
  // A repository closed meanwhile: its holder renders again with the path opened anew.
  if (repo === undefined || repo.closed) return undefined;
  if (
    options?.id === undefined &&
    (typeof options?.where === "function" || typeof options?.sortBy === "function")
  ) {
    // Without an id each render would make (and leak) a new live query.
    throw new CairnError(
      "E_BAD_ARGUMENT",
      "useQuery with a where or sortBy function needs an id, which pools the query: " +
        'useQuery(repo, { where: (item) => …, id: "open-tasks" })',
    );
  }
  // Unheld (in a server-side render, where no effect runs, or in the second after its last holder
  // unmounted) it still follows writes; a failure then is reported as uncaught only if the app
  // also keeps the query (holds.ts).
  return repo.query(options, { whileHeld: true });
}
