/**
 * How to replay a concurrent trace with a few replicas, worked out once from the transactions'
 * parents so that every engine does exactly the same steps. A transaction must be applied to a
 * replica holding exactly its parents' merged history — no more (positions would be off), no
 * less. So a replica follows one branch; where a branch forks, another replica is brought to the
 * fork point; where branches merge, the replica continuing takes in the other's history. A
 * replica bringing itself up to date takes a peer's messages (Cairn: blocks; Yjs: an update;
 * Automerge: changes), as a transport would carry them.
 *
 * Histories are compared by version vector per agent, which needs each agent's transactions to
 * form one chain (each one seeing the agent's previous one); the plan checks that.
 */

export type Step =
  /** A new replica creates the document (an empty text): the trace's first transaction's. */
  | { op: "create"; replica: number }
  /** A new replica, holding nothing yet. */
  | { op: "join"; replica: number }
  /** `to` takes in everything `from` holds that it lacks. */
  | { op: "sync"; from: number; to: number }
  /** Transaction `txn` applied on `replica`, as one transaction of the engine. */
  | { op: "edit"; replica: number; txn: number };

export interface ReplayPlan {
  steps: Step[];
  replicas: number;
  syncs: number;
  /** The replica holding every transaction once the steps are done. */
  final: number;
}

interface PlanTxn {
  parents: readonly number[];
  agent: number;
}

type Vector = Map<number, number>;

/** Whether history `a` is contained in history `b`. */
function within(a: Vector, b: Vector): boolean {
  for (const [agent, last] of a) if ((b.get(agent) ?? -1) < last) return false;
  return true;
}

function size(v: Vector): number {
  let sum = 0;
  for (const last of v.values()) sum += last + 1;
  return sum;
}

export function replayPlan(txns: readonly PlanTxn[]): ReplayPlan {
  const children = new Array<number>(txns.length).fill(0);
  for (const txn of txns) for (const p of txn.parents) children[p]++;
  /** Each transaction's history: per agent, the last of its transactions it includes. */
  const histories: Vector[] = [];
  const lastOfAgent = new Map<number, number>();
  /** Transactions whose children are still to come → the replica holding exactly their history. */
  const holder = new Map<number, number>();
  /** Per replica, the transaction whose history it holds (-1: nothing yet). */
  const heads: number[] = [];
  const steps: Step[] = [];
  let syncs = 0;
  const held = (replica: number): Vector =>
    heads[replica] < 0 ? new Map() : histories[heads[replica]];

  for (const [i, txn] of txns.entries()) {
    const history: Vector = new Map();
    for (const p of txn.parents) {
      for (const [agent, last] of histories[p]) {
        history.set(agent, Math.max(history.get(agent) ?? -1, last));
      }
    }
    const previous = lastOfAgent.get(txn.agent) ?? -1;
    if ((history.get(txn.agent) ?? -1) !== previous) {
      throw new Error(`transaction ${i} does not follow agent ${txn.agent}'s previous one`);
    }
    let replica: number;
    if (txn.parents.length === 0) {
      if (heads.length > 0) throw new Error(`transaction ${i} starts a second document`);
      replica = heads.push(-1) - 1;
      steps.push({ op: "create", replica });
    } else {
      // Continue on a parent's replica when no other child needs its state any more.
      const first = txn.parents.find((p) => children[p] === 1) ?? txn.parents[0];
      if (children[first] === 1) replica = holder.get(first)!;
      else {
        // Otherwise bring the fullest replica nobody needs, holding part of that parent's
        // history only, up to it; or a new one.
        const busy = new Set(holder.values());
        let best = -1;
        for (let r = 0; r < heads.length; r++) {
          if (busy.has(r) || !within(held(r), histories[first])) continue;
          if (best < 0 || size(held(r)) > size(held(best))) best = r;
        }
        if (best < 0) {
          best = heads.push(-1) - 1;
          steps.push({ op: "join", replica: best });
        }
        replica = best;
        steps.push({ op: "sync", from: holder.get(first)!, to: replica });
        syncs++;
      }
      for (const p of txn.parents) {
        if (p === first) continue;
        steps.push({ op: "sync", from: holder.get(p)!, to: replica });
        syncs++;
      }
    }
    steps.push({ op: "edit", replica, txn: i });
    for (const p of txn.parents) if (--children[p] === 0) holder.delete(p);
    history.set(txn.agent, i);
    histories.push(history);
    lastOfAgent.set(txn.agent, i);
    heads[replica] = i;
    if (children[i] > 0) holder.set(i, replica);
  }
  // The branches still open (a prefix of a trace can end with several) merge into one replica.
  const ends = heads.flatMap((head, r) => (head >= 0 && children[head] === 0 ? [r] : []));
  const final = heads.indexOf(txns.length - 1);
  for (const r of ends) {
    if (r === final) continue;
    steps.push({ op: "sync", from: r, to: final });
    syncs++;
  }
  return { steps, replicas: heads.length, syncs, final };
}
