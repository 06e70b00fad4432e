/**
 * `useItem`: one item's values in a component. The snapshot is the item's frozen values object
 * (`item.toObject()`), which Cairn keeps per stored value, so it is the same object until the
 * item changes. Changes are heard through the repository's change events (the key may not exist
 * yet) and passed to React once per batch: a microtask after the first, like live queries.
 */
import { useCallback, useSyncExternalStore } from "react";
import type { AnySchema, RepositoryHandle, Schema, Values } from "cairndb";

/**
 * The values of the item at `key` (read with `schema`, by default its newest registered version),
 * or `undefined` while there is none (missing, deleted, or `repo` still opening). Follows local
 * writes and imported changes. Write through the handle: `repo.get(key, schema)?.set(…)`.
 */
export function useItem<S extends AnySchema = Schema>(
  repo: RepositoryHandle | undefined,
  key: string,
  schema?: S,
): Readonly<Values<S>> | undefined {
  const subscribe = useCallback((onChange: () => void) => {
    if (repo === undefined) return () => {};
    let scheduled = false;
    return repo.on("change", (change) => {
      if (change.key !== key || scheduled) return;
      scheduled = true;
      queueMicrotask(() => {
        scheduled = false;
        onChange();
      });
    });
  }, [repo, key]);
  const values = useCallback(
    () => repo?.get(key, schema)?.toObject() as Readonly<Values<S>> | undefined,
    [repo, key, schema],
  );
  return useSyncExternalStore(subscribe, values, values);
}
