/**
 * The part of the Web Locks API (`navigator.locks`) the tabs use, declared here so the key pool
 * and the election run on fake locks in tests, and `holdLock`, which turns a lock held for as long
 * as a callback's promise is pending into an object with a `release()`.
 */

export interface LockOptions {
  /** Fail at once (the callback gets null) instead of waiting when the lock is held. */
  ifAvailable?: boolean;
  /** Take the lock from its holder, whose request then rejects (an AbortError). */
  steal?: boolean;
}

/** `navigator.locks`, as far as Cairn uses it. */
export interface LockManagerLike {
  request(
    name: string,
    options: LockOptions,
    callback: (lock: unknown) => Promise<unknown>,
  ): Promise<unknown>;
}

/** A lock this tab holds until `release()`, or until another tab steals it (`lost`). */
export interface HeldLock {
  readonly name: string;
  /** Resolves when the lock is gone without `release()`: stolen (or the request failed). */
  readonly lost: Promise<void>;
  release(): void;
}

/**
 * Requests `name` and keeps it until `release()`. Resolves with the held lock, or with undefined
 * when `ifAvailable` was asked and another tab holds it.
 */
export function holdLock(
  locks: LockManagerLike,
  name: string,
  options: LockOptions = {},
): Promise<HeldLock | undefined> {
  return new Promise((resolveHeld, rejectHeld) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    let granted = false;
    let released = false;
    const lost = locks.request(name, options, (lock) => {
      if (lock === null) {
        resolveHeld(undefined);
        return Promise.resolve();
      }
      granted = true;
      resolveHeld({
        name,
        lost: lost,
        release: () => {
          released = true;
          release();
        },
      });
      return held;
    }).then(
      () => {
        if (!granted) resolveHeld(undefined);
        // The callback's promise settled: released by us, never lost.
        return released ? new Promise<void>(() => {}) : undefined;
      },
      (err) => {
        if (!granted) rejectHeld(err);
      },
    ) as Promise<void>;
  });
}
