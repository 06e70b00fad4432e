/**
 * What the sync server needs from storage, as an interface: the files store (files_store.ts) is
 * the embedded default; a PostgreSQL store (issue #17) can implement the same for N stateless
 * servers. Every read is asynchronous so a store may fetch from elsewhere.
 *
 * Positions: every block a repository accepts gets the next position there, gap-free, in the
 * order the blocks became durable. The epoch names that sequence; a store that cannot keep it
 * (its history was damaged) starts a new epoch, so cursors of the old one are reset.
 */
import type { SealedBlock } from "../../core/block.ts";
import type { VersionVector } from "../../repo/repository.ts";
import type { RepositoryRules } from "./access.ts";

/**
 * A store to open, as `createSyncServer({ store })` takes it (e.g. `postgresStore(url)`). Opened
 * when the server starts and closed when it stops.
 */
export interface SyncStoreSource {
  /** @internal */
  open(): Promise<SyncStore>;
}

export interface SyncStore {
  /** The server's id (announced in `challenge`, signed in every proof): stable across restarts. */
  readonly serverId: string;
  openRepository(path: string): Promise<StoredRepository>;
  /** Where the built-in access rules are kept. */
  readonly rules: RulesStorage;
  close(): Promise<void>;
}

export interface RulesStorage {
  /** Every repository's rules, as stored. */
  load(): Promise<Map<string, RepositoryRules>>;
  /**
   * Applies `change` to a repository's stored rules (or to no rules, the first time) and
   * resolves, once that is durable, with the rules stored. A store shared by N servers applies
   * it under a lock against the others, so two servers changing the same repository at once
   * both count, and only one of two first writers becomes its owner.
   */
  update(
    repository: string,
    change: (current: RepositoryRules) => RepositoryRules,
  ): Promise<RepositoryRules>;
  /**
   * Rules other servers sharing the store changed, reported with the rules now stored (a store
   * may report this server's own changes too); after a lost connection, every repository's. The
   * files store, alone on its files, never calls it.
   * Returns the function that stops the reports.
   */
  onChangedElsewhere(listener: (repository: string, rules: RepositoryRules) => void): () => void;
}

/** A block the server has verified and placed, as the bytes it received. */
export interface PlacedBlock {
  readonly position: number;
  readonly bytes: Uint8Array;
}

/** A writer (block author) of a repository and the position of its first block. */
export interface Writer {
  /** 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  readonly position: number;
}

/**
 * A block whose author the server has decoded and authorized; `sealed` is what decoding made,
 * so that the store verifies and applies it without decoding it again.
 */
export interface AuthorizedBlock {
  readonly bytes: Uint8Array;
  readonly session: string;
  readonly seq: number;
  readonly publicKey: Uint8Array;
  readonly sealed: SealedBlock;
}

/** `bytes`, decoded as `sealed`, as a store takes it once its author is authorized. */
export function authorizedBlock(bytes: Uint8Array, sealed: SealedBlock): AuthorizedBlock {
  const { session, seq, publicKey } = sealed.block;
  return { bytes, session, seq, publicKey, sealed };
}

export type BlockOutcome =
  | { readonly status: "applied"; readonly position: number }
  | { readonly status: "duplicate" }
  | { readonly status: "rejected"; readonly code: string; readonly message: string };

export interface ApplyResult {
  /** One outcome per block given, in order. */
  readonly outcomes: readonly BlockOutcome[];
  /** The blocks applied, in position order. */
  readonly placed: readonly PlacedBlock[];
  /** Writers whose first block was among them. */
  readonly newWriters: readonly Writer[];
  /** The repository's head after the apply. */
  readonly head: number;
}

export interface StoredRepository {
  readonly path: string;
  readonly epoch: string;
  /** The position of the last durable block (0 when there is none). */
  head(): number;
  /** Blocks after `position`, in order, up to `maxBytes` of block bytes (at least one if any). */
  readAfter(position: number, maxBytes: number): Promise<PlacedBlock[]>;
  /** The positions, ascending, of the blocks a peer at `vector` lacks, up to the head. */
  missingFrom(vector: VersionVector): Promise<number[]>;
  /** The blocks at these positions (ascending, each <= head). */
  readAt(positions: readonly number[]): Promise<PlacedBlock[]>;
  /** Writers added after `position`, in position order. */
  writersAfter(position: number): Promise<Writer[]>;
  versionVector(): Promise<VersionVector>;
  /**
   * Verifies blocks exactly as importBlocks does and stores those that pass. Resolves only once
   * they are durable; concurrent applies share durable writes, and resolve in position order.
   */
  apply(blocks: readonly AuthorizedBlock[]): Promise<ApplyResult>;
  /**
   * Blocks placed by other servers sharing the store (a store shared by N servers), reported in
   * position order with no outcomes; the files store, alone on its files, never calls it.
   * Returns the function that stops the reports.
   */
  onPlacedElsewhere(listener: (result: ApplyResult) => void): () => void;
  /**
   * Brings head() and the reads up to what the store holds now (reporting what other servers
   * placed): asked before a subscription compares a client's cursor with the head, so a client
   * that moves to another server is not reset because that server had not heard of its blocks.
   */
  refresh(): Promise<void>;
  close(): Promise<void>;
}
