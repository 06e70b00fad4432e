/**
 * A checkpoint's items as a repository holds them once opened (DESIGN §3.6: values decode
 * lazily on first access). Keys are found through an index over the stored key text; an item's
 * state object is made on its first lookup, and its value and leaf commits stay bytes of the
 * checkpoint file until first read, then are decoded once and kept.
 *
 * Decoding cannot fail: `decodeCheckpoint` checked every value's bytes and every column when it
 * opened the file (see msgpack_check.ts), so a read never meets an error that opening did not.
 */
import { type Commit, type FieldRecord, makeCommit } from "../core/commit.ts";
import { unpackBytes } from "../core/commit_codec.ts";
import type { Attachments, ItemState } from "../core/item_state.ts";
import type { RestoredItems } from "../core/snapshot.ts";
import type { TextColumn } from "./columns.ts";
import { KeyIndex } from "./key_index.ts";
import { MsgpackCheck } from "./msgpack_check.ts";
import { RecordFieldReader } from "./record_fields.ts";

/** A leaf's body, by kind. */
export const LEAF_SAME = 0; // a full value: the item's own value (stored once, with the item)
export const LEAF_VALUE = 1; // a full value of its own (a leaf of an item with several leaves)
export const LEAF_DELTA = 2; // a field delta: set (a record), then unset (an array of strings)
export const LEAF_DELETE = 3;

/** Everything the items read their values and leaves from, as decoded and checked on open. */
export interface CheckpointColumns {
  /** The checkpoint file: values and leaf bodies are MessagePack ranges of it. */
  readonly bytes: Uint8Array;
  readonly sessions: readonly string[];
  readonly schemas: readonly string[];
  readonly keys: TextColumn;
  /** Item i's schema, an index into `schemas`. */
  readonly itemSchema: Uint32Array;
  /** Item i's delta count plus one (0: unknown). */
  readonly itemDeltas: Float64Array;
  /** Item i's value is bytes[valueStarts[i], valueStarts[i + 1]): a record, or nil if deleted. */
  readonly valueStarts: Uint32Array;
  /** Item i's leaves are leaves leafStarts[i] up to leafStarts[i + 1]. */
  readonly leafStarts: Uint32Array;
  readonly leafSession: Uint32Array;
  readonly leafSeq: Float64Array;
  readonly leafHlc: Float64Array;
  readonly leafSchema: Uint32Array;
  readonly leafKind: Uint32Array;
  /** Leaf l's body is bytes[bodyStarts[l], bodyStarts[l + 1]) (empty for SAME and DELETE). */
  readonly bodyStarts: Uint32Array;
  /** Leaf l's parents are parent ids parentStarts[l] up to parentStarts[l + 1]. */
  readonly parentStarts: Uint32Array;
  readonly parentIds: TextColumn;
}

/** One leaf as stored: what re-encoding a checkpoint copies without decoding anything. */
export interface StoredLeaf {
  readonly session: string;
  readonly seq: number;
  readonly hlc: number;
  readonly schema: string;
  readonly kind: number;
  readonly parents: readonly string[];
  readonly body: Uint8Array;
}

const NO_PARENTS: readonly string[] = Object.freeze([]);
const NIL = 0xc0;

export class CheckpointTable implements RestoredItems {
  readonly columns: CheckpointColumns;
  readonly count: number;
  readonly liveCount: number;
  readonly #keyIndex: KeyIndex;
  /** Keys and item states made so far, by item number. */
  readonly #keys: (string | undefined)[];
  readonly #items: (CheckpointItem | undefined)[];
  /** Session → seq → leaf number, built on the first lookup. */
  #leafNumbers: Map<string, Map<number, number>> | undefined;
  /** For readFields: the last field list's reader, and a check over the file to step values. */
  #fieldReader: RecordFieldReader | undefined;
  #check: MsgpackCheck | undefined;

  /** Throws E_CORRUPT_ENCODING if a key occurs twice. */
  constructor(columns: CheckpointColumns, liveCount: number) {
    this.columns = columns;
    this.count = columns.itemSchema.length;
    this.liveCount = liveCount;
    this.#keyIndex = new KeyIndex(columns.keys);
    this.#keys = new Array(this.count);
    this.#items = new Array(this.count);
  }

  indexOf(key: string, hash?: number): number {
    return this.#keyIndex.indexOf(key, hash);
  }

  keyAt(index: number): string {
    const { text, starts } = this.columns.keys;
    return this.#keys[index] ??= text.slice(starts[index], starts[index + 1]);
  }

  isLive(index: number): boolean {
    return this.columns.bytes[this.columns.valueStarts[index]] !== NIL;
  }

  itemAt(index: number, key?: string): CheckpointItem {
    let item = this.#items[index];
    if (item === undefined) {
      if (key !== undefined) this.#keys[index] ??= key;
      item = new CheckpointItem(this, index);
      this.#items[index] = item;
    }
    return item;
  }

  /** Item `index`'s schema id. */
  schemaAt(index: number): string {
    return this.columns.schemas[this.columns.itemSchema[index]];
  }

  /** Deltas behind item `index`'s single leaf since its last full value (Infinity: unknown). */
  deltasAt(index: number): number {
    const stored = this.columns.itemDeltas[index];
    return stored === 0 ? Infinity : stored - 1;
  }

  /** The value of item `index`; undefined if it is deleted. */
  value(index: number): FieldRecord | undefined {
    const { bytes, valueStarts } = this.columns;
    return this.#record(valueStarts[index], valueStarts[index + 1], bytes);
  }

  readFields(index: number, schema: string, fields: readonly string[], into: FieldRecord) {
    const { bytes, valueStarts, schemas, itemSchema } = this.columns;
    const start = valueStarts[index];
    if (bytes[start] === NIL || schemas[itemSchema[index]] !== schema) return false;
    if (this.#fieldReader?.names !== fields) this.#fieldReader = new RecordFieldReader(fields);
    this.#check ??= new MsgpackCheck(bytes, "checkpoint");
    this.#fieldReader.read(bytes, start, valueStarts[index + 1], this.#check, into);
    return true;
  }

  /** The stored bytes of item `index`'s value. */
  valueBytes(index: number): Uint8Array {
    const { bytes, valueStarts } = this.columns;
    return bytes.subarray(valueStarts[index], valueStarts[index + 1]);
  }

  /** The leaf numbers of item `index`. */
  leafRange(index: number): [number, number] {
    return [this.columns.leafStarts[index], this.columns.leafStarts[index + 1]];
  }

  stored(leaf: number): StoredLeaf {
    const c = this.columns;
    return {
      session: c.sessions[c.leafSession[leaf]],
      seq: c.leafSeq[leaf],
      hlc: c.leafHlc[leaf],
      schema: c.schemas[c.leafSchema[leaf]],
      kind: c.leafKind[leaf],
      parents: this.#parents(leaf),
      body: c.bytes.subarray(c.bodyStarts[leaf], c.bodyStarts[leaf + 1]),
    };
  }

  /** The leaf commits of `item`, made from the stored columns. */
  leaves(item: CheckpointItem): Commit[] {
    const [first, end] = this.leafRange(item.index);
    const leaves: Commit[] = [];
    for (let leaf = first; leaf < end; leaf++) leaves.push(this.#leafCommit(leaf, item));
    return leaves;
  }

  /** A leaf commit by session and seq (see RestoredSnapshot.leaf). */
  leaf(session: string, seq: number): Commit | undefined {
    const leaf = this.#numbers().get(session)?.get(seq);
    if (leaf === undefined) return undefined;
    const index = this.#itemOf(leaf);
    return this.itemAt(index).leaves[leaf - this.columns.leafStarts[index]];
  }

  #leafCommit(leaf: number, item: CheckpointItem): Commit {
    const c = this.columns;
    const session = c.sessions[c.leafSession[leaf]];
    const key = this.keyAt(item.index);
    const parents = this.#parents(leaf);
    const schema = c.schemas[c.leafSchema[leaf]];
    const header = [session, c.leafSeq[leaf], key, c.leafHlc[leaf], parents, schema] as const;
    const kind = c.leafKind[leaf];
    if (kind === LEAF_DELETE) return makeCommit(...header, "delete");
    if (kind === LEAF_SAME) return makeCommit(...header, "value", item.wire!);
    const start = c.bodyStarts[leaf];
    const end = c.bodyStarts[leaf + 1];
    if (kind === LEAF_VALUE) {
      return makeCommit(...header, "value", this.#record(start, end, c.bytes));
    }
    // A delta: its set record, then its unset names; where one ends was checked on open.
    const split = new MsgpackCheck(c.bytes, "checkpoint").record(start, end);
    const unset = unpackBytes(c.bytes, "checkpoint", split, end) as string[];
    return makeCommit(...header, "delta", this.#record(start, split, c.bytes), unset);
  }

  #record(start: number, end: number, bytes: Uint8Array): FieldRecord | undefined {
    return (unpackBytes(bytes, "checkpoint", start, end) as FieldRecord | null) ?? undefined;
  }

  #parents(leaf: number): readonly string[] {
    const { parentStarts, parentIds: { text, starts } } = this.columns;
    const first = parentStarts[leaf];
    const end = parentStarts[leaf + 1];
    if (first === end) return NO_PARENTS;
    const parents: string[] = [];
    for (let p = first; p < end; p++) parents.push(text.slice(starts[p], starts[p + 1]));
    return parents;
  }

  #numbers(): Map<string, Map<number, number>> {
    if (this.#leafNumbers) return this.#leafNumbers;
    const { sessions, leafSession, leafSeq } = this.columns;
    const bySession = sessions.map(() => new Map<number, number>());
    for (let leaf = 0; leaf < leafSeq.length; leaf++) {
      bySession[leafSession[leaf]].set(leafSeq[leaf], leaf);
    }
    return this.#leafNumbers = new Map(sessions.map((session, i) => [session, bySession[i]]));
  }

  /** The item a leaf belongs to: leafStarts is ascending, so a binary search finds it. */
  #itemOf(leaf: number): number {
    const starts = this.columns.leafStarts;
    let low = 0;
    let high = starts.length - 2;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (starts[middle] <= leaf) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}

/**
 * An item restored from a checkpoint: value and leaves decoded on first access, then kept. Its
 * schema and delta count are read from the table's columns, not kept: a repository may hold a
 * million of these.
 */
export class CheckpointItem implements ItemState {
  readonly table: CheckpointTable;
  readonly index: number;
  attached: Attachments | undefined = undefined;
  /** null until decoded. */
  #wire: FieldRecord | undefined | null;
  #leaves: readonly Commit[] | undefined;

  constructor(table: CheckpointTable, index: number) {
    this.table = table;
    this.index = index;
    this.#wire = table.isLive(index) ? null : undefined;
  }

  get schema(): string {
    return this.table.schemaAt(this.index);
  }

  get deltas(): number {
    return this.table.deltasAt(this.index);
  }

  get live(): boolean {
    return this.#wire !== undefined;
  }

  get wire(): FieldRecord | undefined {
    if (this.#wire === null) this.#wire = this.table.value(this.index);
    return this.#wire;
  }

  get leaves(): readonly Commit[] {
    return this.#leaves ??= this.table.leaves(this);
  }
}
