/**
 * The item every workload writes, its key, a seeded pick of keys shared by both sides, and the
 * seeded random stream behind it.
 */

export interface ItemValues {
  title: string;
  count: number;
  tags: Set<string>;
}

export function itemValues(i: number): ItemValues {
  return { title: itemTitle(i), count: i, tags: new Set([`tag${i}`, `category${i % 5}`]) };
}

export function itemTitle(i: number): string {
  return `Item ${i}`;
}

/** Both sides use the same keys, so lookups and updates touch the same items. */
export function itemKey(i: number): string {
  return `k${i}`;
}

/** The tags as SQLite stores them: a JSON array in a text column. */
export function tagsJson(i: number): string {
  return `["tag${i}","category${i % 5}"]`;
}

/**
 * A seeded stream of 32-bit unsigned integers (xorshift32): every contender and runtime that
 * starts from the same seed draws the same numbers.
 */
export function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

/**
 * `count` indexes in [0, n) from a fixed seed, so every contender and runtime reads and updates
 * the same items in the same order.
 */
export function pick(n: number, count: number, seed = 0x9e3779b9): Uint32Array {
  const out = new Uint32Array(count);
  const next = xorshift32(seed);
  for (let i = 0; i < count; i++) out[i] = next() % n;
  return out;
}

/** Keeps results alive so no engine can drop a read as dead code. */
export const sink = { value: 0 };
