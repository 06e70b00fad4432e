/**
 * Chain bookkeeping: for every session whose blocks a repository holds, the tip of its hash chain,
 * the hash of each block held, and the gaps — blocks known to exist (a later block of the chain
 * is held) but not held, because damage in the repository's own log removed them.
 *
 * A gap can only come from the repository's own storage: imports must continue a chain or fill
 * one of its gaps. A block filling a gap is pinned by its neighbours: its `prev` must name the
 * block held before it, and its hash must be the `prev` named by the block held after it. Each
 * gap has a held block after it (that is how it is known), so the last block of a gap is always
 * pinned by hash; a run of missing blocks is filled from either end.
 *
 * The version vector stops before a session's first gap, so a peer answering it with the usual
 * `exportBlocks(vector)` sends the missing blocks (and the held ones after them again, which are
 * duplicates): repair needs no other request.
 */
import { chainStart, type ChainTip, checkChain, type SealedBlock } from "../core/block.ts";
import { toBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import { DIGEST_BYTES } from "../core/signing.ts";

/** Per-session progress: `{ [session]: last block seq held with none missing before it }`. */
export type VersionVector = Record<string, number>;

/** Blocks `first`..`last` of `session`'s chain, known to exist and not held. */
export interface MissingBlocks {
  readonly session: string;
  readonly first: number;
  readonly last: number;
}

/** How an incoming block stands against the chains held. */
export type ChainPlace = "duplicate" | "next" | "gap";

interface Gap {
  first: number;
  last: number;
}

/**
 * One session's block hashes by seq, as the digests' bytes: a hash string costs about 64 bytes of
 * heap and an array slot, which with a block per keystroke is a tenth of what the repository keeps
 * per block (X01h). A digest of 32 zero bytes marks a block not held: SHA-256 gives it to no input
 * anyone can find.
 */
class BlockHashes {
  #digests = new Uint8Array(4 * DIGEST_BYTES);

  get(seq: number): string | undefined {
    const digests = this.#digests;
    const start = (seq - 1) * DIGEST_BYTES;
    const end = start + DIGEST_BYTES;
    if (seq < 1 || end > digests.length) return undefined;
    for (let i = start; i < end; i++) {
      if (digests[i] !== 0) return toBase64Url(digests.subarray(start, end));
    }
    return undefined;
  }

  set(seq: number, digest: Uint8Array): void {
    const end = seq * DIGEST_BYTES;
    if (end > this.#digests.length) {
      const grown = new Uint8Array(Math.max(end, this.#digests.length * 2));
      grown.set(this.#digests);
      this.#digests = grown;
    }
    this.#digests.set(digest, end - DIGEST_BYTES);
  }
}

export class SessionChains {
  /** The repository's path: the `prev` of the first block of each chain begun in it. */
  readonly #path: string;
  readonly #tips = new Map<string, ChainTip>();
  /** Block hashes per session. */
  readonly #hashes = new Map<string, BlockHashes>();
  /** Per session, its gaps in ascending order; sessions without gaps have no entry. */
  readonly #gaps = new Map<string, Gap[]>();
  /** Per session: seq → the hash the missing block there must have (named by the next block). */
  readonly #pinned = new Map<string, Map<number, string>>();

  constructor(path: string) {
    this.#path = path;
  }

  tip(session: string): ChainTip | undefined {
    return this.#tips.get(session);
  }

  /** Every session's tip (a copy: the caller may keep it). */
  tips(): Map<string, ChainTip> {
    return new Map(this.#tips);
  }

  /** Whether no block is known to be missing. */
  get whole(): boolean {
    return this.#gaps.size === 0;
  }

  /**
   * For each session, the last seq held with nothing missing before it: what a peer must send
   * from. Equal to the tip except where a gap is.
   */
  versionVector(): VersionVector {
    const vector: VersionVector = {};
    for (const [session, tip] of this.#tips) {
      const gaps = this.#gaps.get(session);
      vector[session] = gaps ? gaps[0].first - 1 : tip.seq;
    }
    return vector;
  }

  /** The blocks known to be missing, per session in ascending runs. */
  missing(): MissingBlocks[] {
    const runs: MissingBlocks[] = [];
    for (const [session, gaps] of this.#gaps) {
      for (const { first, last } of gaps) runs.push({ session, first, last });
    }
    return runs;
  }

  /** The held block's hash at `seq` of `session`'s chain, if held. */
  hashAt(session: string, seq: number): string | undefined {
    return this.#hashes.get(session)?.get(seq);
  }

  /**
   * Where an incoming block goes: a duplicate of one held, the next of its chain, or a block
   * filling a gap. Throws E_CHAIN_FORK when it contradicts what is held, E_CHAIN_GAP when blocks
   * are missing before it (or, in a gap, when neither neighbour is held yet), E_CHAIN_STALE.
   * `stored`: the block comes from the repository's own log, where damage may have removed the
   * blocks before it; it may then start beyond the tip (record() notes the gap).
   */
  place(sealed: SealedBlock, stored = false): ChainPlace {
    const { session, seq, prev } = sealed.block;
    const held = this.hashAt(session, seq);
    if (held !== undefined) {
      if (held !== sealed.hash) {
        throw new CairnError("E_CHAIN_FORK", `block ${session}/${seq} differs from the one held`);
      }
      return "duplicate";
    }
    const tip = this.#tips.get(session);
    // The repository's own log is trusted: a chain begun under another path (its files moved)
    // is not refused there, only by the peers it would be sent to.
    const path = stored ? sealed.block.prev : this.#path;
    if (!this.#inGap(session, seq)) {
      if (!stored || seq <= (tip?.seq ?? 0) + 1) checkChain(tip, sealed, path);
      return "next";
    }
    const before = seq === 1 ? chainStart(sealed.block, path) : this.hashAt(session, seq - 1);
    const after = this.#pinned.get(session)?.get(seq);
    const where = `block ${session}/${seq}`;
    if (before !== undefined && prev !== before) {
      throw new CairnError("E_CHAIN_FORK", `${where}: prev does not name the previous block`);
    }
    if (after !== undefined && sealed.hash !== after) {
      throw new CairnError("E_CHAIN_FORK", `${where}: not the block the next one names`);
    }
    if (before === undefined && after === undefined) {
      throw new CairnError("E_CHAIN_GAP", `${where}: neither neighbour is held yet`);
    }
    return "gap";
  }

  /**
   * Records a block as held. Beyond the tip it extends the chain; past a gap (only blocks read
   * from the repository's own log, after damage) the blocks in between are recorded as missing;
   * inside a gap it fills its place.
   */
  record(sealed: SealedBlock): void {
    const { session, seq, prev, commits } = sealed.block;
    const hashes = this.#hashesOf(session);
    const tip = this.#tips.get(session);
    const tipSeq = tip?.seq ?? 0;
    if (seq > tipSeq) {
      if (seq > tipSeq + 1) this.#addGap(session, tipSeq + 1, seq - 1);
      this.#tips.set(session, { seq, hash: sealed.hash, lastCommitSeq: commits.at(-1)!.seq });
    } else {
      this.#removeFromGap(session, seq);
    }
    hashes.set(seq, sealed.digest);
    if (this.#gaps.size === 0) {
      if (this.#pinned.size > 0) this.#pinned.clear(); // the last gap was just filled
      return; // the usual case: nothing is missing
    }
    const pins = this.#pinned.get(session);
    if (pins?.delete(seq) && pins.size === 0) this.#pinned.delete(session);
    if (seq > 1 && this.#inGap(session, seq - 1)) this.#pin(session, seq - 1, prev);
  }

  /** Records the hash of a block held in history that a snapshot stood for (no tip change). */
  recordHistory(session: string, seq: number, digest: Uint8Array): void {
    this.#hashesOf(session).set(seq, digest);
  }

  /** Restores a tip from a snapshot. */
  restoreTip(session: string, tip: ChainTip): void {
    this.#tips.set(session, tip);
  }

  #inGap(session: string, seq: number): boolean {
    return this.#gaps.get(session)?.some((gap) => gap.first <= seq && seq <= gap.last) ?? false;
  }

  #pin(session: string, seq: number, hash: string): void {
    let pins = this.#pinned.get(session);
    if (!pins) this.#pinned.set(session, pins = new Map());
    pins.set(seq, hash);
  }

  #addGap(session: string, first: number, last: number): void {
    let gaps = this.#gaps.get(session);
    if (!gaps) this.#gaps.set(session, gaps = []);
    gaps.push({ first, last }); // beyond the tip: after every gap already recorded
  }

  #removeFromGap(session: string, seq: number): void {
    const gaps = this.#gaps.get(session)!;
    const i = gaps.findIndex((gap) => gap.first <= seq && seq <= gap.last);
    const { first, last } = gaps[i];
    const rest: Gap[] = [];
    if (first < seq) rest.push({ first, last: seq - 1 });
    if (seq < last) rest.push({ first: seq + 1, last });
    gaps.splice(i, 1, ...rest);
    if (gaps.length === 0) this.#gaps.delete(session);
  }

  #hashesOf(session: string): BlockHashes {
    let hashes = this.#hashes.get(session);
    if (!hashes) this.#hashes.set(session, hashes = new BlockHashes());
    return hashes;
  }
}
