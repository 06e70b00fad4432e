/**
 * A causal order of held blocks: each block after the previous block of its chain and after the
 * blocks holding its commits' parents, so a peer can import them in that order. A repository
 * keeps its blocks in the order they were applied, which is causal — until a block lost to
 * damage comes back and fills a gap: it belongs before blocks that were applied long ago.
 * Sorting is then done once (a depth-first walk, iterative: chains are long), keeping the
 * existing order wherever causality allows.
 */
import { parseCommitId } from "../core/commit.ts";

/** What the order needs to know of a block. */
export interface OrderedBlock {
  readonly session: string;
  readonly seq: number;
  readonly firstCommitSeq: number;
  readonly lastCommitSeq: number;
}

/**
 * `blocks` in a causal order. `parentsOf` gives the parent ids of a block's commits; parents in
 * no held block (lost, or older than what is held) are not waited for.
 */
export function causalOrder<B extends OrderedBlock>(
  blocks: readonly B[],
  parentsOf: (block: B) => Iterable<string>,
): B[] {
  const chains = chainsBySession(blocks);
  const dependencies = (block: B): B[] => {
    const chain = chains.get(block.session)!;
    const at = indexBy(chain, (held) => held.seq, block.seq);
    const found = at > 0 ? [chain[at - 1]] : [];
    for (const id of parentsOf(block)) {
      const parent = parseCommitId(id);
      const held = parent && chains.get(parent.session);
      if (!held) continue;
      const i = indexBy(held, (b) => b.firstCommitSeq, parent!.seq);
      if (i >= 0 && held[i] !== block && parent!.seq <= held[i].lastCommitSeq) found.push(held[i]);
    }
    return found;
  };

  const placed = new Set<B>();
  const ordered: B[] = [];
  for (const start of blocks) {
    if (placed.has(start)) continue;
    const stack = [{ block: start, waitFor: dependencies(start), next: 0 }];
    const open = new Set([start]);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.next < top.waitFor.length) {
        const dependency = top.waitFor[top.next++];
        // `open` guards against a cycle, which checked blocks cannot form (parents are older).
        if (placed.has(dependency) || open.has(dependency)) continue;
        open.add(dependency);
        stack.push({ block: dependency, waitFor: dependencies(dependency), next: 0 });
      } else {
        stack.pop();
        open.delete(top.block);
        placed.add(top.block);
        ordered.push(top.block);
      }
    }
  }
  return ordered;
}

/** Each session's blocks, sorted by seq (and so by commit seq). */
function chainsBySession<B extends OrderedBlock>(blocks: readonly B[]): Map<string, B[]> {
  const chains = new Map<string, B[]>();
  for (const block of blocks) {
    const chain = chains.get(block.session);
    if (chain) chain.push(block);
    else chains.set(block.session, [block]);
  }
  for (const chain of chains.values()) chain.sort((a, b) => a.seq - b.seq);
  return chains;
}

/** The index of the last element whose `key` is at most `value` (-1 if none): binary search. */
function indexBy<B>(sorted: readonly B[], key: (b: B) => number, value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (key(sorted[mid]) <= value) {
      found = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}
