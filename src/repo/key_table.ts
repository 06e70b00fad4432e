/**
 * Values by string key, in insertion order, in an open-addressing hash table Cairn hashes itself
 * (core/string_hash.ts): looking up a key the caller has just built costs no V8 string hash,
 * which in Deno costs ten times more. Keys are never removed (an item map keeps tombstones).
 *
 * Each entry keeps the first string it was set with: the key `keyAt` gives back for it.
 */
import { stringHash } from "../core/string_hash.ts";

/** Slots per entry at most; beyond it the slot array doubles. */
const MAX_LOAD = 0.5;

/**
 * Laid out for the cache misses of a lookup in a large table, which cost more than everything
 * else it does: a slot holds its entry number and that entry key's hash side by side, and an
 * entry its key and value side by side, so a hit reads one line of each (four separate arrays
 * cost two more misses).
 */
export class KeyTable<V> {
  /** Entry e's key at 2e, its value at 2e + 1. */
  readonly #entries: unknown[] = [];
  /** Slot s: entry + 1 at 2s (0 for an empty slot), the entry key's hash at 2s + 1. */
  #slots = new Int32Array(32);

  get size(): number {
    return this.#entries.length >> 1;
  }

  /** The entry of `key` (whose stringHash is `hash`, when known), or -1. */
  indexOf(key: string, hash = stringHash(key)): number {
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    for (let slot = hash & mask, entry; (entry = slots[2 * slot]) !== 0; slot = (slot + 1) & mask) {
      if (slots[2 * slot + 1] === hash && this.#entries[2 * entry - 2] === key) return entry - 1;
    }
    return -1;
  }

  get(key: string, hash = stringHash(key)): V | undefined {
    const entry = this.indexOf(key, hash);
    return entry < 0 ? undefined : this.valueAt(entry);
  }

  /** Sets the value of `key`, adding an entry at the end if it has none. */
  set(key: string, value: V, hash = stringHash(key)): void {
    const entry = this.indexOf(key, hash);
    if (entry >= 0) {
      this.#entries[2 * entry + 1] = value;
      return;
    }
    this.#entries.push(key, value);
    const size = this.size;
    if (size > (this.#slots.length >> 1) * MAX_LOAD) this.#grow();
    place(this.#slots, size - 1, hash);
  }

  keyAt(entry: number): string {
    return this.#entries[2 * entry] as string;
  }

  valueAt(entry: number): V {
    return this.#entries[2 * entry + 1] as V;
  }

  #grow(): void {
    const old = this.#slots;
    const slots = new Int32Array(old.length * 2);
    for (let slot = 0; slot < old.length; slot += 2) {
      if (old[slot] !== 0) place(slots, old[slot] - 1, old[slot + 1]);
    }
    this.#slots = slots;
  }
}

function place(slots: Int32Array, entry: number, hash: number): void {
  const mask = (slots.length >> 1) - 1;
  let slot = hash & mask;
  while (slots[2 * slot] !== 0) slot = (slot + 1) & mask;
  slots[2 * slot] = entry + 1;
  slots[2 * slot + 1] = hash;
}
