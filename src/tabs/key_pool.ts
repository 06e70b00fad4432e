/**
 * Which session key a tab signs with. A stored database keeps a pool of session secrets in its
 * settings; each tab claims one for its whole life with a Web Lock named after the database and
 * the key's place in the pool, so two tabs never seal blocks for one key (that would fork its
 * chain). A tab takes the first free key and adds one only when every key is held: the pool grows
 * with the most tabs open at once, not with reloads (a reloaded page finds its old key free once
 * the old page's lock is gone).
 */
import { type HeldLock, holdLock, type LockManagerLike } from "./locks.ts";

/** The lock that claims key `index` of the pool of the database at `directory`. */
export function poolKeyLockName(directory: string, index: number): string {
  return `cairn:session-key:${directory}:${index}`;
}

export interface ClaimedKey {
  /** The key's place in the pool; `index >= poolSize` means a key that must be added. */
  readonly index: number;
  /** True when the pool holds no key at `index` yet: the caller generates it and stores it. */
  readonly isNew: boolean;
  readonly lock: HeldLock;
}

/**
 * Claims the first key of a pool of `poolSize` keys whose lock is free, or the first place past
 * the pool's end that no other tab is claiming (two tabs growing the pool at once get different
 * places).
 */
export async function claimPoolKey(
  locks: LockManagerLike,
  directory: string,
  poolSize: number,
): Promise<ClaimedKey> {
  for (let index = 0;; index++) {
    const lock = await holdLock(locks, poolKeyLockName(directory, index), { ifAvailable: true });
    if (lock) return { index, isNew: index >= poolSize, lock };
  }
}
