/**
 * Commit ⇄ bytes (msgpack) and commit ⇄ JSON object (one line of a JSONL log).
 *
 * Both forms carry the same fields; decoding either one validates every field, because the
 * input may come from a damaged disk or a hostile peer.
 */
import {
  type Commit,
  type CommitBody,
  type FieldRecord,
  makeCommit,
  ownParentSeq,
} from "./commit.ts";
import {
  assertFieldRecord,
  assertNonEmptyString,
  assertNonNegativeInteger,
  assertPositiveInteger,
  assertString,
  assertStringArray,
  corrupt,
  isPlainObject,
} from "./wire_validation.ts";
import { MsgpackWriter, type PackableValue } from "./msgpack_writer.ts";
import { readMsgpack } from "./msgpack_reader.ts";

/** Layout version written first in every encoded commit, so later layouts can be told apart. */
export const COMMIT_FORMAT_VERSION = 1;

const BODY_VALUE = 0;
const BODY_DELTA = 1;
const BODY_DELETE = 2;

/**
 * Writes the commit as a MessagePack array `[version, session, seq, key, hlc, parents, schema,
 * kind, ...body]`, read back by commitFromTuple: a commit on its own, and the commits of a
 * version 1 block. Written field by field (no tuple is built). The one parent of a local update
 * (see makeOwnParentCommit) is written from its parts, without making its id string.
 */
export function writeCommit(writer: MsgpackWriter, commit: Commit): void {
  const parentSeq = ownParentSeq(commit);
  writer.arrayHeader(commit.kind === "value" ? 9 : commit.kind === "delta" ? 10 : 8);
  writer.number(COMMIT_FORMAT_VERSION);
  writer.repeatedString(commit.session);
  writer.number(commit.seq);
  writer.string(commit.key);
  writer.number(commit.hlc);
  if (parentSeq > 0) {
    writer.arrayHeader(1);
    writer.commitId(commit.session, parentSeq);
  } else writer.stringArray(commit.parents);
  writer.repeatedString(commit.schema);
  writeChange(writer, commit);
}

/**
 * Writes a commit of a version 2 block, whose session the block names once: `[seq, key, hlc,
 * parents, schema, kind, ...body]`, where a parent by the same session is its seq (a number) and
 * any other parent its id string. Read back by blockCommitFromTuple. A one-field update then
 * takes about 35 bytes instead of 80: less to hash, checksum, write and keep in history.
 */
export function writeBlockCommit(writer: MsgpackWriter, commit: Commit): void {
  const parentSeq = ownParentSeq(commit);
  writer.arrayHeader(commit.kind === "value" ? 7 : commit.kind === "delta" ? 8 : 6);
  writer.number(commit.seq);
  writer.string(commit.key);
  writer.number(commit.hlc);
  if (parentSeq > 0) {
    writer.arrayHeader(1);
    writer.number(parentSeq);
  } else {
    const parents = commit.parents;
    writer.arrayHeader(parents.length);
    for (let i = 0; i < parents.length; i++) {
      const seq = seqInSession(parents[i], commit.session);
      if (seq > 0) writer.number(seq);
      else writer.string(parents[i]);
    }
  }
  writer.repeatedString(commit.schema);
  writeChange(writer, commit);
}

function writeChange(writer: MsgpackWriter, commit: Commit): void {
  if (commit.kind === "value") {
    writer.number(BODY_VALUE);
    writer.record(commit.value);
  } else if (commit.kind === "delta") {
    writer.number(BODY_DELTA);
    writer.record(commit.set);
    writer.stringArray(commit.unset);
  } else writer.number(BODY_DELETE);
}

/**
 * The seq of commit id `id` when it is `<session>.<seq>` spelled as commitId spells it (digits,
 * no leading zero, a safe integer), else 0: only such an id is written as a number, so reading
 * the number back gives the same id.
 */
function seqInSession(id: string, session: string): number {
  const start = session.length + 1;
  if (id.length <= start || id.length > start + 16 || !id.startsWith(session)) return 0;
  if (id.charCodeAt(session.length) !== 0x2e || id.charCodeAt(start) === 0x30) return 0;
  let seq = 0;
  for (let i = start; i < id.length; i++) {
    const digit = id.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return 0;
    seq = seq * 10 + digit;
  }
  return Number.isSafeInteger(seq) ? seq : 0;
}

export function commitFromTuple(tuple: unknown): Commit {
  if (!Array.isArray(tuple)) throw corrupt("commit: expected an array");
  const [version, session, seq, key, hlc, parents, schema, kind, a, b] = tuple;
  checkVersion(version);
  return buildCommit(session, seq, key, hlc, parents, schema, changeFrom(tuple, 7, kind, a, b));
}

/** A commit of a version 2 block by `session` (see writeBlockCommit), validated. */
export function blockCommitFromTuple(tuple: unknown, session: string): Commit {
  if (!Array.isArray(tuple)) throw corrupt("commit: expected an array");
  const [seq, key, hlc, parents, schema, kind, a, b] = tuple;
  if (!Array.isArray(parents)) throw corrupt("commit.parents: expected an array");
  const ids = parents.map((parent) => {
    if (typeof parent !== "number") return parent;
    assertPositiveInteger(parent, "commit.parents");
    return `${session}.${parent}`;
  });
  return buildCommit(session, seq, key, hlc, ids, schema, changeFrom(tuple, 5, kind, a, b));
}

/** The change of a commit tuple whose kind is at index `at`, followed by `a` and `b`. */
function changeFrom(
  tuple: unknown[],
  at: number,
  kind: unknown,
  a: unknown,
  b: unknown,
): CommitBody {
  if (kind === BODY_VALUE && tuple.length === at + 2) return valueBody(a);
  if (kind === BODY_DELTA && tuple.length === at + 3) return deltaBody(a, b);
  if (kind === BODY_DELETE && tuple.length === at + 1) return DELETE;
  throw corrupt(`commit: unknown body kind ${String(kind)} or wrong length ${tuple.length}`);
}

/** Reused by every encodeCommit, as blockBody reuses its own: its buffer is kept, not remade. */
const commitWriter = new MsgpackWriter();

export function encodeCommit(commit: Commit): Uint8Array {
  commitWriter.reset();
  writeCommit(commitWriter, commit);
  return commitWriter.take();
}

export function decodeCommit(bytes: Uint8Array): Commit {
  return commitFromTuple(unpackBytes(bytes, "commit"));
}

/**
 * Decodes MessagePack bytes — the one value spanning `bytes[start, end)` when a range is given —
 * turning any decoder failure into E_CORRUPT_ENCODING.
 */
export function unpackBytes(bytes: Uint8Array, what: string, start = 0, end?: number): unknown {
  try {
    return readMsgpack(bytes, start, end ?? bytes.length);
  } catch (err) {
    throw corrupt(`${what}: not valid MessagePack (${(err as Error).message})`, err);
  }
}

/** Reused by every packValue call. */
const valueWriter = new MsgpackWriter();

export function packValue(value: PackableValue): Uint8Array {
  valueWriter.reset();
  valueWriter.value(value);
  return valueWriter.take();
}

/** The JSON form of a commit, as written to a JSONL log. */
export interface CommitJson {
  v: number;
  session: string;
  seq: number;
  key: string;
  hlc: number;
  parents: string[];
  schema: string;
  value?: FieldRecord;
  set?: FieldRecord;
  unset?: string[];
  deleted?: true;
}

export function commitToJson(commit: Commit): CommitJson {
  const json: CommitJson = {
    v: COMMIT_FORMAT_VERSION,
    session: commit.session,
    seq: commit.seq,
    key: commit.key,
    hlc: commit.hlc,
    parents: [...commit.parents],
    schema: commit.schema,
  };
  if (commit.kind === "value") json.value = commit.value;
  else if (commit.kind === "delta") {
    json.set = commit.set;
    json.unset = [...commit.unset];
  } else json.deleted = true;
  return json;
}

export function commitFromJson(json: unknown): Commit {
  if (!isPlainObject(json)) throw corrupt("commit: expected a JSON object");
  checkVersion(json.v);
  const hasValue = json.value !== undefined;
  const hasDelta = json.set !== undefined || json.unset !== undefined;
  const isDelete = json.deleted === true;
  if (Number(hasValue) + Number(hasDelta) + Number(isDelete) !== 1) {
    throw corrupt("commit: needs exactly one of value, set/unset or deleted");
  }
  const body: CommitBody = hasValue
    ? valueBody(json.value)
    : hasDelta
    ? deltaBody(json.set ?? {}, json.unset ?? [])
    : DELETE;
  return buildCommit(json.session, json.seq, json.key, json.hlc, json.parents, json.schema, body);
}

export function commitToJsonLine(commit: Commit): string {
  return JSON.stringify(commitToJson(commit));
}

export function commitFromJsonLine(line: string): Commit {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw corrupt(`commit: not valid JSON (${(err as Error).message})`, err);
  }
  return commitFromJson(parsed);
}

function checkVersion(version: unknown): void {
  if (version !== COMMIT_FORMAT_VERSION) {
    throw corrupt(`commit: unsupported format version ${String(version)}`);
  }
}

function valueBody(value: unknown): CommitBody {
  assertFieldRecord(value, "commit.value");
  return { kind: "value", value };
}

function deltaBody(set: unknown, unset: unknown): CommitBody {
  assertFieldRecord(set, "commit.set");
  assertStringArray(unset, "commit.unset");
  return { kind: "delta", set, unset };
}

const DELETE: CommitBody = Object.freeze({ kind: "delete" });

function buildCommit(
  session: unknown,
  seq: unknown,
  key: unknown,
  hlc: unknown,
  parents: unknown,
  schema: unknown,
  body: CommitBody,
): Commit {
  assertNonEmptyString(session, "commit.session");
  if (session.includes(".")) throw corrupt("commit.session: must not contain a dot");
  assertPositiveInteger(seq, "commit.seq");
  assertString(key, "commit.key");
  assertNonNegativeInteger(hlc, "commit.hlc");
  assertStringArray(parents, "commit.parents");
  assertNonEmptyString(schema, "commit.schema");
  const change = body.kind === "value" ? body.value : body.kind === "delta" ? body.set : undefined;
  const unset = body.kind === "delta" ? body.unset : undefined;
  return makeCommit(session, seq, key, hlc, parents, schema, body.kind, change, unset);
}
