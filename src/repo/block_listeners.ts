/**
 * Who is told about blocks entering a repository: a sync client pushes what was sealed here or
 * imported from elsewhere, and must not echo back what its own server sent; a leading tab sends
 * them to the other tabs.
 *
 * In a repository with storage they are told only once its storage holds the block, in the order
 * the blocks entered. A block sent on before that could outlive its loss here in a crash; the
 * session that sealed it (this one, or a tab of this database) would then seal a different block
 * at the same place of its chain on the next open: a fork, which every holder of the first
 * refuses for good.
 */
import { encodeBlockPayload, type SealedBlock } from "../core/block.ts";

/** The origin of the blocks sealed by the repository itself. */
export const SEALED_HERE = "sealed-here";

/** A block that has just entered a repository (applied and recorded). */
export interface EnteredBlock {
  readonly session: string;
  readonly seq: number;
  /** SEALED_HERE, or the origin given to importBlocks (undefined when it was given none). */
  readonly origin: unknown;
  /** Its encoded bytes (exportBlocks' form): those imported as they came, or encoded once. */
  bytes(): Uint8Array;
}

export type BlockListener = (block: EnteredBlock) => void;

interface Entry {
  sealed: SealedBlock;
  origin: unknown;
  frame: Uint8Array | undefined;
}

export class BlockListeners {
  #listeners: readonly BlockListener[] = [];
  /** Blocks entered whose write to storage has not yet ended well, oldest first. */
  #unstored: Entry[] = [];

  add(listener: BlockListener): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => this.#listeners = this.#listeners.filter((other) => other !== listener);
  }

  /**
   * A block has entered (applied and recorded); `frame` is its bytes when they are at hand (an
   * import). Listeners hear of it once `stored`, its write to storage, resolves — at once without
   * storage (`stored` undefined). A failed write leaves the block queued in the log, which writes
   * it before any later block: the next write that succeeds, or `allStored`, tells of it.
   */
  entered(
    sealed: SealedBlock,
    origin: unknown,
    frame: Uint8Array | undefined,
    stored: Promise<void> | undefined,
  ): void {
    const entry = { sealed, origin, frame };
    if (stored === undefined) {
      this.#tell(entry);
      return;
    }
    this.#unstored.push(entry);
    stored.then(() => this.#tellThrough(entry), () => {});
  }

  /** Every block entered so far is stored (a flush succeeded): tells of those still waiting. */
  allStored(): void {
    const last = this.#unstored.at(-1);
    if (last) this.#tellThrough(last);
  }

  /** Tells of `entry` and every block that entered before it and is still untold. */
  #tellThrough(entry: Entry): void {
    const at = this.#unstored.indexOf(entry);
    if (at === -1) return; // told already, by a later write or a flush
    for (const told of this.#unstored.splice(0, at + 1)) this.#tell(told);
  }

  #tell({ sealed, origin, frame }: Entry): void {
    const listeners = this.#listeners;
    if (listeners.length === 0) return;
    let bytes = frame;
    const entered: EnteredBlock = {
      session: sealed.block.session,
      seq: sealed.block.seq,
      origin,
      bytes: () => bytes ??= encodeBlockPayload(sealed.body, sealed.block.signature),
    };
    // A throwing listener must not stop the others, nor undo a block already applied.
    for (const listener of listeners) {
      try {
        listener(entered);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
