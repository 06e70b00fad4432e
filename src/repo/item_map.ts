/**
 * A repository's items by key: a Map, except in two ways that spare work per item.
 * - The items of a restored snapshot stay in the snapshot's own form until asked for
 *   (core/snapshot.ts RestoredItems): restoring 100k items makes no string and no object per
 *   item; a key's state is made on its first lookup.
 * - Keys this session generated (generated_keys.ts) are filed in an array by their number, so
 *   creating an item never hashes its new key string; other keys are in KeyTables, which hash
 *   them without V8 (a key the caller has just built costs 0.5 µs to hash in a Map in Deno).
 *   A key spelled as generated but with a number far past this repository's own (a peer may
 *   send any key) goes in the KeyTable too: the array, which every scan walks, stays as long
 *   as what this repository made.
 *
 * Iteration visits the restored items in stored order, then keys added later: first those
 * filed by hash, in insertion order, then generated ones, in the order they were made. Setting
 * a key keeps its place; keys are never removed (a deleted item stays, as a tombstone).
 */
import type { FieldRecord } from "../core/commit.ts";
import type { ItemState } from "../core/item_state.ts";
import { iteratorOf } from "../core/iterate.ts";
import type { RestoredItems } from "../core/snapshot.ts";
import { stringHash } from "../core/string_hash.ts";
import type { GeneratedKeys } from "./generated_keys.ts";
import { KeyTable } from "./key_table.ts";

/**
 * A test a scan may run on an item's stored bytes before making its state: `test` gets a record
 * holding just `fields` (undefined where the value lacks one), read from the stored value of an
 * item stored under `schema`. It must answer as it would on the whole value.
 */
export interface StoredPrefilter {
  readonly schema: string;
  readonly fields: readonly string[];
  readonly test: (fields: FieldRecord) => boolean;
}

export class ItemMap implements ReadonlyMap<string, ItemState> {
  readonly #restored: RestoredItems | undefined;
  /** States of restored items looked up or set so far, by entry number (the order). */
  readonly #slots: (ItemState | undefined)[];
  // A restored key is found in the restored key index on every lookup (a hash, then a compare
  // in the stored text): a second table of the keys looked up so far made the first read of each
  // cost a miss and an insert, and later reads were no faster (W10 read of 100k items after
  // open: 135 → 115 ms on Deno; a warm re-read 17.5 ms either way).
  /** Keys that are neither restored nor generated here, in the order they came. */
  readonly #added = new KeyTable<ItemState>();
  readonly #generatedKeys: GeneratedKeys | undefined;
  /** Generated keys (not restored ones) by their number: the key string and its state. */
  readonly #generated: string[] = [];
  readonly #generatedStates: ItemState[] = [];
  #generatedCount = 0;
  /** Whether some key spelled as generated is filed by hash (its number was too far out). */
  #generatedByHash = false;
  #lastKey: string | undefined;
  #lastSeq = -1;
  #lastHash: number | undefined;

  constructor(restored?: RestoredItems, generatedKeys?: GeneratedKeys) {
    this.#restored = restored;
    this.#slots = new Array(restored?.count ?? 0);
    this.#generatedKeys = generatedKeys;
  }

  get size(): number {
    return this.#slots.length + this.#added.size + this.#generatedCount;
  }

  /**
   * Generated or added keys first: in a repository never restored they hold every key, and after
   * a restore they are usually few, so their miss is cheap. A read of a generated key costs about
   * 0.02 µs more than a Map lookup of a string V8 has hashed before (the key is parsed for its
   * number); a create or a lookup with a string the caller just built costs 0.3–0.6 µs less.
   */
  get(key: string): ItemState | undefined {
    const seq = this.#seqOf(key);
    if (seq >= 0) {
      const state = this.#generatedStates[seq];
      if (state !== undefined || (this.#restored === undefined && !this.#generatedByHash)) {
        return state;
      }
    }
    const hash = this.#hashOf(key);
    if (this.#mayBeAdded(seq)) {
      const state = this.#added.get(key, hash);
      if (state !== undefined || this.#restored === undefined) return state;
    }
    const index = this.#restored!.indexOf(key, hash);
    return index < 0 ? undefined : this.#slot(index, key);
  }

  /** Without making the state of a restored item. */
  has(key: string): boolean {
    const seq = this.#seqOf(key);
    if (seq >= 0 && this.#generatedStates[seq] !== undefined) return true;
    const hash = this.#hashOf(key);
    if (this.#mayBeAdded(seq) && this.#added.indexOf(key, hash) >= 0) return true;
    return this.#restored !== undefined && this.#restored.indexOf(key, hash) >= 0;
  }

  set(key: string, state: ItemState): this {
    const index = this.#restored === undefined
      ? -1
      : this.#restored.indexOf(key, this.#hashOf(key));
    if (index >= 0) {
      this.#slots[index] = state;
      return this;
    }
    const seq = this.#seqOf(key);
    if (this.#filedBySeq(key, seq)) {
      if (this.#generatedStates[seq] === undefined) {
        this.#generated[seq] = key;
        this.#generatedCount++;
      }
      this.#generatedStates[seq] = state;
    } else {
      this.#added.set(key, state, this.#hashOf(key));
      if (seq >= 0) this.#generatedByHash = true;
    }
    return this;
  }

  /** Whether a key of number `seq`, where the map holds none (by number), may be in #added. */
  #mayBeAdded(seq: number): boolean {
    return seq < 0 || this.#generatedByHash;
  }

  /**
   * Whether `key`, of number `seq` (-1: none), is filed by it, or is to be: a key new here is
   * when its number is near what this repository has used, and was not filed by hash already
   * while its number was further out.
   */
  #filedBySeq(key: string, seq: number): boolean {
    if (seq < 0) return false;
    if (this.#generatedStates[seq] !== undefined) return true;
    if (!this.#generatedKeys!.files(seq)) return false;
    return !this.#generatedByHash || this.#added.indexOf(key, this.#hashOf(key)) < 0;
  }

  /**
   * Keys of the items that exist, without making the state of a restored item to find out. One
   * iterator object over a step function; a caller with checks of its own per step wraps the
   * step (liveKeyStep), not this iterator: a generator per group of keys, or an iterator wrapping
   * another, made listing 100k keys take 1.5–2× as long.
   */
  liveKeys(): IterableIterator<string> {
    return iteratorOf(this.liveKeyStep());
  }

  /** What liveKeys steps through: the next live key on each call, then undefined. */
  liveKeyStep(): () => string | undefined {
    let group = 0; // restored, added, generated
    let i = 0;
    return (): string | undefined => {
      if (group === 0) {
        while (i < this.#slots.length) {
          const state = this.#slots[i];
          const index = i++;
          if (state === undefined ? this.#restored!.isLive(index) : isLive(state)) {
            return this.#restored!.keyAt(index);
          }
        }
        group = 1;
        i = 0;
      }
      if (group === 1) {
        while (i < this.#added.size) {
          const entry = i++;
          if (isLive(this.#added.valueAt(entry))) return this.#added.keyAt(entry);
        }
        group = 2;
        i = 0;
      }
      while (i < this.#generatedStates.length) {
        const state = this.#generatedStates[i++];
        if (state !== undefined && isLive(state)) return this.#generated[i - 1];
      }
      return undefined;
    };
  }

  forEach(
    callback: (state: ItemState, key: string, map: ReadonlyMap<string, ItemState>) => void,
  ): void {
    for (let i = 0; i < this.#slots.length; i++) {
      callback(this.#slot(i), this.#restored!.keyAt(i), this);
    }
    for (let entry = 0; entry < this.#added.size; entry++) {
      callback(this.#added.valueAt(entry), this.#added.keyAt(entry), this);
    }
    for (let seq = 0; seq < this.#generatedStates.length; seq++) {
      const state = this.#generatedStates[seq];
      if (state !== undefined) callback(state, this.#generated[seq], this);
    }
  }

  /**
   * forEach, except that a restored item whose state is not made yet, and which `prefilter`
   * rejects on the fields it reads from the item's stored bytes, is passed over without making
   * its state or decoding its value. Returns how many existing items it passed over.
   */
  forEachPassing(
    prefilter: StoredPrefilter,
    callback: (state: ItemState, key: string) => void,
  ): number {
    const rejected = this.#storedRejection(prefilter);
    if (rejected === undefined) {
      this.forEach(callback);
      return 0;
    }
    let passedOver = 0;
    for (let i = 0; i < this.#slots.length; i++) {
      if (rejected(i)) passedOver++;
      else callback(this.#slot(i), this.#restored!.keyAt(i));
    }
    // After a restore, usually few.
    for (const [key, state] of this.#laterEntries()) callback(state, key);
    return passedOver;
  }

  /** forEachPassing as an iterator, for a scan in slices: `tally` counts what it passed over. */
  *entriesPassing(
    prefilter: StoredPrefilter,
    tally: { passedOver: number },
  ): IterableIterator<[string, ItemState]> {
    const rejected = this.#storedRejection(prefilter);
    for (let i = 0; i < this.#slots.length; i++) {
      if (rejected?.(i)) tally.passedOver++;
      else yield [this.#restored!.keyAt(i), this.#slot(i)];
    }
    yield* this.#laterEntries();
  }

  /**
   * Whether `prefilter` rejects restored entry i on its stored bytes (false once its state is
   * made); undefined when the restored items cannot be read in place.
   */
  #storedRejection(prefilter: StoredPrefilter): ((i: number) => boolean) | undefined {
    const restored = this.#restored;
    if (restored?.readFields === undefined) return undefined;
    const { schema, fields, test } = prefilter;
    // No prototype: a field named like an Object.prototype member reads as missing, not inherited.
    const scratch: FieldRecord = Object.create(null);
    return (i) =>
      this.#slots[i] === undefined && restored.readFields!(i, schema, fields, scratch) &&
      !test(scratch);
  }

  *entries(): MapIterator<[string, ItemState]> {
    for (let i = 0; i < this.#slots.length; i++) {
      yield [this.#restored!.keyAt(i), this.#slot(i)];
    }
    yield* this.#laterEntries();
  }

  /** Entries of the keys added after the restore: first filed by hash, then generated ones. */
  *#laterEntries(): MapIterator<[string, ItemState]> {
    for (let entry = 0; entry < this.#added.size; entry++) {
      yield [this.#added.keyAt(entry), this.#added.valueAt(entry)];
    }
    for (let seq = 0; seq < this.#generatedStates.length; seq++) {
      const state = this.#generatedStates[seq];
      if (state !== undefined) yield [this.#generated[seq], state];
    }
  }

  /** Without making the state of a restored item. */
  *keys(): MapIterator<string> {
    for (let i = 0; i < this.#slots.length; i++) yield this.#restored!.keyAt(i);
    for (let entry = 0; entry < this.#added.size; entry++) yield this.#added.keyAt(entry);
    for (let seq = 0; seq < this.#generated.length; seq++) {
      if (this.#generated[seq] !== undefined) yield this.#generated[seq];
    }
  }

  *values(): MapIterator<ItemState> {
    for (const [, state] of this.entries()) yield state;
  }

  [Symbol.iterator](): MapIterator<[string, ItemState]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "ItemMap";
  }

  /** Notes that `key` was just made from `seq` (see GeneratedKeys), so it is not parsed again. */
  rememberGenerated(key: string, seq: number): void {
    this.#lastKey = key;
    this.#lastSeq = this.#generatedKeys === undefined ? -1 : this.#generatedKeys.filedSeq(seq);
    this.#lastHash = undefined;
  }

  /**
   * The last key asked about is remembered with its number and hash: a write looks its key up,
   * then sets it.
   */
  #seqOf(key: string): number {
    this.#remember(key);
    return this.#lastSeq;
  }

  #hashOf(key: string): number {
    this.#remember(key);
    if (this.#lastHash === undefined) this.#lastHash = stringHash(key);
    return this.#lastHash;
  }

  #remember(key: string): void {
    if (key === this.#lastKey) return;
    this.#lastKey = key;
    this.#lastSeq = this.#generatedKeys === undefined ? -1 : this.#generatedKeys.seqOf(key);
    this.#lastHash = undefined;
  }

  /** A restored item's state, made (once) when first needed. */
  #slot(index: number, key?: string): ItemState {
    let state = this.#slots[index];
    if (state === undefined) {
      state = this.#slots[index] = this.#restored!.itemAt(index, key);
    }
    return state;
  }
}

/** Whether an item exists: a restored state knows without decoding its value. */
export function isLive(state: ItemState): boolean {
  return state.live ?? state.wire !== undefined;
}
