/** A binary max-heap of commits by stamp (hlc, session, seq): walks history newest first. */
import type { Commit } from "../core/commit.ts";
import { compareStamps } from "../core/merge/types.ts";

export class StampHeap {
  readonly #items: Commit[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(commit: Commit): void {
    const items = this.#items;
    items.push(commit);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareStamps(items[parent], items[i]) >= 0) break;
      [items[parent], items[i]] = [items[i], items[parent]];
      i = parent;
    }
  }

  /** Removes and returns the commit with the greatest stamp. */
  pop(): Commit | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < items.length && compareStamps(items[left], items[largest]) > 0) largest = left;
      if (right < items.length && compareStamps(items[right], items[largest]) > 0) largest = right;
      if (largest === i) return top;
      [items[largest], items[i]] = [items[i], items[largest]];
      i = largest;
    }
  }
}
