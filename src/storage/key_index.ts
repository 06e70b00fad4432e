/**
 * Finds a key among strings stored as one text (a checkpoint's item keys) without making a
 * string per key: an open-addressing hash table of their positions, built in one pass over the
 * text. Opening a checkpoint of 100k items this way makes no object per item; a JS Map would
 * need every key as a string, and hashing 100k fresh strings into it cost 15–25 ms.
 */
import { stringHash } from "../core/string_hash.ts";
import { corrupt } from "../core/wire_validation.ts";
import type { TextColumn } from "./columns.ts";

export class KeyIndex {
  readonly #text: string;
  readonly #starts: Uint32Array;
  readonly #hashes: Int32Array;
  /** Entry i + 1 per used slot, 0 for an empty one; at most half full. */
  readonly #slots: Int32Array;
  readonly #mask: number;

  /** Throws E_CORRUPT_ENCODING if a key occurs twice. */
  constructor({ text, starts }: TextColumn) {
    const count = starts.length - 1;
    let capacity = 16;
    while (capacity < count * 2) capacity *= 2;
    // Locals in the loop: it runs once per open, mostly before the optimizing compiler is done.
    const slots = new Int32Array(capacity);
    const hashes = new Int32Array(count);
    const mask = capacity - 1;
    this.#text = text;
    this.#starts = starts;
    this.#hashes = hashes;
    this.#slots = slots;
    this.#mask = mask;
    for (let i = 0; i < count; i++) {
      const hash = stringHash(text, starts[i], starts[i + 1]);
      hashes[i] = hash;
      let slot = hash & mask;
      for (let other; (other = slots[slot]) !== 0; slot = (slot + 1) & mask) {
        if (this.#equal(other - 1, text.slice(starts[i], starts[i + 1]), hash)) {
          throw corrupt("checkpoint: a key is stored twice");
        }
      }
      slots[slot] = i + 1;
    }
  }

  /** The entry holding `key` (whose stringHash is `hash`, when known), or -1. */
  indexOf(key: string, hash = stringHash(key)): number {
    for (let slot = hash & this.#mask, entry; (entry = this.#slots[slot]) !== 0;) {
      if (this.#equal(entry - 1, key, hash)) return entry - 1;
      slot = (slot + 1) & this.#mask;
    }
    return -1;
  }

  #equal(entry: number, key: string, hash: number): boolean {
    const start = this.#starts[entry];
    return this.#hashes[entry] === hash && this.#starts[entry + 1] - start === key.length &&
      this.#text.startsWith(key, start);
  }
}
