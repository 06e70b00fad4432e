/**
 * Checkpoints (docs/storage.md, "Checkpoints"): a snapshot of a repository's heads, so opening it reads the
 * snapshot and replays only the log written after it. The payload names the log prefix it
 * covers by length and CRC-32C, so a checkpoint that does not match its log (log replaced,
 * truncated, damaged) is detected and rebuilt from the log instead. The header carries a seal
 * (checkpoint_seal.ts): the payload's SHA-256, signed by the database's session key for this
 * repository, so a checkpoint edited on disk is not served in place of the signed log. A
 * checkpoint is a derived file: any defect means "rebuild", never a failure to open.
 *
 * The layout is columnar so that opening decodes no value: the numbers of all items and leaves
 * are columns read into typed arrays, and each value stays MessagePack bytes, checked on open
 * and decoded on first access (checkpoint_items.ts). All integers little-endian.
 *
 *   0   6  "CAIRNK"
 *   6   2  format version, u16 (3)
 *   8   32 SHA-256 of everything after these 104 bytes
 *   40  64 Ed25519 signature of that digest by the session, for this repository's path
 *   104 4  meta length, u32
 *   108 m  meta, MessagePack: [logLength, logCrc, commitSeq, tips, sessions, schemas,
 *          items, leaves, parents, unresolved?] (tips: [session, seq, hash, lastCommitSeq]
 *          rows; unresolved: the increasing indexes of the items that wait for a schema, or
 *          true when any item may (written with no schema registered); left out when none
 *          does, so such a file reads as it did before this entry was)
 *   columns (columns.ts: a width byte, then each entry in that width):
 *          per item: schema (index into schemas), deltas + 1 (0: unknown), leaf count;
 *          per leaf: session (index), seq, hlc, schema (index), body kind, parent count
 *   texts (columns.ts: lengths column, u32 UTF-8 byte count, UTF-8): item keys; parent ids
 *   values: per item one MessagePack value: its record, or nil when deleted
 *   bodies: per leaf by kind: SAME and DELETE none; VALUE a record; DELTA a record (set) then
 *          an array of strings (unset)
 *
 * Leaves are an item's leaves in order. The common leaf — the single leaf of an item whose full
 * value is the item's value — is kind SAME and stores no value of its own. Older versions are
 * not read: version 1 (one MessagePack tree) nor version 2 (this layout behind a CRC-32C that
 * anyone can recompute); such a checkpoint is rebuilt from the log like a damaged one.
 */
import type { ChainTip } from "../core/block.ts";
import { packValue, unpackBytes } from "../core/commit_codec.ts";
import type { RepositorySnapshot, RestoredSnapshot } from "../core/snapshot.ts";
import { assertStringArray, corrupt } from "../core/wire_validation.ts";
import { nextTurn } from "../runtime/scheduling.ts";
import { ByteReader, ByteWriter } from "./columns.ts";
import {
  type CheckpointColumns,
  CheckpointTable,
  LEAF_DELETE,
  LEAF_DELTA,
  LEAF_SAME,
  LEAF_VALUE,
} from "./checkpoint_items.ts";
import { type CheckpointOwner, checkSeal, SEAL_LENGTH, writeSeal } from "./checkpoint_seal.ts";
import { CheckpointWriter } from "./checkpoint_writer.ts";
import { MsgpackCheck } from "./msgpack_check.ts";
import { StoredTexts, textsToWire } from "./checkpoint_texts.ts";

const MAGIC = new TextEncoder().encode("CAIRNK");
const VERSION = 3;
const SEAL_AT = MAGIC.length + 2;
const HEADER_LENGTH = SEAL_AT + SEAL_LENGTH;
const NIL = 0xc0;

/** A checkpoint as read: the snapshot to restore and the log prefix it reflects. */
export interface Checkpoint extends RestoredSnapshot {
  readonly logLength: number;
  readonly logCrc: number;
}

/** The log prefix a checkpoint reflects: its length and its CRC-32C. */
export interface LogPrefix {
  readonly length: number;
  readonly crc: number;
}

/**
 * The checkpoint file of `snapshot`, which reflects the log's first `log.length` bytes, sealed
 * by `owner`.
 */
export async function encodeCheckpoint(
  snapshot: RepositorySnapshot,
  log: LogPrefix,
  owner: CheckpointOwner,
): Promise<Uint8Array> {
  const steps = checkpointSteps(snapshot, log);
  for (;;) {
    const step = steps.next();
    if (step.done) return await sealed(step.value, owner);
  }
}

/**
 * The same file as encodeCheckpoint, built in slices of about `sliceMs` with `pause()` between
 * them, so that a large repository's checkpoint does not hold up a page: 100k items are 100–130
 * ms of work. By default a pause queues the rest behind the page's other tasks (nextTurn): a
 * checkpoint is background work. The snapshot's item states are never changed once made, so
 * writes made between slices do not reach the file. (On a page, the seal's SHA-256 is
 * WebCrypto's, computed off the page's thread.)
 */
export async function encodeCheckpointInSlices(
  snapshot: RepositorySnapshot,
  log: LogPrefix,
  owner: CheckpointOwner,
  { sliceMs, pause = nextTurn }: { sliceMs: number; pause?: () => Promise<void> },
): Promise<Uint8Array> {
  const steps = checkpointSteps(snapshot, log);
  let deadline = performance.now() + sliceMs;
  for (;;) {
    const step = steps.next();
    if (step.done) return await sealed(step.value, owner);
    if (performance.now() >= deadline) {
      await pause();
      deadline = performance.now() + sliceMs;
    }
  }
}

/** Items added to the checkpoint between two steps. */
const ITEMS_PER_STEP = 256;

/**
 * Builds a checkpoint file, yielding after each step (a few hundred items, a column, a text),
 * where a caller may pause; returns the file, its seal still to be written.
 */
function* checkpointSteps(
  snapshot: RepositorySnapshot,
  log: LogPrefix,
): Generator<void, Uint8Array, void> {
  const writer = new CheckpointWriter();
  const waiting = snapshot.unresolved;
  const waitingIndexes: number[] = [];
  let added = 0;
  for (const [key, item] of snapshot.items) {
    if (waiting !== "all" && waiting?.has(key)) waitingIndexes.push(added);
    writer.add(key, item);
    if (++added % ITEMS_PER_STEP === 0) yield;
  }
  const { items, leaves, parents } = writer.counts;
  const tips = [...snapshot.tips].map((
    [session, tip],
  ) => [session, tip.seq, tip.hash, tip.lastCommitSeq]);
  const meta = packValue([
    log.length,
    log.crc,
    snapshot.commitSeq,
    tips,
    writer.sessions.entries,
    writer.schemas.entries,
    items,
    leaves,
    parents,
    ...(waiting === "all" ? [true] : waitingIndexes.length > 0 ? [waitingIndexes] : []),
  ]);
  const out = new ByteWriter();
  out.u32(meta.length);
  out.bytes(meta);
  yield* writer.writeTo(out);
  if (snapshot.texts?.length) out.bytes(packValue(textsToWire(snapshot.texts)));
  const file = out.finish(HEADER_LENGTH);
  yield;
  file.set(MAGIC);
  new DataView(file.buffer).setUint16(MAGIC.length, VERSION, true);
  return file;
}

/** `file` with its seal written. */
async function sealed(file: Uint8Array, owner: CheckpointOwner): Promise<Uint8Array> {
  await writeSeal(file, SEAL_AT, HEADER_LENGTH, owner);
  return file;
}

/**
 * Reads a checkpoint file of `owner`'s repository; throws E_BAD_SIGNATURE for one not sealed by
 * `owner` (another database's, another repository's, or edited), E_CORRUPT_ENCODING for anything
 * else that is not a whole, valid one. A sealed file is still read as hostile (it may have been
 * written wrong, or by whoever holds the key): every column entry and the bytes of every value
 * are checked here, so that nothing decoded later can fail.
 */
/**
 * Checkpoints this size or larger are neither written nor read: positions in one are kept in
 * Uint32Arrays, which would wrap past 4 GiB and read values from the wrong places. (The log is
 * replayed instead; a checkpoint is derived data.)
 */
export const MAX_CHECKPOINT_BYTES = 2 ** 32;

/**
 * Checks a checkpoint file's size and its first bytes (the whole file, or at least its header's
 * 104), so that a file that cannot be one is refused before the rest is read into memory.
 */
export function checkCheckpointStart(head: Uint8Array, size: number): void {
  if (size >= MAX_CHECKPOINT_BYTES) {
    throw corrupt("checkpoint: 4 GiB or more, past what its positions can address");
  }
  checkHeader(head);
}

export async function decodeCheckpoint(
  stored: Uint8Array,
  owner: CheckpointOwner,
): Promise<Checkpoint> {
  // A plain Uint8Array over the same bytes: a Node Buffer (a subclass) reads slower.
  const file = new Uint8Array(stored.buffer, stored.byteOffset, stored.byteLength);
  checkCheckpointStart(file, file.byteLength);
  await checkSeal(file, SEAL_AT, HEADER_LENGTH, owner);
  const reader = new ByteReader(file, HEADER_LENGTH, "checkpoint");
  const meta = decodeMeta(unpackBytes(reader.take(reader.u32()), "checkpoint"));
  const { columns, live, texts } = readColumns(reader, meta);
  if (meta.unresolved !== true && meta.unresolved.some((index) => index >= meta.items)) {
    throw bad("unresolved items");
  }
  const table = new CheckpointTable(columns, live);
  return {
    logLength: meta.logLength,
    logCrc: meta.logCrc,
    commitSeq: meta.commitSeq,
    tips: meta.tips,
    items: table,
    leaf: (session, seq) => table.leaf(session, seq),
    texts,
    unresolved: meta.unresolved === true
      ? "all"
      : meta.unresolved.map((index) => table.keyAt(index)),
  };
}

/** The magic and the version: only a version 3 file has the seal checkSeal reads. */
function checkHeader(file: Uint8Array): void {
  if (file.length < SEAL_AT || MAGIC.some((byte, i) => file[i] !== byte)) {
    throw corrupt("checkpoint: not a checkpoint file");
  }
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const version = view.getUint16(MAGIC.length, true);
  if (version !== VERSION) throw corrupt(`checkpoint: version ${version} is not ${VERSION}`);
  if (file.length < HEADER_LENGTH) throw bad("length");
}

/** Everything after the meta, checked; and how many items are live. */
function readColumns(
  reader: ByteReader,
  meta: Meta,
): { columns: CheckpointColumns; live: number; texts: StoredTexts } {
  const { items, leaves, parents, sessions, schemas } = meta;
  const file = reader.bytes;
  // In a valid file each item, leaf and parent takes at least one byte below (its value, its
  // seq, its id): this bounds what is allocated before those bytes are checked.
  if (items + leaves + parents > file.length - reader.pos) throw bad("counts");
  const itemSchema = reader.column(items);
  const itemDeltas = reader.numbers(items);
  const leafStarts = starts(reader.column(items), leaves, "leaf counts", 1);
  const leafSession = reader.column(leaves);
  const leafSeq = reader.numbers(leaves);
  const leafHlc = reader.numbers(leaves);
  const leafSchema = reader.column(leaves);
  const leafKind = reader.column(leaves);
  const parentStarts = starts(reader.column(leaves), parents, "parent counts", 0);
  const keys = reader.text(items);
  const parentIds = reader.text(parents);
  const check = new MsgpackCheck(file, "checkpoint");
  const values = checkValues(check, file, reader.pos, items);
  const bodies = checkBodies(check, file, values.end, leafKind);
  const texts = readTexts(check, file, bodies.end);
  for (let i = 0; i < items; i++) if (itemSchema[i] >= schemas.length) throw bad("item schema");
  for (let leaf = 0; leaf < leaves; leaf++) {
    if (leafSession[leaf] >= sessions.length || leafSchema[leaf] >= schemas.length) {
      throw bad("leaf table index");
    }
    if (leafSeq[leaf] === 0) throw bad("leaf seq");
  }
  checkSameLeaves(file, values.starts, leafStarts, leafKind);
  const columns: CheckpointColumns = {
    bytes: file,
    sessions,
    schemas,
    keys,
    itemSchema,
    itemDeltas,
    valueStarts: values.starts,
    leafStarts,
    leafSession,
    leafSeq,
    leafHlc,
    leafSchema,
    leafKind,
    bodyStarts: bodies.starts,
    parentStarts,
    parentIds,
  };
  return { columns, live: values.live, texts };
}

/** The text documents after the bodies: one MessagePack value to the end, or none at all. */
function readTexts(check: MsgpackCheck, file: Uint8Array, pos: number): StoredTexts {
  if (pos === file.length) return new StoredTexts([]);
  if (check.value(pos, file.length, 0) !== file.length) throw bad("length");
  return new StoredTexts(unpackBytes(file, "checkpoint texts", pos, file.length));
}

/** Each item's value: a record, or nil when deleted. Where each starts; how many are live. */
function checkValues(check: MsgpackCheck, file: Uint8Array, pos: number, count: number) {
  const starts = new Uint32Array(count + 1);
  let live = 0;
  for (let i = 0; i < count; i++) {
    starts[i] = pos;
    if (file[pos] !== NIL) live++;
    pos = check.recordOrNil(pos, file.length);
  }
  starts[count] = pos;
  return { starts, end: pos, live };
}

/** Each leaf's body, by kind (kinds checked here too). Where each starts. */
function checkBodies(check: MsgpackCheck, file: Uint8Array, pos: number, kinds: Uint32Array) {
  const starts = new Uint32Array(kinds.length + 1);
  for (let leaf = 0; leaf < kinds.length; leaf++) {
    starts[leaf] = pos;
    const kind = kinds[leaf];
    if (kind === LEAF_VALUE) pos = check.record(pos, file.length);
    else if (kind === LEAF_DELTA) {
      pos = check.stringArray(check.record(pos, file.length), file.length);
    } else if (kind !== LEAF_SAME && kind !== LEAF_DELETE) throw bad("leaf kind");
  }
  starts[kinds.length] = pos;
  return { starts, end: pos };
}

/** A SAME leaf stands for its item's value, so its item must have one. */
function checkSameLeaves(
  file: Uint8Array,
  valueStarts: Uint32Array,
  leafStarts: Uint32Array,
  kinds: Uint32Array,
): void {
  for (let i = 0; i < valueStarts.length - 1; i++) {
    if (file[valueStarts[i]] !== NIL) continue;
    for (let leaf = leafStarts[i]; leaf < leafStarts[i + 1]; leaf++) {
      if (kinds[leaf] === LEAF_SAME) throw bad("leaf kind");
    }
  }
}

/** Where each entry's run starts, from the run lengths; they must add up to `total`. */
function starts(lengths: Uint32Array, total: number, what: string, least: number): Uint32Array {
  const result = new Uint32Array(lengths.length + 1);
  let sum = 0;
  for (let i = 0; i < lengths.length; i++) {
    if (lengths[i] < least) throw bad(what);
    result[i + 1] = sum += lengths[i];
  }
  if (sum !== total) throw bad(what);
  return result;
}

interface Meta {
  readonly logLength: number;
  readonly logCrc: number;
  readonly commitSeq: number;
  readonly tips: Map<string, ChainTip>;
  readonly sessions: string[];
  readonly schemas: string[];
  readonly items: number;
  readonly leaves: number;
  readonly parents: number;
  readonly unresolved: readonly number[] | true;
}

function decodeMeta(decoded: unknown): Meta {
  if (!Array.isArray(decoded) || (decoded.length !== 9 && decoded.length !== 10)) {
    throw bad("layout");
  }
  const [logLength, logCrc, commitSeq, tipRows, sessions, schemas, items, leaves, parents] =
    decoded;
  for (const count of [logLength, logCrc, commitSeq, items, leaves, parents]) {
    if (!isCount(count)) throw bad("header fields");
  }
  const unresolved = decoded.length === 10 ? decoded[9] : [];
  if (decoded.length === 10 && unresolved !== true && !isIncreasingIndexes(unresolved)) {
    throw bad("unresolved items");
  }
  if (!Array.isArray(tipRows)) throw bad("layout");
  assertStringArray(sessions, "checkpoint sessions");
  assertStringArray(schemas, "checkpoint schemas");
  // Entries are unique: a leaf is looked up by its session's name.
  if (new Set(sessions).size !== sessions.length) throw bad("sessions");
  return {
    logLength,
    logCrc,
    commitSeq,
    tips: decodeTips(tipRows),
    sessions,
    schemas,
    items,
    leaves,
    parents,
    unresolved,
  };
}

/** A non-empty list of item indexes, each greater than the one before. */
function isIncreasingIndexes(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 &&
    value.every((index, i) => isCount(index) && (i === 0 || index > value[i - 1]));
}

function decodeTips(rows: unknown[]): Map<string, ChainTip> {
  const tips = new Map<string, ChainTip>();
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 4) throw bad("chain tip");
    const [session, seq, hash, lastCommitSeq] = row;
    if (
      typeof session !== "string" || typeof hash !== "string" || !isCount(seq) ||
      !isCount(lastCommitSeq)
    ) {
      throw bad("chain tip");
    }
    tips.set(session, { seq, hash, lastCommitSeq });
  }
  return tips;
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function bad(what: string) {
  return corrupt(`checkpoint: bad ${what}`);
}
