/**
 * The seal pipeline of a repository's local writes: commits written in one tick are sealed
 * together, once the tick ends, into signed blocks of a capped size that follow the session's
 * chain. Seals run one after another, each after the last has finished, so the chain's tip read
 * at the start of one is the tip the previous one left.
 */
import type { BlockSigner, ChainTip, SealedBlock } from "../core/block.ts";
import { sealBlocks } from "../core/block.ts";
import type { Commit } from "../core/commit.ts";
import type { CryptoSuite } from "../core/signing.ts";

/**
 * The largest block body a tick is sealed into; a larger tick becomes several chained blocks, so
 * that a block always fits in a sync frame (1 MiB by default) with room to spare. A single commit
 * larger than this still gets a block of its own, which a sync connection whose frames are
 * smaller cannot carry (E_TOO_LARGE). Tests lower it to cut small ticks.
 */
export const sealing = { maxBlockBody: 256 * 1024 };

/** What the seal pipeline needs from the repository it seals for. */
export interface SealHost {
  readonly session: string;
  readonly publicKey: Uint8Array;
  /** null in trusted mode: blocks are not signed. */
  readonly signer: BlockSigner | null;
  readonly suite: CryptoSuite;
  /** The tip of the own session's chain: what the next block follows. */
  tip(): ChainTip | undefined;
  /** Takes in a block just sealed, the next of its chain: records, persists and announces it. */
  sealed(sealed: SealedBlock): void;
  /** RepositoryContext.persisted: resolves when every block handed on so far is durable. */
  readonly persisted?: () => Promise<void>;
}

export class SealPipeline {
  readonly #host: SealHost;
  /** Commits written since the last seal began. */
  #pending: Commit[] = [];
  #scheduled = false;
  #inFlight = 0;
  /** The last seal queued: the next one waits for it. */
  #sealing: Promise<void> = Promise.resolve();
  #failure: unknown;

  constructor(host: SealHost) {
    this.#host = host;
  }

  /** Whether a written commit is not yet sealed and handed on. */
  get busy(): boolean {
    return this.#pending.length > 0 || this.#scheduled || this.#inFlight > 0;
  }

  /** Queues a local commit: it is sealed with the rest of its tick when the tick ends. */
  add(commit: Commit): void {
    this.#pending.push(commit);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#queue());
    }
  }

  /** Repository.flush: seals what waits, then waits for it to be persisted. */
  async flush(): Promise<void> {
    if (this.#pending.length > 0) this.#queue();
    await this.#sealing;
    if (this.#failure !== undefined) throw this.#failure;
    await this.#host.persisted?.();
  }

  #queue(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0) return;
    const commits = this.#pending;
    this.#pending = [];
    this.#inFlight++;
    this.#sealing = this.#sealing.then(() => this.#seal(commits)).catch((err) => {
      this.#failure = err;
    }).finally(() => this.#inFlight--);
  }

  async #seal(commits: Commit[]): Promise<void> {
    const { session, publicKey, signer, suite } = this.#host;
    const tip = this.#host.tip();
    const blocks = await sealBlocks(
      { session, publicKey, seq: (tip?.seq ?? 0) + 1, prev: tip?.hash ?? "", commits },
      signer,
      suite,
      sealing.maxBlockBody,
    );
    for (const sealed of blocks) this.#host.sealed(sealed);
  }
}
