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

export class KeyTable<V> {
  readonly #keys: string[] = [];
  readonly #values: V[] = [];
  readonly #hashes: number[] = [];
  /** Entry + 1 per used slot, 0 for an empty one. */
  #slots = new Int32Array(16);

  get size(): number {
    return this.#keys.length;
  }

  /** The entry of `key` (whose stringHash is `hash`, when known), or -1. */
  indexOf(key: string, hash = stringHash(key)): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let slot = hash & mask, entry; (entry = slots[slot]) !== 0; slot = (slot + 1) & mask) {
      if (this.#hashes[entry - 1] === hash && this.#keys[entry - 1] === key) return entry - 1;
    }
    return -1;
  }

  get(key: string, hash = stringHash(key)): V | undefined {
    const entry = this.indexOf(key, hash);
    return entry < 0 ? undefined : this.#values[entry];
  }

  /** Sets the value of `key`, adding an entry at the end if it has none. */
  set(key: string, value: V, hash = stringHash(key)): void {
    const entry = this.indexOf(key, hash);
    if (entry >= 0) {
      this.#values[entry] = value;
      return;
    }
    this.#keys.push(key);
    this.#values.push(value);
    this.#hashes.push(hash);
    if (this.#keys.length > this.#slots.length * MAX_LOAD) this.#grow();
    else this.#place(this.#keys.length - 1, this.#slots);
  }

  keyAt(entry: number): string {
    return this.#keys[entry];
  }

  valueAt(entry: number): V {
    return this.#values[entry];
  }

  #place(entry: number, slots: Int32Array): void {
    const mask = slots.length - 1;
    let slot = this.#hashes[entry] & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = entry + 1;
  }

  #grow(): void {
    const slots = new Int32Array(this.#slots.length * 2);
    for (let entry = 0; entry < this.#keys.length; entry++) this.#place(entry, slots);
    this.#slots = slots;
  }
}
