/**
 * The commit codec as the package exports it (mod.ts). Decoding already treats its input as
 * hostile; the functions that take a commit object trust it inside the engine, where every commit
 * is made by the engine. A caller's object is checked first, by the same validator decoding uses,
 * so a malformed one is E_BAD_ARGUMENT instead of a TypeError, or bytes no decoder accepts.
 */
import type { Commit } from "../core/commit.ts";
import { commitId as idOf } from "../core/commit.ts";
import {
  COMMIT_FORMAT_VERSION,
  commitFromJson,
  type CommitJson,
  commitToJson as toJson,
  commitToJsonLine as toJsonLine,
  encodeCommit as encode,
} from "../core/commit_codec.ts";
import { CairnError, isCairnError } from "../core/errors.ts";
import { badArgument, typeOf } from "./arguments.ts";

/** MessagePack bytes of a commit, as in the binary log. */
export function encodeCommit(commit: Commit): Uint8Array {
  return encode(checkedCommit(commit));
}

/** The JSON form of a commit, as in the JSONL log. */
export function commitToJson(commit: Commit): CommitJson {
  return toJson(checkedCommit(commit));
}

/** One JSON line, as in the JSONL log. */
export function commitToJsonLine(commit: Commit): string {
  return toJsonLine(checkedCommit(commit));
}

/** `"<session>.<seq>"`. */
export function commitId(commit: Pick<Commit, "session" | "seq">): string {
  const { session, seq } = (typeof commit === "object" && commit !== null ? commit : {}) as {
    session?: unknown;
    seq?: unknown;
  };
  if (typeof session !== "string" || session.length === 0 || session.includes(".")) {
    throw badArgument("commitId takes a commit: its session is a non-empty string without a dot");
  }
  if (!Number.isSafeInteger(seq) || (seq as number) < 1) {
    throw badArgument("commitId takes a commit: its seq is a positive integer");
  }
  return idOf({ session, seq: seq as number });
}

/** The commit, rebuilt through the decoder's validator; E_BAD_ARGUMENT saying what is wrong. */
function checkedCommit(commit: unknown): Commit {
  if (typeof commit !== "object" || commit === null) {
    throw badArgument(`expected a commit, got ${typeOf(commit)}`);
  }
  const given = commit as Record<string, unknown>;
  const json: Record<string, unknown> = {
    v: COMMIT_FORMAT_VERSION,
    session: given.session,
    seq: given.seq,
    key: given.key,
    hlc: given.hlc,
    parents: given.parents,
    schema: given.schema,
  };
  if (given.kind === "value") json.value = given.value;
  else if (given.kind === "delta") {
    json.set = given.set;
    json.unset = given.unset;
  } else if (given.kind === "delete") json.deleted = true;
  else throw badArgument(`a commit's kind is "value", "delta" or "delete"`);
  try {
    return commitFromJson(json);
  } catch (err) {
    if (!isCairnError(err, "E_CORRUPT_ENCODING")) throw err;
    const message = err.message.slice(err.code.length + 2);
    throw new CairnError("E_BAD_ARGUMENT", `not a valid commit: ${message}`, { cause: err });
  }
}
