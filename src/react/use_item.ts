/**
 * `useItem`: one item's values in a component. The snapshot is the item's frozen values object
 * (`item.toObject()`), which Cairn keeps per stored value, so it is the same object until the
 * item changes. Changes are heard through the item's change events (the repository's, for a key
 * with no item yet) and passed to React once per batch: a microtask after the first, like live
 * queries.
 */
import { useCallback, useSyncExternalStore } from "react";
import {
  type AnySchema,
  isCairnError,
  type RepositoryHandle,
  type Schema,
  type Values,
} from "cairndb";

/**
 * The values of the item at `key` (read with `schema`, by default its newest registered version),
 * or `undefined` while there is none (missing, deleted, `repo` still opening or closed) or it cannot be
 * read (its schema unknown here, or not upgradable to `schema`). Follows local
 * writes and imported changes. Write through the handle: `repo.get(key, schema)?.set(…)`.
 */
export function useItem<S extends AnySchema = Schema>(
  repo: RepositoryHandle | undefined,
  key: string,
  schema?: S,
): Readonly<Values<S>> | undefined {
  const subscribe = useCallback((onChange: () => void) => {
    if (repo === undefined || repo.closed) return () => {};
    let scheduled = false;
    const changed = () => {
      if (scheduled) return;
      scheduled = true;
      queueMicrotask(() => {
        scheduled = false;
        onChange();
      });
    };
    // An existing item's own listener list costs other items' writes nothing; a key with no item
    // yet can only be watched among every change of the repository.
    const item = readable(() => repo.get(key, schema));
    const stopChanges = item
      ? item.on("change", changed)
      : repo.on("change", (change) => change.key === key && changed());
    // Closed, the repository shows nothing more here; its holder opens the path again.
    const stopClose = repo.on("close", onChange);
    // A schema registered later may make the item readable, or read it through a newer version.
    const stopSchemas = repo.on("schemas", changed);
    return () => {
      stopChanges();
      stopClose();
      stopSchemas();
    };
  }, [repo, key, schema]);
  const values = useCallback(
    () =>
      repo?.closed ? undefined : readable(() => repo?.get(key, schema)?.toObject()) as
        | Readonly<Values<S>>
        | undefined,
    [repo, key, schema],
  );
  return useSyncExternalStore(subscribe, values, values);
}

/**
 * What `read` gives, or undefined for an item this app cannot show: stored under a schema it has
 * not registered (written by a newer version of the app, on another device), or one its version
 * cannot be upgraded to. Queries leave such items out; thrown into render, they would take the
 * whole tree down because of another device's write.
 */
function readable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (isCairnError(err, "E_UNKNOWN_SCHEMA") || isCairnError(err, "E_UPGRADE_FAILED")) {
      return undefined;
    }
    throw err;
  }
}
