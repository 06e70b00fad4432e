/**
 * The seal pipeline of a repository's local writes: commits written in one tick are sealed
 * together, once the tick ends, into signed blocks of a capped size that follow the session's
 * chain (group commit). While a block is being sealed and stored, the ticks that end meanwhile
 * wait, and everything they wrote is sealed together once it is stored: an idle repository seals
 * a write at the end of its tick, as soon as it can, while a burst of writes in many ticks costs a
 * signature and a log append per storage round instead of one per tick. Seals run one after
 * another, so the chain's tip read at the start of one is the tip the previous one left.
 */
import type { BlockSigner, ChainTip, SealedBlock } from "../core/block.ts";
import { sealBlocks } from "../core/block.ts";
import type { Commit } from "../core/commit.ts";
import type { CryptoSuite } from "../core/signing.ts";

/**
 * The largest block body a group of commits is sealed into; a larger group becomes several
 * chained blocks, so that a block always fits in a sync frame (1 MiB by default) with room to
 * spare. A single commit larger than this still gets a block of its own, which a sync connection
 * whose frames are smaller cannot carry (E_TOO_LARGE). Tests lower it to cut small groups.
 */
export const sealing = { maxBlockBody: 256 * 1024 };

/** What the seal pipeline needs from the repository it seals for. */
export interface SealHost {
  /** The repository's path: a new chain's first block names it (`prev`), binding the chain. */
  readonly path: string;
  readonly session: string;
  readonly publicKey: Uint8Array;
  /** null in trusted mode: blocks are not signed. */
  readonly signer: BlockSigner | null;
  readonly suite: CryptoSuite;
  /** The tip of the own session's chain: what the next block follows. */
  tip(): ChainTip | undefined;
  /**
   * Takes in a block just sealed, the next of its chain: records, persists and announces it.
   * Returns, for a repository with storage, a promise settled (never rejected) once the block's
   * write has ended, successfully or not: the next group is sealed then.
   */
  sealed(sealed: SealedBlock): Promise<void> | undefined;
  /** RepositoryContext.persisted: resolves when every block handed on so far is durable. */
  readonly persisted?: () => Promise<void>;
}

interface QuietWait {
  readonly listener: (quiet: boolean) => void;
  chancesLeft: number;
  /** Groups stored in a row while another was. */
  overlapping: number;
}

/**
 * Groups stored in a row while another was, after which whenQuiet gives up: a batch of commits
 * awaited together is a group each (each commit() seals its own), so well over a batch's size.
 */
const OVERLAPPING_ROUNDS = 64;

export class SealPipeline {
  readonly #host: SealHost;
  /** Commits written and not yet taken by a seal. */
  #pending: Commit[] = [];
  /** Whether the end of the current tick is awaited to seal what it wrote. */
  #scheduled = false;
  /** Groups taken and not yet handed on as blocks. */
  #unsealed = 0;
  /** Groups handed on whose storing has not ended: while any is, ended ticks wait. */
  #storing = 0;
  /** The last seal queued: the next one waits for it. */
  #sealing: Promise<void> = Promise.resolve();
  #failure: unknown;
  /** Waiting for a moment when nothing is written and not yet stored (see whenQuiet). */
  #quietWaits: QuietWait[] = [];

  constructor(host: SealHost) {
    this.#host = host;
  }

  /** Whether a written commit is not yet sealed and handed on. */
  get busy(): boolean {
    return this.#pending.length > 0 || this.#scheduled || this.#unsealed > 0;
  }

  /** Queues a local commit: it is sealed when its tick ends, or with the next group. */
  add(commit: Commit): void {
    this.#pending.push(commit);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        if (this.#storing === 0) this.#sealPending();
      });
    }
  }

  /**
   * Repository.flush: seals what waits at once (without waiting for a group being stored), then
   * waits for everything to be persisted.
   */
  async flush(): Promise<void> {
    this.#sealPending();
    await this.#sealing;
    if (this.#failure !== undefined) throw this.#failure;
    await this.#host.persisted?.();
  }

  /**
   * Calls `listener(true)` synchronously at the next moment every write is sealed and stored,
   * before anything written after it runs (now, if that is now); `listener(false)` once storing
   * has ended `chances` times with writes already waiting, or OVERLAPPING_ROUNDS groups in a row
   * were stored while another was (writers that flush while one is stored, never all at once).
   * A writer that waits for each write and writes the next at once leaves no such moment to
   * anything that waits for it with a promise — its next write comes first — so a snapshot taken
   * then always found a write unsealed, and a steady writer's log was never checkpointed.
   */
  whenQuiet(listener: (quiet: boolean) => void, chances: number): void {
    if (!this.busy && this.#storing === 0) listener(true);
    else this.#quietWaits.push({ listener, chancesLeft: chances, overlapping: 0 });
  }

  #sealPending(): void {
    if (this.#pending.length === 0) return;
    const commits = this.#pending;
    this.#pending = [];
    this.#unsealed++;
    this.#storing++;
    const stored = this.#sealing.then(() => this.#seal(commits)).finally(() => this.#unsealed--);
    this.#sealing = stored.then(() => {}, (err) => {
      this.#failure = err;
    });
    stored.then(({ write }) => write, () => {}).then(() => {
      const allStored = --this.#storing === 0;
      if (allStored) this.#sealPending();
      this.#roundStored(allStored, allStored && !this.busy);
    });
  }

  /** A group is stored: `allStored` when no other was being stored, `quiet` when none waits. */
  #roundStored(allStored: boolean, quiet: boolean): void {
    if (this.#quietWaits.length === 0) return; // every write's round: nothing made for none
    const waits = this.#quietWaits;
    this.#quietWaits = [];
    for (const wait of waits) {
      // A flush seals at once, even while a group is stored: rounds then overlap, and with two
      // writers storing may never end for all at once.
      wait.overlapping = allStored ? 0 : wait.overlapping + 1;
      const givenUp = allStored ? --wait.chancesLeft === 0 : wait.overlapping >= OVERLAPPING_ROUNDS;
      if (quiet || givenUp) wait.listener(quiet);
      else this.#quietWaits.push(wait);
    }
  }

  /**
   * Seals `commits` into the next blocks of the chain. Resolves once they are handed on, to their
   * storing (wrapped: a promise resolved with a promise would wait for it).
   */
  async #seal(commits: Commit[]): Promise<{ write: Promise<void> | undefined }> {
    const { session, publicKey, signer, suite } = this.#host;
    const tip = this.#host.tip();
    const blocks = await sealBlocks(
      { session, publicKey, seq: (tip?.seq ?? 0) + 1, prev: tip?.hash ?? this.#host.path, commits },
      signer,
      suite,
      sealing.maxBlockBody,
    );
    let write: Promise<void> | undefined;
    for (const sealed of blocks) write = this.#host.sealed(sealed);
    return { write };
  }
}
