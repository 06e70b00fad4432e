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

/** Which chunks hold some given elements (see `SortedList.chunksOf`). */
export type ChunkMarks = Uint8Array & { readonly __chunkMarks: true };

export class SortedList<T> {
  readonly #compare: (a: T, b: T) => number;
  #chunks: T[][] = [];
  #size = 0;
  /** Where `find` found its element (chunk, position), for `resettle`; -1 when nothing. */
  #c = -1;
  #at = 0;

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
    insertAt(chunk, at, item);
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
    if (!this.find(item, bySearch)) return -1;
    return this.#removeAt(this.#c, this.#at, withRank);
  }

  /**
   * Looks up `item` (the very object held) and remembers where it is, for `resettle`. Searches by
   * the order, then linearly when `bySearch` is false or the order cannot find it. False when the
   * item is not held.
   */
  find(item: T, bySearch = true): boolean {
    const chunks = this.#chunks;
    const c = bySearch ? this.#chunkFor(item) : chunks.length;
    if (c < chunks.length) {
      const chunk = chunks[c];
      // Within the chunk, looking for the very object beats a binary search: it reads one
      // contiguous array instead of ~7 elements scattered in memory, and calls no comparator.
      const at = chunk.indexOf(item);
      if (at >= 0) {
        this.#c = c;
        this.#at = at;
        return true;
      }
    }
    for (let i = 0; i < chunks.length; i++) {
      const at = chunks[i].indexOf(item);
      if (at >= 0) {
        this.#c = i;
        this.#at = at;
        return true;
      }
    }
    this.#c = -1;
    return false;
  }

  /**
   * Puts the element found by the last `find` where its order says it belongs now, after the
   * caller changed what the order reads of it (nothing else may change the list in between).
   * When it still sorts between its neighbours it stays where it is: no element moves. Returns,
   * when `withRank`, the lower of its old and new ranks (the first rank whose element may have
   * changed), else 0.
   */
  resettle(withRank = false): number {
    const c = this.#c;
    const at = this.#at;
    this.#c = -1;
    if (c < 0) throw new Error("SortedList.resettle without a successful find");
    const chunks = this.#chunks;
    const chunk = chunks[c];
    const item = chunk[at];
    const compare = this.#compare;
    let fits = true;
    if (at > 0) fits = compare(chunk[at - 1], item) < 0;
    else if (c > 0) {
      const before = chunks[c - 1];
      fits = compare(before[before.length - 1], item) < 0;
    }
    if (fits) {
      if (at + 1 < chunk.length) fits = compare(item, chunk[at + 1]) < 0;
      else if (c + 1 < chunks.length) fits = compare(item, chunks[c + 1][0]) < 0;
    }
    if (fits) return withRank ? this.#rankOf(c, at) : 0;
    const rank = this.#removeAt(c, at, withRank);
    const to = this.insert(item, withRank);
    return to < rank ? to : rank;
  }

  /**
   * Where the held `items` are now, for a `replace` that drops them: it then looks for drops in
   * their chunks only. Each is found by the order, so call this before changing what the order
   * reads of them, and change nothing else in the list until that `replace`.
   */
  chunksOf(items: readonly T[]): ChunkMarks {
    const marks = new Uint8Array(this.#chunks.length);
    for (let i = 0; i < items.length; i++) {
      if (this.find(items[i])) marks[this.#c] = 1;
    }
    this.#c = -1;
    return marks as ChunkMarks;
  }

  /**
   * Drops every element `drop` says to and adds `added` (sorted by this list's order), in one
   * pass over the list: for a batch of changes too large to place one by one. A chunk that loses
   * and gains nothing is kept as it is, so the pass costs one `drop` call per element plus the
   * work where the batch actually lands. With `dropsIn` (from `chunksOf` the elements to drop),
   * only those chunks are searched for drops: the rest of the list is not even read.
   */
  replace(drop: (item: T) => boolean, added: readonly T[], dropsIn?: ChunkMarks): void {
    const compare = this.#compare;
    const chunks: T[][] = [];
    let building: T[] = [];
    let next = 0;
    const put = (item: T) => {
      if (building.length === CHUNK) {
        chunks.push(building);
        building = [];
      }
      building.push(item);
    };
    const olds = this.#chunks;
    for (let c = 0; c < olds.length; c++) {
      const old = olds[c];
      const gains = next < added.length && compare(added[next], old[old.length - 1]) < 0;
      const loses = (dropsIn === undefined || dropsIn[c] === 1) && old.some(drop);
      if (!gains && !loses) {
        // Unchanged: joined to a short chunk being built, or kept as it is.
        if (building.length === 0) chunks.push(old);
        else if (building.length + old.length <= 2 * CHUNK) chunks.push(building.concat(old));
        else chunks.push(building, old);
        building = [];
        continue;
      }
      for (let i = 0; i < old.length; i++) {
        const item = old[i];
        if (loses && drop(item)) continue;
        while (next < added.length && compare(added[next], item) < 0) put(added[next++]);
        put(item);
      }
    }
    while (next < added.length) put(added[next++]);
    if (building.length > 0) chunks.push(building);
    this.#chunks = chunks;
    this.#size = chunks.reduce((total, chunk) => total + chunk.length, 0);
    this.#c = -1;
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
    removeAt(chunk, at);
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

/** `array.splice(at, 0, item)` without allocating the (empty) array of removed elements. */
function insertAt<T>(array: T[], at: number, item: T): void {
  let i = array.length;
  if (i === at) {
    array.push(item);
    return;
  }
  array.push(array[i - 1]);
  for (i--; i > at; i--) array[i] = array[i - 1];
  array[at] = item;
}

/** `array.splice(at, 1)` without allocating the array of removed elements. */
function removeAt<T>(array: T[], at: number): void {
  const last = array.length - 1;
  for (let i = at; i < last; i++) array[i] = array[i + 1];
  array.pop();
}
