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

/**
 * Refusals that may pass with time, so their blocks are sent again after a delay (client.ts):
 * the server failed to store the block (E_IO), its clock is behind the block's stamps
 * (E_CLOCK_AHEAD, block_verifier.ts), or a block before it in its chain is not there yet
 * (E_CHAIN_GAP: one refused just before, say; see #mayFillGap). Dropped, the block would be
 * lost to the server, and its chain broken there.
 */
const RETRIED: ReadonlySet<string> = new Set(["E_IO", "E_CLOCK_AHEAD", "E_CHAIN_GAP"]);

/** Why a refused block is kept: to send again after a delay, or once writing is granted. */
type HeldFor = "retry" | "right";

function heldFor(code: string): HeldFor | undefined {
  if (RETRIED.has(code)) return "retry";
  return code === "E_FORBIDDEN" ? "right" : undefined;
}

export class PushQueue {
  /** By `session/seq`, in push order. */
  #blocks = new Map<string, OutgoingBlock>();
  /** Pushes sent on the current socket and not yet acknowledged, by push id. */
  readonly #inFlight = new Map<number, readonly OutgoingBlock[]>();
  readonly #sent = new Set<OutgoingBlock>();
  /**
   * Refused for a reason that may pass, and held from being sent again on this socket until
   * `resend(reason)`: those to retry after a delay or with the next push of new blocks, those
   * whose author may not write (E_FORBIDDEN) when the right is granted.
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
   * queued: one to retry (RETRIED) is sent again after a delay or with the next push of new
   * blocks (not at once: a failing disk would be asked again and again), one whose author may
   * not write (E_FORBIDDEN) once the right may have changed (a grant); all on a new socket.
   * Refusals are taken in the push's order, so a gap knows whether what it follows is held.
   */
  settle(
    id: number,
    rejected: readonly { index: number; code: string; message: string }[],
  ): Refused[] {
    const blocks = this.#inFlight.get(id) ?? [];
    this.#inFlight.delete(id);
    const refused: Refused[] = [];
    const settling = new Set(blocks);
    for (const { index, code, message } of [...rejected].sort((a, b) => a.index - b.index)) {
      const block = blocks[index];
      if (!block) continue;
      refused.push({ block, code, message });
      const reason = heldFor(code);
      if (reason && (code !== "E_CHAIN_GAP" || this.#mayFillGap(block, settling))) {
        this.#held.set(block, reason);
      }
    }
    // (A block in a push is never held already: it was sent again, so resend() let it go.)
    for (const block of blocks) if (!this.#held.has(block)) this.drop(block);
    return refused;
  }

  /**
   * Whether a block before `block` in its chain may still reach the server, so that the gap it
   * was refused for may close: one queued, and either not in the push being settled or held
   * from it. A gap behind a block refused for good (a fork, say) never closes.
   */
  #mayFillGap(block: OutgoingBlock, settling: ReadonlySet<OutgoingBlock>): boolean {
    for (const before of this.#blocks.values()) {
      if (before.session !== block.session || before.seq >= block.seq) continue;
      if (!settling.has(before) || this.#held.has(before)) return true;
    }
    return false;
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

  /** Blocks held for `reason` are to send again (see #held). */
  resend(reason: HeldFor): void {
    for (const [block, heldAs] of this.#held) {
      if (heldAs !== reason) continue;
      this.#sent.delete(block);
      this.#held.delete(block);
    }
  }

  /** Whether `block` waits for the right to write (refused E_FORBIDDEN on this socket). */
  waitsForRight(block: OutgoingBlock): boolean {
    return this.#held.get(block) === "right";
  }

  /** Whether a block refused on this socket waits to be sent again after a delay. */
  get waitsForRetry(): boolean {
    for (const reason of this.#held.values()) if (reason === "retry") return true;
    return false;
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
