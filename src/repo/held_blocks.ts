/**
 * The blocks a repository holds, in the order they were applied here: a causal order, so exports
 * replay cleanly. Held as their body and signature, which an export sends as they are; the commit
 * graph decodes history from the same bodies.
 */
import type { SealedBlock } from "../core/block.ts";
import type { VersionVector } from "./session_chains.ts";
import { causalOrder } from "./block_order.ts";

/** What the repository keeps of a block once it is applied: enough to export it. */
export interface HeldBlock {
  readonly session: string;
  readonly seq: number;
  /** Its commits' seqs, first to last: where a lost block's commits belong (block_order.ts). */
  readonly firstCommitSeq: number;
  readonly lastCommitSeq: number;
  readonly body: Uint8Array;
  readonly signature: Uint8Array;
}

export class HeldBlocks {
  #blocks: HeldBlock[] = [];
  /** False once a block lost to damage came back: it belongs earlier than the end of the list. */
  #inOrder = true;
  /** The parent ids of a commit, by its id (none for a commit not held). */
  readonly #parentsOf: (id: string) => readonly string[] | undefined;

  constructor(parentsOf: (id: string) => readonly string[] | undefined) {
    this.#parentsOf = parentsOf;
  }

  /** Adds a block just applied; `outOfOrder` when it filled a gap left by damage. */
  add(sealed: SealedBlock, outOfOrder: boolean): void {
    this.#blocks.push(heldBlock(sealed));
    if (outOfOrder) this.#inOrder = false;
  }

  /** Puts blocks that came before every held one (a snapshot's history) in front of them. */
  addHistory(blocks: readonly SealedBlock[]): void {
    // Not unshift(...blocks): a spread of that many arguments can overflow the stack.
    this.#blocks = blocks.map(heldBlock).concat(this.#blocks);
  }

  /** The blocks a peer at `since` lacks, in a causal order. */
  since(since: VersionVector): HeldBlock[] {
    if (!this.#inOrder) {
      this.#blocks = causalOrder(this.#blocks, (held) => this.#parentsIn(held));
      this.#inOrder = true;
    }
    return this.#blocks.filter((held) => held.seq > (since[held.session] ?? 0));
  }

  /** The parent ids of a held block's commits. */
  *#parentsIn(held: HeldBlock): Iterable<string> {
    for (let seq = held.firstCommitSeq; seq <= held.lastCommitSeq; seq++) {
      const parents = this.#parentsOf(`${held.session}.${seq}`);
      if (parents) yield* parents;
    }
  }
}

function heldBlock({ block, body }: SealedBlock): HeldBlock {
  const { session, seq, commits, signature } = block;
  const firstCommitSeq = commits[0].seq;
  const lastCommitSeq = commits[commits.length - 1].seq;
  return { session, seq, firstCommitSeq, lastCommitSeq, body, signature };
}
