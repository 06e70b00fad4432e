/**
 * Who is told about blocks entering a repository: a sync client pushes what was sealed here or
 * imported from elsewhere, and must not echo back what its own server sent.
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

export class BlockListeners {
  #listeners: readonly BlockListener[] = [];

  add(listener: BlockListener): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => this.#listeners = this.#listeners.filter((other) => other !== listener);
  }

  /** Tells every listener; `frame` is the block's bytes when they are at hand (an import). */
  emit(sealed: SealedBlock, origin: unknown, frame?: Uint8Array): void {
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
