/**
 * Cairn — a local-first embedded document database for TypeScript.
 * This is the only module users import; everything exported here is public API (docs/api.md).
 */
export { Cairn, type CairnOptions, type CairnWarning, type SessionInfo } from "./db/database.ts";
export {
  type CreateOptions,
  RepositoryHandle,
  type RepositoryStats,
} from "./db/repository_handle.ts";
export { Item } from "./db/item.ts";
export { LiveQuery } from "./query/live_query.ts";
export type {
  AnyCondition,
  EqualityCondition,
  FieldCondition,
  Filter,
  FilterScalar,
  IndexLookup,
  QueryLifetime,
  QueryOptions,
  QueryPlan,
  RangeCondition,
  SetCondition,
  StringCondition,
  UntypedFilter,
} from "./query/types.ts";
export type { ItemChange } from "./repo/change_listeners.ts";
export type { TextFieldChange } from "./repo/text_fields.ts";
export type { Durability } from "./storage/repository_log.ts";
export type { LogFormatName } from "./storage/settings.ts";
export type {
  ImportReport,
  MissingBlocks,
  MissingHistory,
  VersionVector,
} from "./repo/repository.ts";
export { defineSchema } from "./core/schema.ts";
export type {
  AnySchema,
  CreateInput,
  CreateInputOf,
  FieldDefs,
  FieldName,
  FieldRead,
  FieldsOf,
  FieldValue,
  Schema,
  SchemaDef,
  SchemaUpgradeDef,
  TypedOf,
  UpgradeFn,
  Values,
  ValuesOf,
} from "./core/schema_types.ts";
export type { FieldType, MapScalar } from "./core/field_type.ts";
export { CairnError, type CairnErrorCode, isCairnError } from "./core/errors.ts";
export type { Commit, CommitBody, CommitHeader, FieldRecord, WireValue } from "./core/commit.ts";
export {
  commitFromJson,
  commitFromJsonLine,
  type CommitJson,
  decodeCommit,
} from "./core/commit_codec.ts";
// The functions that take a commit object check it first (db/commit_api.ts).
export { commitId, commitToJson, commitToJsonLine, encodeCommit } from "./db/commit_api.ts";
export { sync, type SyncLink, type SyncOptions, type SyncStatus } from "./sync/client.ts";
