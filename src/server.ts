/**
 * `cairndb/server`: the sync server (docs/sync.md, "Server"). Runs on Deno and Node; not part
 * of the browser package.
 */
export { createSyncServer } from "./sync/server/create_server.ts";
export type { SyncServer, SyncServerOptions } from "./sync/server/create_server.ts";
export { postgresStore } from "./sync/server/postgres_store.ts";
export type { PostgresStoreOptions } from "./sync/server/postgres_store.ts";
export type { SyncStoreSource } from "./sync/server/store.ts";
export type { ServerLimits } from "./sync/server/server_core.ts";
export type {
  AccessRules,
  Authorize,
  AuthorizeRequest,
  RepositoryRules,
  Right,
} from "./sync/server/access.ts";
