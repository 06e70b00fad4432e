/**
 * A sorted list kept in chunks of at most CHUNK elements, so an insert or a removal moves at most
 * one chunk's elements instead of the whole array (a plain sorted array of 100k elements costs a
 * ~100k-element memmove per change). Finding a place is a binary search over the chunks' last
 * elements, then one inside the chunk: O(log n). Ranks (global positions) cost O(n / CHUNK).
 *
 * The order must be total over the elements held (queries and indexes break ties by key), so
 * `compare(a, b) === 0` only for an element and itself.
 */

const CHUNK = 128;

export class SortedList<T> {
  readonly #compare: (a: T, b: T) => number;
  #chunks: T[][] = [];
  #size = 0;

  constructor(compare: (a: T, b: T) => number) {
    this.#compare = compare;
  }

  /** A list of `items`, sorting them (in place) first. */
  static from<T>(items: T[], compare: (a: T, b: T) => number): SortedList<T> {
    const list = new SortedList(compare);
    items.sort(compare);
    for (let i = 0; i < items.length; i += CHUNK) list.#chunks.push(items.slice(i, i + CHUNK));
    list.#size = items.length;
    return list;
  }

  get size(): number {
    return this.#size;
  }

  /** Inserts `item`; returns its rank when `withRank`, else 0. */
  insert(item: T, withRank = false): number {
    const chunks = this.#chunks;
    this.#size++;
    if (chunks.length === 0) {
      chunks.push([item]);
      return 0;
    }
    let c = this.#chunkFor(item);
    if (c === chunks.length) c--; // after every element: append to the last chunk
    const chunk = chunks[c];
    const at = lowerBound(chunk, item, this.#compare);
    chunk.splice(at, 0, item);
    const rank = withRank ? this.#rankOf(c, at) : 0;
    if (chunk.length > 2 * CHUNK) chunks.splice(c + 1, 0, chunk.splice(CHUNK));
    return rank;
  }

  /**
   * Removes `item` (the very object held). Returns its rank when `withRank` (else 0), or -1 when
   * it is not held. Searches linearly when `bySearch` is false or the order cannot find it (a
   * caller's comparator that is not a function of the stored elements alone).
   */
  remove(item: T, withRank = false, bySearch = true): number {
    const chunks = this.#chunks;
    const c = bySearch ? this.#chunkFor(item) : chunks.length;
    if (c < chunks.length) {
      const chunk = chunks[c];
      const at = lowerBound(chunk, item, this.#compare);
      if (chunk[at] === item) return this.#removeAt(c, at, withRank);
    }
    for (let i = 0; i < chunks.length; i++) {
      const at = chunks[i].indexOf(item);
      if (at >= 0) return this.#removeAt(i, at, withRank);
    }
    return -1;
  }

  /** Rank of the first element for which `before(element)` is false (`before` must be monotone). */
  rankWhere(before: (element: T) => boolean): number {
    const chunks = this.#chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid];
      if (before(chunk[chunk.length - 1])) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return this.#size;
    const chunk = chunks[lo];
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (before(chunk[mid])) a = mid + 1;
      else b = mid;
    }
    return this.#rankOf(lo, a);
  }

  /** Calls `fn` on the elements of ranks [from, to), in order. */
  forRange(from: number, to: number, fn: (element: T) => void): void {
    if (to > this.#size) to = this.#size;
    let rank = 0;
    for (const chunk of this.#chunks) {
      const end = rank + chunk.length;
      if (end > from) {
        const start = from > rank ? from - rank : 0;
        const stop = to < end ? to - rank : chunk.length;
        for (let i = start; i < stop; i++) fn(chunk[i]);
        if (to <= end) return;
      }
      rank = end;
    }
  }

  /** The first `limit` elements (all by default), in order, as a new array. */
  toArray(limit = Infinity): T[] {
    const out: T[] = [];
    for (const chunk of this.#chunks) {
      for (let i = 0; i < chunk.length; i++) {
        if (out.length >= limit) return out;
        out.push(chunk[i]);
      }
    }
    return out;
  }

  /** Index of the first chunk whose last element is not before `item` (chunks.length if none). */
  #chunkFor(item: T): number {
    const chunks = this.#chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid];
      if (this.#compare(chunk[chunk.length - 1], item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #removeAt(c: number, at: number, withRank: boolean): number {
    const rank = withRank ? this.#rankOf(c, at) : 0;
    const chunk = this.#chunks[c];
    chunk.splice(at, 1);
    this.#size--;
    if (chunk.length === 0) this.#chunks.splice(c, 1);
    return rank;
  }

  #rankOf(c: number, at: number): number {
    let rank = at;
    for (let i = 0; i < c; i++) rank += this.#chunks[i].length;
    return rank;
  }
}

function lowerBound<T>(chunk: T[], item: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(chunk[mid], item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
