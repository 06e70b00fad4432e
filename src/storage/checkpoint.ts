/**
 * Checkpoints (DESIGN.md §3.6): a snapshot of a repository's heads, so opening it reads the
 * snapshot and replays only the log written after it.
 *
 * File: `CAIRNK` | u16 version | u32 CRC-32C of the payload | payload (MessagePack). The payload
 * names the log prefix it covers by length and CRC-32C, so a checkpoint that does not match its
 * log (log replaced, truncated, damaged) is detected and rebuilt from the log instead.
 * A checkpoint is a derived file: any defect means "rebuild", never a failure to open.
 */
import type { ChainTip } from "../core/block.ts";
import type { Commit, CommitBody, FieldRecord } from "../core/commit.ts";
import type { RepositorySnapshot, SnapshotItem } from "../core/snapshot.ts";
import { packValue, unpackBytes } from "../core/commit_codec.ts";
import { assertFieldRecord, assertStringArray, corrupt } from "../core/wire_validation.ts";
import { crc32c } from "./crc32c.ts";

const MAGIC = new TextEncoder().encode("CAIRNK");
const VERSION = 1;
const HEADER_LENGTH = MAGIC.length + 2 + 4;

/** A repository snapshot and the log prefix it reflects (its length and CRC-32C). */
export interface Checkpoint extends RepositorySnapshot {
  readonly logLength: number;
  readonly logCrc: number;
}

// Payload: [logLength, logCrc, commitSeq, tips, sessions, schemas, items]. Session ids and schema
// ids are stored once and referred to by index. An item row is [key, schema, deltas, value,
// leaves]; a leaf row is [session, seq, hlc, schema, parents, kind, ...body], where a full-value
// leaf whose value is the item's own stores none (the common case: it is not stored twice).
const BODY_VALUE = 0;
const BODY_DELTA = 1;
const BODY_DELETE = 2;
const NO_VALUE = null;

class Table {
  readonly #index = new Map<string, number>();
  readonly entries: string[] = [];

  indexOf(entry: string): number {
    let index = this.#index.get(entry);
    if (index === undefined) {
      index = this.entries.length;
      this.entries.push(entry);
      this.#index.set(entry, index);
    }
    return index;
  }
}

export function encodeCheckpoint(checkpoint: Checkpoint): Uint8Array {
  const sessions = new Table();
  const schemas = new Table();
  const tips = [...checkpoint.tips].map((
    [session, t],
  ) => [session, t.seq, t.hash, t.lastCommitSeq]);
  const items = checkpoint.items.map((item) => [
    item.key,
    schemas.indexOf(item.schema),
    Number.isFinite(item.deltas) ? item.deltas : -1,
    item.wire ?? NO_VALUE,
    item.leaves.map((leaf) => leafRow(leaf, item, sessions, schemas)),
  ]);
  const payload = packValue([
    checkpoint.logLength,
    checkpoint.logCrc,
    checkpoint.commitSeq,
    tips,
    sessions.entries,
    schemas.entries,
    items,
  ]);
  const file = new Uint8Array(HEADER_LENGTH + payload.length);
  const view = new DataView(file.buffer);
  file.set(MAGIC);
  view.setUint16(MAGIC.length, VERSION, true);
  view.setUint32(MAGIC.length + 2, crc32c(payload), true);
  file.set(payload, HEADER_LENGTH);
  return file;
}

function leafRow(leaf: Commit, item: SnapshotItem, sessions: Table, schemas: Table): unknown[] {
  const row: unknown[] = [
    sessions.indexOf(leaf.session),
    leaf.seq,
    leaf.hlc,
    schemas.indexOf(leaf.schema),
    leaf.parents,
  ];
  const body = leaf.body;
  if (body.kind === "delete") row.push(BODY_DELETE);
  else if (body.kind === "delta") row.push(BODY_DELTA, body.set, body.unset);
  else if (body.value === item.wire) row.push(BODY_VALUE);
  else row.push(BODY_VALUE, body.value);
  return row;
}

/**
 * Decodes a checkpoint file; throws E_CORRUPT_ENCODING for anything that is not a whole, valid
 * one. The file is our own and CRC-checked, but still read as hostile: every field is checked.
 */
export function decodeCheckpoint(file: Uint8Array): Checkpoint {
  if (file.length < HEADER_LENGTH || MAGIC.some((byte, i) => file[i] !== byte)) {
    throw corrupt("checkpoint: not a checkpoint file");
  }
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const version = view.getUint16(MAGIC.length, true);
  if (version !== VERSION) throw corrupt(`checkpoint: version ${version} is not ${VERSION}`);
  const payload = file.subarray(HEADER_LENGTH);
  if (crc32c(payload) !== view.getUint32(MAGIC.length + 2, true)) {
    throw corrupt("checkpoint: checksum mismatch");
  }
  const decoded = unpackBytes(payload, "checkpoint");
  if (!Array.isArray(decoded) || decoded.length !== 7) throw corrupt("checkpoint: bad layout");
  const [logLength, logCrc, commitSeq, tipRows, sessions, schemas, itemRows] = decoded;
  if (!isCount(logLength) || !isCount(logCrc) || !isCount(commitSeq)) {
    throw corrupt("checkpoint: bad header fields");
  }
  if (!Array.isArray(tipRows) || !Array.isArray(itemRows)) throw corrupt("checkpoint: bad layout");
  assertStringArray(sessions, "checkpoint sessions");
  assertStringArray(schemas, "checkpoint schemas");
  const items = itemRows.map((row) => decodeItem(row, sessions, schemas));
  return { logLength, logCrc, commitSeq, tips: decodeTips(tipRows), items };
}

function decodeTips(rows: unknown[]): Map<string, ChainTip> {
  const tips = new Map<string, ChainTip>();
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 4) throw corrupt("checkpoint: bad chain tip");
    const [session, seq, hash, lastCommitSeq] = row;
    if (
      typeof session !== "string" || typeof hash !== "string" || !isCount(seq) ||
      !isCount(lastCommitSeq)
    ) {
      throw corrupt("checkpoint: bad chain tip");
    }
    tips.set(session, { seq, hash, lastCommitSeq });
  }
  return tips;
}

function decodeItem(row: unknown, sessions: string[], schemas: string[]): SnapshotItem {
  if (!Array.isArray(row) || row.length !== 5) throw corrupt("checkpoint: bad item");
  const [key, schemaIndex, deltas, value, leafRows] = row;
  if (typeof key !== "string" || !Number.isInteger(deltas)) throw corrupt("checkpoint: bad item");
  const schema = entry(schemas, schemaIndex);
  let wire: FieldRecord | undefined;
  if (value !== NO_VALUE) {
    assertFieldRecord(value, "checkpoint item");
    wire = value;
  }
  if (!Array.isArray(leafRows) || leafRows.length === 0) {
    throw corrupt("checkpoint: item without leaves");
  }
  const leaves = leafRows.map((leaf) => decodeLeaf(leaf, key, wire, sessions, schemas));
  return { key, leaves, wire, schema, deltas: deltas < 0 ? Infinity : deltas };
}

function decodeLeaf(
  row: unknown,
  key: string,
  wire: FieldRecord | undefined,
  sessions: string[],
  schemas: string[],
): Commit {
  if (!Array.isArray(row) || row.length < 6) throw corrupt("checkpoint: bad leaf");
  const [session, seq, hlc, schema, parents, kind, a, b] = row;
  if (!isCount(seq) || seq === 0 || !isCount(hlc)) throw corrupt("checkpoint: bad leaf");
  assertStringArray(parents, "checkpoint leaf parents");
  let body: CommitBody;
  if (kind === BODY_DELETE && row.length === 6) body = { kind: "delete" };
  else if (kind === BODY_DELTA && row.length === 8) {
    assertFieldRecord(a, "checkpoint leaf delta");
    assertStringArray(b, "checkpoint leaf delta");
    body = { kind: "delta", set: a, unset: b };
  } else if (kind === BODY_VALUE && row.length === 6 && wire) body = { kind: "value", value: wire };
  else if (kind === BODY_VALUE && row.length === 7) {
    assertFieldRecord(a, "checkpoint leaf value");
    body = { kind: "value", value: a };
  } else throw corrupt("checkpoint: bad leaf body");
  return {
    session: entry(sessions, session),
    seq,
    key,
    hlc,
    parents,
    schema: entry(schemas, schema),
    body,
  };
}

function entry(table: string[], index: unknown): string {
  if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= table.length) {
    throw corrupt("checkpoint: bad table index");
  }
  return table[index as number];
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
