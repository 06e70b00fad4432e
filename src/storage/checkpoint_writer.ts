/**
 * Builds the columns of a checkpoint (layout in checkpoint.ts) from a repository snapshot.
 * An item still held as restored from the previous checkpoint is copied from that file's bytes
 * as it is, so writing a checkpoint never decodes what nobody has read.
 */
import type { Commit } from "../core/commit.ts";
import { MsgpackWriter, type PackableValue } from "../core/msgpack_writer.ts";
import type { ItemState } from "../core/item_state.ts";
import type { ByteWriter } from "./columns.ts";
import {
  CheckpointItem,
  LEAF_DELETE,
  LEAF_DELTA,
  LEAF_SAME,
  LEAF_VALUE,
  type StoredLeaf,
} from "./checkpoint_items.ts";

/** Strings stored once, referred to by index. */
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

/** Bytes a run of written values may reach before it is taken as a part of its own. */
const MAX_RUN_BYTES = 64 * 1024;

/**
 * MessagePack values back to back: written one by one into a writer, taken out as parts of at
 * most about MAX_RUN_BYTES (so the writer's buffer stays small), with bytes copied from an earlier
 * file as parts between them.
 */
class ValueSequence {
  readonly parts: Uint8Array[] = [];
  readonly #writer = new MsgpackWriter();

  add(value: PackableValue): void {
    this.#writer.value(value);
    if (this.#writer.length >= MAX_RUN_BYTES) this.#endRun();
  }

  addBytes(bytes: Uint8Array): void {
    this.#endRun();
    this.parts.push(bytes);
  }

  finish(): Uint8Array[] {
    this.#endRun();
    return this.parts;
  }

  #endRun(): void {
    if (this.#writer.length > 0) this.parts.push(this.#writer.take());
  }
}

export class CheckpointWriter {
  readonly sessions = new Table();
  readonly schemas = new Table();
  readonly #keys: string[] = [];
  readonly #itemSchema: number[] = [];
  readonly #itemDeltas: number[] = [];
  readonly #itemLeaves: number[] = [];
  readonly #leafSession: number[] = [];
  readonly #leafSeq: number[] = [];
  readonly #leafHlc: number[] = [];
  readonly #leafSchema: number[] = [];
  readonly #leafKind: number[] = [];
  readonly #leafParents: number[] = [];
  readonly #parentIds: string[] = [];
  readonly #values = new ValueSequence();
  readonly #bodies = new ValueSequence();

  get counts(): { items: number; leaves: number; parents: number } {
    return {
      items: this.#keys.length,
      leaves: this.#leafSeq.length,
      parents: this.#parentIds.length,
    };
  }

  add(key: string, item: ItemState): void {
    this.#keys.push(key);
    this.#itemSchema.push(this.schemas.indexOf(item.schema));
    // Stored plus one: 0 means unknown (Infinity).
    this.#itemDeltas.push(Number.isFinite(item.deltas) ? item.deltas + 1 : 0);
    if (item instanceof CheckpointItem) return this.#copy(item);
    this.#itemLeaves.push(item.leaves.length);
    this.#values.add(item.wire ?? null);
    for (const leaf of item.leaves) this.#addCommit(leaf, item);
  }

  /**
   * Columns, then texts, then the values and leaf bodies (see the layout in checkpoint.ts), in
   * steps: it yields after each column and text, where the caller may give the event loop a turn.
   */
  *writeTo(out: ByteWriter): Generator<void, void, void> {
    for (
      const column of [
        this.#itemSchema,
        this.#itemDeltas,
        this.#itemLeaves,
        this.#leafSession,
        this.#leafSeq,
        this.#leafHlc,
        this.#leafSchema,
        this.#leafKind,
        this.#leafParents,
      ]
    ) {
      out.column(column);
      yield;
    }
    out.text(this.#keys);
    yield;
    out.text(this.#parentIds);
    yield;
    for (const part of this.#values.finish()) out.bytes(part);
    for (const part of this.#bodies.finish()) out.bytes(part);
  }

  #copy(item: CheckpointItem): void {
    const [first, end] = item.table.leafRange(item.index);
    this.#itemLeaves.push(end - first);
    this.#values.addBytes(item.table.valueBytes(item.index));
    for (let leaf = first; leaf < end; leaf++) {
      const stored = item.table.stored(leaf);
      this.#addLeaf(stored, stored.kind);
      if (stored.body.length > 0) this.#bodies.addBytes(stored.body);
    }
  }

  #addCommit(leaf: Commit, item: ItemState): void {
    let kind = LEAF_DELETE;
    if (leaf.kind === "delta") {
      kind = LEAF_DELTA;
      this.#bodies.add(leaf.set);
      this.#bodies.add(leaf.unset);
    } else if (leaf.kind === "value" && leaf.value === item.wire) kind = LEAF_SAME;
    else if (leaf.kind === "value") {
      kind = LEAF_VALUE;
      this.#bodies.add(leaf.value);
    }
    this.#addLeaf(leaf, kind);
  }

  #addLeaf(leaf: Pick<StoredLeaf, "session" | "seq" | "hlc" | "schema" | "parents">, kind: number) {
    this.#leafSession.push(this.sessions.indexOf(leaf.session));
    this.#leafSeq.push(leaf.seq);
    this.#leafHlc.push(leaf.hlc);
    this.#leafSchema.push(this.schemas.indexOf(leaf.schema));
    this.#leafKind.push(kind);
    this.#leafParents.push(leaf.parents.length);
    for (const parent of leaf.parents) this.#parentIds.push(parent);
  }
}
