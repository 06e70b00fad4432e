/**
 * `cairndb/react`: React bindings (docs/react.md). React (18 or later) is a peer dependency. The
 * bindings reach Cairn only through its public entry "cairndb", so an app's one copy of Cairn is
 * the one they use (src/react/ imports no other layer; test/server/layers.test.ts).
 */
export { CairnProvider, type CairnProviderProps, useDatabase } from "./react/provider.ts";
export { useRepository } from "./react/repositories.ts";
export { useQuery } from "./react/use_query.ts";
export { useItem } from "./react/use_item.ts";
export { useSyncStatus } from "./react/use_sync_status.ts";
