/**
 * Cairn — a local-first embedded document database for TypeScript.
 * This is the only module users import; everything exported here is public API (docs/api.md).
 */
export { CairnError, type CairnErrorCode, isCairnError } from "./core/errors.ts";
export {
  type Commit,
  type CommitBody,
  commitId,
  type FieldRecord,
  type WireValue,
} from "./core/commit.ts";
export {
  commitFromJson,
  commitFromJsonLine,
  type CommitJson,
  commitToJson,
  commitToJsonLine,
  decodeCommit,
  encodeCommit,
} from "./core/commit_codec.ts";
export { type Ed25519, ed25519, nobleEd25519, type SigningKey } from "./runtime/ed25519.ts";
