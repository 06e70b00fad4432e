/**
 * Checks a replay plan (bench/lib/replay_plan.ts) without any text engine: replicas are sets of
 * transactions, and every transaction must be applied on a replica holding exactly its history.
 */
import assert from "node:assert/strict";
import type { ReplayPlan } from "../../bench/lib/replay_plan.ts";

/**
 * Runs a plan on replicas that are sets of transactions, checking that every transaction is
 * applied on a replica holding exactly its history (its ancestors), and that the final replica
 * holds them all.
 */
export function checkPlan(
  txns: readonly { parents: readonly number[] }[],
  plan: ReplayPlan,
): void {
  const ancestors: Set<number>[] = [];
  for (const [i, txn] of txns.entries()) {
    const set = new Set<number>();
    for (const p of txn.parents) for (const a of [...ancestors[p], p]) set.add(a);
    ancestors[i] = set;
  }
  const replicas: Set<number>[] = [];
  for (const step of plan.steps) {
    if (step.op === "create" || step.op === "join") {
      assert.equal(replicas[step.replica], undefined, "a replica is made once");
      replicas[step.replica] = new Set();
    } else if (step.op === "sync") {
      for (const t of replicas[step.from]) replicas[step.to].add(t);
    } else {
      const held = replicas[step.replica];
      assert.deepEqual(
        [...held].sort((a, b) => a - b),
        [...ancestors[step.txn]].sort((a, b) => a - b),
        `transaction ${step.txn} is applied on a replica holding exactly its history`,
      );
      held.add(step.txn);
    }
  }
  assert.equal(replicas.length, plan.replicas);
  assert.equal(replicas[plan.final].size, txns.length, "the final replica holds everything");
}
