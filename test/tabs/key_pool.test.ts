/**
 * The session key pool on fake Web Locks: tabs open at once get different keys, the pool grows
 * only when every key is held, and a reload (the old page's locks released) reuses a key.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { claimPoolKey, poolKeyLockName } from "../../src/tabs/key_pool.ts";
import { FakeLocks } from "../harness/fake_locks.ts";

test("tabs open at once claim different keys, taking free pool keys before adding any", async () => {
  const locks = new FakeLocks();
  const claims = await Promise.all(
    ["a", "b", "c"].map((tab) => claimPoolKey(locks.forTab(tab), "cairn/db", 2)),
  );
  assert.deepEqual(claims.map((c) => c.index).sort(), [0, 1, 2]);
  assert.deepEqual(
    claims.map((c) => [c.index, c.isNew]).sort(),
    [[0, false], [1, false], [2, true]],
  );
  assert.equal(locks.holder(poolKeyLockName("cairn/db", 0)) !== undefined, true);
});

test("a reloaded tab reuses its key once the old page's lock is released", async () => {
  const locks = new FakeLocks();
  const first = await claimPoolKey(locks.forTab("page-1"), "cairn/db", 0);
  assert.deepEqual([first.index, first.isNew], [0, true]);
  const other = await claimPoolKey(locks.forTab("other"), "cairn/db", 1);
  assert.deepEqual([other.index, other.isNew], [1, true]);
  // Reload: the old page is gone (its locks released), the new one claims with a pool of 2.
  locks.crash("page-1");
  const reloaded = await claimPoolKey(locks.forTab("page-1-reloaded"), "cairn/db", 2);
  assert.deepEqual([reloaded.index, reloaded.isNew], [0, false]);
  // Released by hand, as on close: the key is free again.
  reloaded.lock.release();
  await Promise.resolve();
  const again = await claimPoolKey(locks.forTab("page-2"), "cairn/db", 2);
  assert.deepEqual([again.index, again.isNew], [0, false]);
});

test("many reloads never grow the pool past the most tabs open at once", async () => {
  const locks = new FakeLocks();
  let poolSize = 0;
  for (let reload = 0; reload < 20; reload++) {
    const tabs = [`x${reload}`, `y${reload}`];
    for (const tab of tabs) {
      const claim = await claimPoolKey(locks.forTab(tab), "cairn/db", poolSize);
      if (claim.isNew) poolSize = claim.index + 1;
    }
    for (const tab of tabs) locks.crash(tab);
  }
  assert.equal(poolSize, 2);
});

test("pools of different databases are independent", async () => {
  const locks = new FakeLocks();
  const a = await claimPoolKey(locks.forTab("t1"), "cairn/a", 1);
  const b = await claimPoolKey(locks.forTab("t2"), "cairn/b", 1);
  assert.deepEqual([a.index, b.index], [0, 0]);
});
