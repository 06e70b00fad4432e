/**
 * A repository's items by key: a Map, except that the items of a restored snapshot stay in the
 * snapshot's own form until asked for (core/snapshot.ts RestoredItems). Restoring 100k items
 * thus makes no string and no object per item; a key's state is made on its first lookup.
 *
 * It behaves as a Map whose first entries are the restored items in stored order, followed by
 * keys added later in insertion order; setting a key keeps its place (keys are never removed:
 * a deleted item stays, as a tombstone).
 */
import type { ItemSnapshot, RestoredItems } from "../core/snapshot.ts";

export class ItemMap implements ReadonlyMap<string, ItemSnapshot> {
  readonly #restored: RestoredItems | undefined;
  /** States of restored items looked up or set since, by entry number. */
  readonly #slots: (ItemSnapshot | undefined)[];
  /** Keys that are not among the restored items. */
  readonly #added = new Map<string, ItemSnapshot>();

  constructor(restored?: RestoredItems) {
    this.#restored = restored;
    this.#slots = new Array(restored?.count ?? 0);
  }

  get size(): number {
    return this.#slots.length + this.#added.size;
  }

  get(key: string): ItemSnapshot | undefined {
    const index = this.#restored ? this.#restored.indexOf(key) : -1;
    return index < 0 ? this.#added.get(key) : this.#slot(index, key);
  }

  has(key: string): boolean {
    return (this.#restored !== undefined && this.#restored.indexOf(key) >= 0) ||
      this.#added.has(key);
  }

  set(key: string, state: ItemSnapshot): this {
    const index = this.#restored ? this.#restored.indexOf(key) : -1;
    if (index < 0) this.#added.set(key, state);
    else this.#slots[index] = state;
    return this;
  }

  /** Keys of the items that exist, without making the state of a restored item to find out. */
  *liveKeys(): IterableIterator<string> {
    const restored = this.#restored;
    for (let i = 0; i < this.#slots.length; i++) {
      const state = this.#slots[i];
      if (state === undefined ? restored!.isLive(i) : isLive(state)) yield restored!.keyAt(i);
    }
    for (const [key, state] of this.#added) if (isLive(state)) yield key;
  }

  forEach(
    callback: (state: ItemSnapshot, key: string, map: ReadonlyMap<string, ItemSnapshot>) => void,
  ): void {
    for (let i = 0; i < this.#slots.length; i++) {
      callback(this.#slot(i), this.#restored!.keyAt(i), this);
    }
    this.#added.forEach((state, key) => callback(state, key, this));
  }

  *entries(): MapIterator<[string, ItemSnapshot]> {
    for (let i = 0; i < this.#slots.length; i++) {
      yield [this.#restored!.keyAt(i), this.#slot(i)];
    }
    yield* this.#added.entries();
  }

  *keys(): MapIterator<string> {
    for (let i = 0; i < this.#slots.length; i++) yield this.#restored!.keyAt(i);
    yield* this.#added.keys();
  }

  *values(): MapIterator<ItemSnapshot> {
    for (let i = 0; i < this.#slots.length; i++) yield this.#slot(i);
    yield* this.#added.values();
  }

  [Symbol.iterator](): MapIterator<[string, ItemSnapshot]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "ItemMap";
  }

  #slot(index: number, key?: string): ItemSnapshot {
    return this.#slots[index] ??= this.#restored!.itemAt(index, key);
  }
}

/** Whether an item exists: a restored state knows without decoding its value. */
export function isLive(state: ItemSnapshot): boolean {
  return state.live ?? state.wire !== undefined;
}
