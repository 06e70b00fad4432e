/**
 * The blocks a repository holds, in the order they were applied here: a causal order, so exports
 * replay cleanly. Held as their body and signature, which an export sends as they are; the commit
 * graph decodes history from the same bodies.
 */
import type { SealedBlock } from "../core/block.ts";
import type { Commit } from "../core/commit.ts";
import { blockCommitFromTuple, commitFromTuple, unpackBytes } from "../core/commit_codec.ts";
import type { VersionVector } from "./session_chains.ts";
import { causalOrder } from "./block_order.ts";
import { ByteArena } from "./byte_arena.ts";

/**
 * What the repository keeps of a block once it is applied: enough to export it, its body and
 * signature stored in the repository's byte arena (byte_arena.ts) and read as views of it, and
 * where each commit's encoding is in the body, so that the commit graph can hold history as these
 * bytes and decode a commit when a walk needs it (CommitGraph.keepEncoded).
 *
 * With a block per keystroke there are as many of these as edits, so its size counts: one object
 * of small integers, and for a block of one commit no array of offsets (X01h).
 */
export class HeldBlock {
  readonly session: string;
  readonly seq: number;
  /** Its commits' seqs, first to last: where a lost block's commits belong (block_order.ts). */
  readonly firstCommitSeq: number;
  readonly lastCommitSeq: number;
  readonly #chunk: Uint8Array;
  readonly #at: number;
  readonly #bodyLength: number;
  readonly #signatureLength: number;
  /** Whether the body has the version 1 layout. */
  readonly #legacy: boolean;
  /**
   * Where each commit starts in the body, then where the last one ends (a plain array: smaller
   * than a typed one); for a block of one commit ending with the body, where it starts; undefined
   * when not known (a body this process did not write or check).
   */
  readonly #commitsAt: number | number[] | undefined;

  constructor({ block, body, commitOffsets }: SealedBlock, arena: ByteArena) {
    const { session, seq, commits, signature } = block;
    this.session = session;
    this.seq = seq;
    this.firstCommitSeq = commits[0].seq;
    this.lastCommitSeq = commits[commits.length - 1].seq;
    const { chunk, at } = arena.store(body, signature);
    this.#chunk = chunk;
    this.#at = at;
    this.#bodyLength = body.length;
    this.#signatureLength = signature.length;
    this.#legacy = block.version === 1;
    this.#commitsAt = commitOffsets?.length === 2 && commitOffsets[1] === body.length
      ? commitOffsets[0]
      : commitOffsets && Array.from(commitOffsets);
  }

  /** Whether its commits can be decoded one by one (see decode). */
  get decodable(): boolean {
    return this.#commitsAt !== undefined;
  }

  /** The commit of this block with `seq`; only when decodable and the seqs have no gap. */
  decode(seq: number): Commit {
    const i = seq - this.firstCommitSeq;
    const at = this.#commitsAt!;
    const one = typeof at === "number";
    const tuple = unpackBytes(
      this.body,
      "commit",
      one ? at : at[i],
      one ? this.#bodyLength : at[i + 1],
    );
    return this.#legacy ? commitFromTuple(tuple) : blockCommitFromTuple(tuple, this.session);
  }

  get body(): Uint8Array {
    return this.#chunk.subarray(this.#at, this.#at + this.#bodyLength);
  }

  get signature(): Uint8Array {
    const start = this.#at + this.#bodyLength;
    return this.#chunk.subarray(start, start + this.#signatureLength);
  }
}

export class HeldBlocks {
  /** In a causal order, so each session's blocks in the order of their seqs (see since). */
  #blocks: HeldBlock[] = [];
  /** Every session some held block is of. */
  readonly #sessions = new Set<string>();
  readonly #arena = new ByteArena();
  /** False once a block lost to damage came back: it belongs earlier than the end of the list. */
  #inOrder = true;
  /** The parent ids of a commit, by its id (none for a commit not held). */
  readonly #parentsOf: (id: string) => readonly string[] | undefined;

  constructor(parentsOf: (id: string) => readonly string[] | undefined) {
    this.#parentsOf = parentsOf;
  }

  /** Adds a block just applied; `outOfOrder` when it filled a gap left by damage. */
  add(sealed: SealedBlock, outOfOrder: boolean): HeldBlock {
    const held = new HeldBlock(sealed, this.#arena);
    this.#blocks.push(held);
    this.#sessions.add(held.session);
    if (outOfOrder) this.#inOrder = false;
    return held;
  }

  /**
   * Puts blocks that came before every held one (a snapshot's history) in front of them; returns
   * them as held, in the same order.
   */
  addHistory(blocks: readonly SealedBlock[]): HeldBlock[] {
    const history = blocks.map((sealed) => new HeldBlock(sealed, this.#arena));
    for (const held of history) this.#sessions.add(held.session);
    // Not unshift(...history): a spread of that many arguments can overflow the stack.
    this.#blocks = history.concat(this.#blocks);
    return history;
  }

  /** The blocks a peer at `since` lacks, in a causal order. */
  since(since: VersionVector): HeldBlock[] {
    if (!this.#inOrder) {
      this.#blocks = causalOrder(this.#blocks, (held) => this.#parentsIn(held));
      this.#inOrder = true;
    }
    // From the newest back, until every session has reached a block the peer has: each
    // session's blocks are in the order of their seqs, so none before that one is lacking. A peer
    // nearly up to date costs the blocks it lacks (and those between them), not all that are
    // held: X02's replicas export to each other at every merge of the trace.
    const blocks = this.#blocks;
    const open = new Set(this.#sessions);
    const lacking: HeldBlock[] = [];
    for (let i = blocks.length - 1; i >= 0 && open.size > 0; i--) {
      const held = blocks[i];
      if (held.seq > (since[held.session] ?? 0)) lacking.push(held);
      else open.delete(held.session);
    }
    return lacking.reverse();
  }

  /** The parent ids of a held block's commits. */
  *#parentsIn(held: HeldBlock): Iterable<string> {
    for (let seq = held.firstCommitSeq; seq <= held.lastCommitSeq; seq++) {
      const parents = this.#parentsOf(`${held.session}.${seq}`);
      if (parents) yield* parents;
    }
  }
}
