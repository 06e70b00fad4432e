/**
 * Bytes a repository keeps for as long as it is open — the body and signature of every block it
 * holds — packed into shared chunks. Kept as typed arrays of their own, each costs about 280 bytes
 * of objects on top of its bytes (an ArrayBuffer, its backing store, the view): with a block per
 * keystroke that was three times the block itself (seph-blog1 typed at a human pace: ~1 KB of
 * heap per block). Chunks grow from 4 KiB to 1 MiB, so a repository of a few blocks stays small.
 */
const FIRST_CHUNK_BYTES = 4 * 1024;
const LARGEST_CHUNK_BYTES = 1024 * 1024;
/** Bytes stored together larger than this get a chunk of their own (a chunk wastes less). */
const OWN_CHUNK_BYTES = LARGEST_CHUNK_BYTES / 8;

/** Where bytes were stored: their chunk and where in it they start. */
export interface ArenaPlace {
  readonly chunk: Uint8Array;
  readonly at: number;
}

export class ByteArena {
  #chunk = new Uint8Array(0);
  #used = 0;

  /** Copies `first` and then `second` in, one after the other; returns where they start. */
  store(first: Uint8Array, second: Uint8Array): ArenaPlace {
    const length = first.length + second.length;
    if (length > OWN_CHUNK_BYTES) {
      return { chunk: joined(first, second, new Uint8Array(length)), at: 0 };
    }
    if (this.#used + length > this.#chunk.length) {
      let size = Math.min(LARGEST_CHUNK_BYTES, Math.max(FIRST_CHUNK_BYTES, this.#chunk.length * 2));
      while (size < length) size *= 2;
      this.#chunk = new Uint8Array(size);
      this.#used = 0;
    }
    const at = this.#used;
    joined(first, second, this.#chunk.subarray(at, at + length));
    this.#used += length;
    return { chunk: this.#chunk, at };
  }
}

function joined(first: Uint8Array, second: Uint8Array, into: Uint8Array): Uint8Array {
  into.set(first);
  into.set(second, first.length);
  return into;
}
