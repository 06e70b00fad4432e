/**
 * A repository's blocks that its server has not acknowledged, in the order they entered (a
 * causal order). Each is kept until an ack settles it, however many sockets that takes; a block
 * is known by its place in its chain, so one that comes again (from an export) is kept once.
 */
import type { VersionVector } from "../repo/repository.ts";

export interface OutgoingBlock {
  readonly session: string;
  readonly seq: number;
  readonly bytes: Uint8Array;
  /** Set once acknowledged, refused or dropped: nothing more will be done with it. */
  done: boolean;
}

/** A block the server refused, with its reason. */
export interface Refused {
  readonly block: OutgoingBlock;
  readonly code: string;
  readonly message: string;
}

/** The refusals that may pass (see PushQueue.settle). */
type HeldFor = "E_IO" | "E_FORBIDDEN";

export class PushQueue {
  /** By `session/seq`, in push order. */
  #blocks = new Map<string, OutgoingBlock>();
  /** Pushes sent on the current socket and not yet acknowledged, by push id. */
  readonly #inFlight = new Map<number, readonly OutgoingBlock[]>();
  readonly #sent = new Set<OutgoingBlock>();
  /**
   * Refused for a reason that may pass, by that refusal's code, and held from being sent again
   * on this socket until `resend(code)`: E_IO (the server failed to store them) with the next
   * push of new blocks, E_FORBIDDEN (their author may not write) when the right is granted.
   */
  readonly #held = new Map<OutgoingBlock, HeldFor>();

  get size(): number {
    return this.#blocks.size;
  }

  /** Every block not yet settled, in order. */
  blocks(): OutgoingBlock[] {
    return [...this.#blocks.values()];
  }

  add(session: string, seq: number, bytes: Uint8Array): void {
    const key = `${session}/${seq}`;
    if (!this.#blocks.has(key)) this.#blocks.set(key, { session, seq, bytes, done: false });
  }

  /** Blocks not in a push on the current socket, in order. */
  unsent(): OutgoingBlock[] {
    return this.blocks().filter((block) => !this.#sent.has(block));
  }

  sent(id: number, blocks: readonly OutgoingBlock[]): void {
    this.#inFlight.set(id, blocks);
    for (const block of blocks) this.#sent.add(block);
  }

  /** Whether push `id` is in flight on the current socket. */
  has(id: number): boolean {
    return this.#inFlight.has(id);
  }

  /**
   * Settles push `id` by its ack; returns the blocks refused (`rejected` names them by index in
   * the push). Each block is done, but for those refused for a reason that may pass, which stay
   * queued: one the server failed to store (E_IO) is sent again with the next push of new blocks
   * (not at once: a failing disk would be asked again and again), one whose author may not write
   * (E_FORBIDDEN) once the right may have changed (a grant); both on a new socket.
   */
  settle(
    id: number,
    rejected: readonly { index: number; code: string; message: string }[],
  ): Refused[] {
    const blocks = this.#inFlight.get(id) ?? [];
    this.#inFlight.delete(id);
    const refused: Refused[] = [];
    for (const { index, code, message } of rejected) {
      const block = blocks[index];
      if (!block) continue;
      refused.push({ block, code, message });
      if (code === "E_IO" || code === "E_FORBIDDEN") this.#held.set(block, code);
    }
    // (A block in a push is never held already: it was sent again, so resend() let it go.)
    for (const block of blocks) if (!this.#held.has(block)) this.drop(block);
    return refused;
  }

  /** Forgets a block: settled, or one that cannot be sent. */
  drop(block: OutgoingBlock): void {
    block.done = true;
    this.#sent.delete(block);
    this.#held.delete(block);
    this.#blocks.delete(`${block.session}/${block.seq}`);
  }

  /** A new socket: nothing is in flight any more, all is to send again. */
  unsendAll(): void {
    this.#inFlight.clear();
    this.#sent.clear();
    this.#held.clear();
  }

  /** Blocks held for `code` are to send again (see #held). */
  resend(code: HeldFor): void {
    for (const [block, heldFor] of this.#held) {
      if (heldFor !== code) continue;
      this.#sent.delete(block);
      this.#held.delete(block);
    }
  }

  /** Whether `block` waits for the right to write (refused E_FORBIDDEN on this socket). */
  waitsForRight(block: OutgoingBlock): boolean {
    return this.#held.get(block) === "E_FORBIDDEN";
  }

  /**
   * The server said what it holds (its version vector) and which blocks it lacks (`missing`, an
   * export since that vector, in causal order): blocks it holds are settled, and the queue
   * becomes the missing blocks in their order, then any left (not known to be missing).
   */
  adoptServerState(
    held: VersionVector,
    missing: readonly { session: string; seq: number; bytes: Uint8Array }[],
  ): void {
    for (const block of this.#blocks.values()) {
      if (block.seq <= (held[block.session] ?? 0)) this.drop(block);
    }
    const before = this.#blocks;
    this.#blocks = new Map();
    for (const { session, seq, bytes } of missing) {
      const key = `${session}/${seq}`;
      this.#blocks.set(key, before.get(key) ?? { session, seq, bytes, done: false });
    }
    for (const [key, block] of before) if (!this.#blocks.has(key)) this.#blocks.set(key, block);
  }
}
