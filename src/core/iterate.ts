/**
 * A plain iterator object over a step function: where a generator per layer of delegation costs
 * more than the work of each step (listing a repository's keys), one object does the stepping.
 */

/** An iterator over what `next` returns until it returns undefined. */
export function iteratorOf<T>(next: () => T | undefined): IterableIterator<T> {
  return {
    next(): IteratorResult<T> {
      const value = next();
      return value === undefined ? { done: true, value: undefined } : { done: false, value };
    },
    [Symbol.iterator]() {
      return this;
    },
  };
}
