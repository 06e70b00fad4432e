/**
 * A repository's blocks by position, held in memory by the files store: what catch-up reads.
 * Positions are 1, 2, 3, … in the order blocks were placed. Per session it keeps the blocks'
 * seqs and positions, so a version vector's catch-up walks only what the peer lacks, and per
 * writer the position of its first block, so a reconnect is sent only the writers added since.
 */
import type { VersionVector } from "../../repo/repository.ts";
import type { PlacedBlock, Writer } from "./store.ts";

interface SessionBlocks {
  /** Ascending: a session's blocks are placed in chain order. */
  readonly seqs: number[];
  readonly positions: number[];
}

export class BlockIndex {
  /** Block bytes; position p is at p - 1. */
  readonly #blocks: Uint8Array[] = [];
  readonly #sessions = new Map<string, SessionBlocks>();
  readonly #writers: Writer[] = [];

  get head(): number {
    return this.#blocks.length;
  }

  has(session: string, seq: number): boolean {
    const blocks = this.#sessions.get(session);
    return blocks !== undefined && blocks.seqs[firstAbove(blocks.seqs, seq - 1)] === seq;
  }

  /** Whether a block of this session is placed already (its first block made it a writer). */
  hasSession(session: string): boolean {
    return this.#sessions.has(session);
  }

  /**
   * Places a block at the next position; returns the writer it adds, if it is its session's
   * first (whose public key it needs: the key of a later one may be left out).
   */
  add(bytes: Uint8Array, session: string, seq: number, publicKey?: Uint8Array): Writer | undefined {
    const position = this.#blocks.length + 1;
    let blocks = this.#sessions.get(session);
    let writer: Writer | undefined;
    if (!blocks) {
      if (!publicKey) throw new Error(`the first block of ${session} needs its public key`);
      blocks = { seqs: [], positions: [] };
      this.#sessions.set(session, blocks);
      writer = { publicKey: ownBytes(publicKey), position };
      this.#writers.push(writer);
    }
    // A pushed block is a view into the frame it came in (up to 1 MiB, the rest refused or
    // other repositories'): kept as it is, it would keep the whole frame in memory for as long
    // as the repository is open (150 pushes padded with 1 MB each held 153 MB for 45 KB).
    this.#blocks.push(ownBytes(bytes));
    blocks.seqs.push(seq);
    blocks.positions.push(position);
    return writer;
  }

  readAfter(position: number, maxBytes: number): PlacedBlock[] {
    const out: PlacedBlock[] = [];
    let bytes = 0;
    for (let p = position + 1; p <= this.#blocks.length; p++) {
      const block = this.#blocks[p - 1];
      if (out.length > 0 && bytes + block.length > maxBytes) break;
      out.push({ position: p, bytes: block });
      bytes += block.length;
    }
    return out;
  }

  readAt(positions: readonly number[]): PlacedBlock[] {
    return positions.map((position) => ({ position, bytes: this.#blocks[position - 1] }));
  }

  missingFrom(vector: VersionVector): number[] {
    const missing: number[] = [];
    for (const [session, { seqs, positions }] of this.#sessions) {
      for (let i = firstAbove(seqs, vector[session] ?? 0); i < seqs.length; i++) {
        missing.push(positions[i]);
      }
    }
    return missing.sort((a, b) => a - b);
  }

  /** Each session's last placed seq (its chain has no gap: the server refuses gaps). */
  versionVector(): VersionVector {
    const vector: VersionVector = {};
    for (const [session, { seqs }] of this.#sessions) vector[session] = seqs[seqs.length - 1];
    return vector;
  }

  writersAfter(position: number): Writer[] {
    const writers = this.#writers;
    let low = 0;
    let high = writers.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (writers[mid].position <= position) low = mid + 1;
      else high = mid;
    }
    return writers.slice(low);
  }
}

/** The index of the first value above `value` in an ascending array (its length if none). */
function firstAbove(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid] <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * What a stored repository reads from its BlockIndex, for the stores that keep one (files and
 * PostgreSQL): promises, as StoredRepository has them, since another store may fetch.
 */
export abstract class IndexedReads {
  protected abstract get blockIndex(): BlockIndex;

  head(): number {
    return this.blockIndex.head;
  }

  readAfter(position: number, maxBytes: number): Promise<PlacedBlock[]> {
    return Promise.resolve(this.blockIndex.readAfter(position, maxBytes));
  }

  missingFrom(vector: VersionVector): Promise<number[]> {
    return Promise.resolve(this.blockIndex.missingFrom(vector));
  }

  readAt(positions: readonly number[]): Promise<PlacedBlock[]> {
    return Promise.resolve(this.blockIndex.readAt(positions));
  }

  writersAfter(position: number): Promise<Writer[]> {
    return Promise.resolve(this.blockIndex.writersAfter(position));
  }
}

/** `bytes`, copied when they are a view into a larger buffer (see BlockIndex.add). */
function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}
