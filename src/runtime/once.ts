/**
 * Something made once per process, such as the crypto suite probed at the first open, unless
 * making it failed: a failure (a chunk the network lost) is not kept, and the next caller tries
 * again instead of failing for the page's life.
 */
export function onceUnlessFailed<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((err) => {
      made = undefined;
      throw err;
    });
    return made;
  };
}
