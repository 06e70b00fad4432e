/**
 * One repository of the PostgreSQL store, as a server holds it: a cache loaded from PostgreSQL
 * (an in-memory Cairn repository that verifies blocks exactly as importBlocks does, and the
 * BlockIndex catch-up reads) kept in step with it, and the transaction that places pushes.
 *
 * A push is placed in one transaction that takes the repository's row lock, first reads the
 * blocks other servers committed since the cache's head (so the chain checks see them), verifies,
 * inserts at head+1…, moves the head, notifies `cairn_blocks` and commits: positions are gap-free
 * and in commit order, and a block conflicting with one another server placed meanwhile is refused
 * (E_CHAIN_FORK) before anything is written. Pushes queued while one transaction runs share the
 * next (group commit). The cache's index only moves after COMMIT, so readers never see a block
 * PostgreSQL might not keep; after a failed transaction the cache is loaded again.
 */
import { bytesEqual, toBase64Url } from "../../core/bytes.ts";
import { decodeBlock } from "../../core/block.ts";
import { CairnError } from "../../core/errors.ts";
import type { CryptoSuite } from "../../core/signing.ts";
import { Cairn, repositoryOf } from "../../db/database.ts";
import { DecodedBlock, type Repository, type VersionVector } from "../../repo/repository.ts";
import { BlockIndex, IndexedReads } from "./block_index.ts";
import { BLOCKS_CHANNEL } from "./postgres_listener.ts";
import {
  inTransaction,
  type PooledClient,
  type PostgresClient,
  type PostgresPool,
} from "./postgres_pool.ts";
import { isPostgresFailure, retrying } from "./postgres_retry.ts";
import {
  type ApplyResult,
  type AuthorizedBlock,
  authorizedBlock,
  type BlockOutcome,
  type PlacedBlock,
  type StoredRepository,
  type Writer,
} from "./store.ts";

/** How long after a notification's reading failed past the retries it is read again. */
const NOTICE_AGAIN_MS = 2_000;
/** Blocks read per query when a cache catches up. */
const READ_PAGE = 1_000;
/** Rows per INSERT (six parameters each; PostgreSQL takes at most 65535). */
const INSERT_ROWS = 1_000;
/**
 * The most block bytes one transaction places (its first push whatever its size): the rest of
 * the queue waits for the next. Blocks are verified while the repository's row is locked and the
 * session is idle for PostgreSQL, about 0.2 ms per small block: a queue that grew without bound
 * (clients' push windows piled up behind one slow transaction) took past the 30 s
 * IDLE_IN_TRANSACTION_MS, so its every attempt was ended, and no push of it could ever commit.
 */
export const MAX_BATCH_BYTES = 4 << 20;

/** The cache of one repository: a verifying in-memory Cairn repository and the index. */
interface Cache {
  readonly db: Cairn;
  readonly repository: Repository;
  readonly index: BlockIndex;
  readonly trusted: Set<string>;
}

/** A stored block as #indexStored reads it: what its rows say, and its bytes. */
interface StoredRow {
  readonly position: number;
  readonly session: string;
  readonly seq: number;
  readonly bytes: Uint8Array;
  /** The key its writer row names, where the block is its session's first. */
  readonly publicKey?: Uint8Array;
}

interface QueuedApply {
  readonly blocks: readonly AuthorizedBlock[];
  resolve(result: ApplyResult): void;
  reject(err: unknown): void;
}

export class PostgresRepository extends IndexedReads implements StoredRepository {
  readonly path: string;
  readonly epoch: string;
  readonly #pool: PostgresPool;
  readonly #suite: CryptoSuite;
  readonly #onClose: () => void;
  #cache: Cache | undefined;
  /** The cache's Cairn repository holds blocks PostgreSQL may not: load it again before use. */
  #stale = false;
  /** Blocks the index holds and the cache's Cairn repository not yet: verified before use. */
  #unverified: readonly StoredRow[] = [];
  /** Loads, catch-ups and transactions run one at a time. */
  #exclusive: Promise<unknown> = Promise.resolve();
  #queue: QueuedApply[] = [];
  /** A turn to place what is queued is taken (see apply). */
  #placing = false;
  readonly #maxBatchBytes: number;
  #refreshing = false;
  /** A notification read again later (see noticed). */
  #noticeAgain: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #elsewhere = new Set<(result: ApplyResult) => void>();

  constructor(
    path: string,
    epoch: string,
    pool: PostgresPool,
    suite: CryptoSuite,
    onClose: () => void,
    maxBatchBytes = MAX_BATCH_BYTES,
  ) {
    super();
    this.path = path;
    this.epoch = epoch;
    this.#pool = pool;
    this.#suite = suite;
    this.#onClose = onClose;
    this.#maxBatchBytes = maxBatchBytes;
  }

  /**
   * The first time, opens the repository: its index is made from PostgreSQL's rows, no block
   * decoded, so catch-up reads start at once. The blocks were verified by the server that placed
   * them; they are verified again into the cache before the cache is first used to import (a
   * push, other servers' blocks), and one that fails makes that use fail (E_IO), and every use
   * after it. After the first time, loads the cache again.
   */
  async load(): Promise<void> {
    if (this.#cache) return await this.#run(() => retrying(() => this.#reload()));
    const { cache, rows } = await retrying(() => this.#indexStored());
    this.#cache = cache;
    this.#unverified = rows;
  }

  get #index(): BlockIndex {
    return this.#cache!.index;
  }

  protected get blockIndex(): BlockIndex {
    return this.#index;
  }

  /** From the index, not the Cairn repository: that may hold blocks of a failed transaction. */
  versionVector(): Promise<VersionVector> {
    return Promise.resolve(this.#index.versionVector());
  }

  onPlacedElsewhere(listener: (result: ApplyResult) => void): () => void {
    this.#elsewhere.add(listener);
    return () => this.#elsewhere.delete(listener);
  }

  /**
   * Reads what other servers committed since the cache's head, and tells the listeners. Asked at
   * every subscribe, so it first asks PostgreSQL's head: only a head past the index's takes a
   * turn and imports (verifying first what the open only indexed).
   */
  async refresh(): Promise<void> {
    // Read before the query: a push of this server's that commits meanwhile moves the index
    // past the head the query may see, and that is no restore.
    const read = this.head();
    const { rows } = await retrying(() =>
      this.#pool.query("SELECT head FROM cairn_repositories WHERE path = $1", [this.path])
    );
    const head = Number(rows[0]?.head ?? 0);
    this.#checkNotBehind(head, read);
    if (head <= this.head()) return;
    await this.#run(() => retrying(() => this.#catchUp(this.#pool)));
  }

  /** A notification (or a reconnect, with Infinity): read once, however many arrive meanwhile. */
  noticed(head: number): void {
    if (head <= this.head() || this.#refreshing) return;
    this.#refreshing = true;
    this.#run(() => {
      this.#refreshing = false;
      return retrying(() => this.#catchUp(this.#pool));
    }).catch((err) => {
      // PostgreSQL still failing past the retries (the pool cut off, the listener not): nothing
      // else would read the block for this server's subscribers until the repository's next
      // push or subscribe, so it is read again later, until PostgreSQL answers or the repository
      // closes; meanwhile pushes queued behind take their turns. A block that fails its checks
      // is no outage: the next push reports it.
      if (this.#closed || !isPostgresFailure(err) || this.#noticeAgain) return;
      this.#noticeAgain = setTimeout(() => {
        this.#noticeAgain = undefined;
        this.noticed(head);
      }, NOTICE_AGAIN_MS);
    });
  }

  apply(blocks: readonly AuthorizedBlock[]): Promise<ApplyResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ blocks, resolve, reject });
      if (!this.#placing) {
        this.#placing = true;
        this.#run(() => this.#placeQueued());
      }
    });
  }

  /**
   * Places what is queued when this turn comes, up to MAX_BATCH_BYTES, in one transaction; what
   * is left takes the next turn.
   */
  async #placeQueued(): Promise<void> {
    let bytes = 0;
    let taken = 0;
    for (const { blocks } of this.#queue) {
      const size = blocks.reduce((sum, block) => sum + block.bytes.length, 0);
      if (taken > 0 && bytes + size > this.#maxBatchBytes) break;
      bytes += size;
      taken++;
    }
    const batch = this.#queue.splice(0, taken);
    if (this.#queue.length > 0) this.#run(() => this.#placeQueued());
    else this.#placing = false;
    try {
      const results = await retrying(() => this.#place(batch));
      batch.forEach((entry, i) => entry.resolve(results[i]));
    } catch (err) {
      for (const entry of batch) entry.reject(err);
    }
  }

  #run<T>(step: () => Promise<T>): Promise<T> {
    const result = this.#exclusive.then(step);
    this.#exclusive = result.catch(() => {});
    return result;
  }

  /**
   * A new cache from PostgreSQL: every block of the repository, verified again. Built aside and
   * put in place once whole: readers (subscriptions catching up or lagging) keep reading the old
   * index until then, which holds only committed blocks, and never see a half-built one.
   */
  async #reload(): Promise<void> {
    const old = this.#cache;
    const fresh = await this.#emptyCache();
    try {
      await this.#readCommitted(this.#pool, fresh);
      // Rebuilt after a transaction failed (a failover loses the COMMITs in flight): a head
      // behind the positions already told is a restore too, and taking it would give them to
      // other blocks, which clients resuming from them would skip for good.
      if (old) this.#checkNotBehind(fresh.index.head, old.index.head);
    } catch (err) {
      this.#stale = true;
      await fresh.db.close().catch(() => {});
      throw err;
    }
    this.#cache = fresh;
    this.#unverified = [];
    this.#stale = false;
    await old?.db.close().catch(() => {});
    // What other servers placed since the old cache's head is news to the listeners.
    const from = old?.index.head ?? this.#index.head;
    if (from < this.#index.head) {
      this.#tell({
        outcomes: [],
        placed: this.#index.readAfter(from, Infinity),
        newWriters: this.#index.writersAfter(from),
        head: this.#index.head,
      });
    }
  }

  async #emptyCache(): Promise<Cache> {
    const db = await Cairn.open({ onWarning: () => {} });
    await db.open(this.path);
    return {
      db,
      repository: repositoryOf(db, this.path),
      index: new BlockIndex(),
      trusted: new Set(),
    };
  }

  /** A cache whose index holds every stored block, from their rows; its repository holds none. */
  async #indexStored(): Promise<{ cache: Cache; rows: StoredRow[] }> {
    const cache = await this.#emptyCache();
    try {
      const rows: StoredRow[] = [];
      for (;;) {
        const page = await this.#pool.query(
          "SELECT position, session, seq, payload FROM cairn_blocks " +
            "WHERE repository = $1 AND position > $2 ORDER BY position LIMIT $3",
          [this.path, rows.length, READ_PAGE],
        );
        for (const row of page.rows) {
          rows.push({
            position: Number(row.position),
            session: String(row.session),
            seq: Number(row.seq),
            bytes: new Uint8Array(row.payload as Uint8Array),
          });
        }
        if (page.rows.length < READ_PAGE) break;
      }
      // Read after the blocks: each block's writer row was committed with it.
      const writers = await this.#pool.query(
        "SELECT public_key, position FROM cairn_writers WHERE repository = $1",
        [this.path],
      );
      const keyAt = new Map(writers.rows.map((row) => [
        Number(row.position),
        new Uint8Array(row.public_key as Uint8Array),
      ]));
      const indexed: StoredRow[] = [];
      for (const row of rows) {
        const { position, session, seq, bytes } = row;
        const { index } = cache;
        if (position !== index.head + 1 || (!index.hasSession(session) && !keyAt.has(position))) {
          throw new CairnError(
            "E_IO",
            `the stored blocks of ${this.path} are inconsistent at ${position}`,
          );
        }
        const publicKey = keyAt.get(position);
        // The writers go out in `members` before anything is verified: each writer row's key is
        // checked against its block now (a block decoded per writer, not verified).
        if (publicKey !== undefined) {
          const block = await this.#decodeStored(bytes);
          if (block.session !== session || !bytesEqual(block.publicKey, publicKey)) {
            throw new CairnError("E_IO", `a stored block of ${this.path} is not what its row says`);
          }
        }
        index.add(bytes, session, seq, publicKey);
        indexed.push(publicKey ? { ...row, publicKey } : row);
      }
      return { cache, rows: indexed };
    } catch (err) {
      await cache.db.close().catch(() => {});
      throw err;
    }
  }

  /** Verifies into the cache's Cairn repository the blocks the open only indexed. */
  async #verifyStored(): Promise<void> {
    const rows = this.#unverified;
    this.#unverified = [];
    try {
      for (let start = 0; start < rows.length; start += READ_PAGE) {
        const blocks = [];
        for (const row of rows.slice(start, start + READ_PAGE)) {
          const block = await this.#decodeStored(row.bytes);
          const { session, seq, publicKey } = row;
          // The writer row's key is the one clients are told to trust (members): it must be the
          // block's signer, or clients would trust a key that wrote nothing.
          if (
            block.session !== session || block.seq !== seq ||
            (publicKey !== undefined && !bytesEqual(publicKey, block.publicKey))
          ) {
            throw new CairnError("E_IO", `a stored block of ${this.path} is not what its row says`);
          }
          blocks.push(block);
        }
        this.#refuseRejected(await this.#import(this.#cache!, blocks, true));
      }
    } catch (err) {
      this.#stale = true;
      throw err;
    }
  }

  /** Imports the blocks PostgreSQL has after the cache's head; tells the listeners if `tell`. */
  async #catchUp(client: PostgresClient, tell = true): Promise<ApplyResult | undefined> {
    if (this.#stale) await this.#reload();
    await this.#verifyStored();
    const result = await this.#readCommitted(client, this.#cache!);
    if (result && tell) this.#tell(result);
    return result;
  }

  /** Imports into `cache` the blocks PostgreSQL has after its index's head. */
  async #readCommitted(client: PostgresClient, cache: Cache): Promise<ApplyResult | undefined> {
    const { index } = cache;
    const placed: PlacedBlock[] = [];
    const newWriters: Writer[] = [];
    for (;;) {
      const { rows } = await client.query(
        "SELECT position, payload FROM cairn_blocks WHERE repository = $1 AND position > $2 " +
          "ORDER BY position LIMIT $3",
        [this.path, index.head, READ_PAGE],
      );
      if (rows.length === 0) break;
      const blocks = [];
      for (const row of rows) {
        blocks.push(await this.#decodeStored(new Uint8Array(row.payload as Uint8Array)));
      }
      try {
        this.#refuseRejected(await this.#import(cache, blocks, true));
      } catch (err) {
        this.#stale = true;
        throw err;
      }
      for (const { bytes, session, seq, publicKey } of blocks) {
        const writer = index.add(bytes, session, seq, publicKey);
        if (writer) newWriters.push(writer);
        placed.push({ position: index.head, bytes });
      }
      if (rows.length < READ_PAGE) break;
    }
    if (placed.length === 0) return undefined;
    return { outcomes: [], placed, newWriters, head: index.head };
  }

  /**
   * A stored block, decoded: E_IO when its bytes are not a block (a row altered by hand). Not
   * its decoder's own code: the push that reads it would pass that on as the pushed blocks'
   * refusal, and a client drops a block refused for good, where it sends again one refused E_IO.
   * Verified by the server that placed it, so the canonical check is not needed again.
   */
  async #decodeStored(bytes: Uint8Array): Promise<AuthorizedBlock> {
    try {
      return authorizedBlock(bytes, await decodeBlock(bytes, this.#suite, false));
    } catch (err) {
      throw new CairnError("E_IO", `a stored block of ${this.path} cannot be read`, {
        cause: err,
      });
    }
  }

  #refuseRejected(report: { rejected: readonly { error: CairnError }[] }): void {
    if (report.rejected.length === 0) return;
    const [{ error }] = report.rejected;
    throw new CairnError("E_IO", `a stored block of ${this.path} fails verification`, {
      cause: error,
    });
  }

  #tell(result: ApplyResult): void {
    for (const listener of this.#elsewhere) listener(result);
  }

  /**
   * `accepted`: blocks PostgreSQL holds, placed (and checked) by a server; otherwise a push's,
   * checked in full. Rows are not asked about the clock again: servers' clocks differ a little,
   * and one behind another refused what the other had placed (E_IO at its next push, and its
   * subscribers not told of the block).
   */
  async #import(cache: Cache, blocks: readonly AuthorizedBlock[], accepted: boolean) {
    for (const { publicKey } of blocks) {
      const key = toBase64Url(publicKey);
      if (cache.trusted.has(key)) continue;
      await cache.db.trust(key);
      cache.trusted.add(key);
    }
    return await cache.repository.importBlocks(
      blocks.map((block) => new DecodedBlock(block.bytes, block.sealed)),
      undefined,
      { accepted },
    );
  }

  /** One transaction for every queued apply; one result per apply. */
  async #place(batch: readonly QueuedApply[]): Promise<ApplyResult[]> {
    if (batch.every((entry) => entry.blocks.length === 0)) {
      // Pushes whose every block was refused before the store (or none given): no transaction,
      // so no repository row for a path nobody wrote, however many paths a client names.
      return this.#split(batch, [], []);
    }
    if (this.#stale) await this.#reload();
    await this.#verifyStored(); // before the repository's row is locked, not while
    const { outcomes, rows } = await inTransaction(this.#pool, async (client) => {
      await this.#lockRepository(client);
      await this.#catchUp(client); // committed by other servers: told at once
      const all = batch.flatMap((entry) => entry.blocks);
      const report = all.length > 0
        ? await this.#import(this.#cache!, all, false)
        : { rejected: [] };
      // From here the cache's Cairn repository holds blocks PostgreSQL has not committed.
      this.#stale = true;
      const refused = new Map(report.rejected.map(({ index, error }) => [index, error]));
      const index = this.#index;
      const seen = new Set<string>();
      const outcomes: BlockOutcome[] = [];
      const rows: { block: AuthorizedBlock; position: number; first: boolean }[] = [];
      const sessions = new Set<string>();
      all.forEach((block, i) => {
        const error = refused.get(i);
        const place = `${block.session}/${block.seq}`;
        if (error) {
          outcomes.push({ status: "rejected", code: error.code, message: error.message });
        } else if (index.has(block.session, block.seq) || seen.has(place)) {
          outcomes.push({ status: "duplicate" });
        } else {
          seen.add(place);
          const position = index.head + rows.length + 1;
          const first = !index.hasSession(block.session) && !sessions.has(block.session);
          sessions.add(block.session);
          rows.push({ block, position, first });
          outcomes.push({ status: "applied", position });
        }
      });
      if (rows.length > 0) await this.#insert(client, rows, index.head + rows.length);
      return { outcomes, rows };
    });
    this.#stale = false;
    for (const { block } of rows) {
      this.#index.add(block.bytes, block.session, block.seq, block.publicKey);
    }
    return this.#split(batch, outcomes, rows);
  }

  async #lockRepository(client: PooledClient): Promise<void> {
    await client.query(
      "INSERT INTO cairn_repositories VALUES ($1, 0) ON CONFLICT (path) DO NOTHING",
      [this.path],
    );
    const { rows } = await client.query(
      "SELECT head FROM cairn_repositories WHERE path = $1 FOR UPDATE",
      [this.path],
    );
    this.#checkNotBehind(Number(rows[0]?.head ?? 0), this.head());
  }

  /**
   * E_IO when PostgreSQL's head is behind `read`, what this server had read (a restore to an
   * earlier point, a failover to a replica that lacked the last commits, under running servers):
   * its positions would be given again to other blocks, and the next push would leave a gap that
   * servers started later refuse. Refused until the servers are restarted with a new epoch
   * (docs/deploy.md), rather than serving positions that no longer hold what they held.
   */
  #checkNotBehind(head: number, read: number): void {
    if (head >= read) return;
    throw new CairnError(
      "E_IO",
      `PostgreSQL holds ${this.path} up to position ${head}, behind the ${read} this server ` +
        "read: was the database restored? Restart the servers with a new epoch",
    );
  }

  async #insert(
    client: PooledClient,
    rows: readonly { block: AuthorizedBlock; position: number; first: boolean }[],
    head: number,
  ): Promise<void> {
    for (let start = 0; start < rows.length; start += INSERT_ROWS) {
      const chunk = rows.slice(start, start + INSERT_ROWS);
      const values: unknown[] = [];
      const tuples = [];
      for (const { block, position } of chunk) {
        const n = values.length;
        tuples.push(`($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6})`);
        values.push(this.path, block.session, block.seq, block.sealed.hash, block.bytes, position);
      }
      await client.query(
        "INSERT INTO cairn_blocks (repository, session, seq, hash, payload, position) " +
          `VALUES ${tuples.join(", ")}`,
        values,
      );
    }
    for (const { block, position } of rows.filter((row) => row.first)) {
      await client.query("INSERT INTO cairn_writers VALUES ($1, $2, $3)", [
        this.path,
        block.publicKey,
        position,
      ]);
    }
    await client.query("UPDATE cairn_repositories SET head = $2 WHERE path = $1", [
      this.path,
      head,
    ]);
    // Delivered to every listener when the transaction commits, not before.
    await client.query("SELECT pg_notify($1, $2)", [BLOCKS_CHANNEL, `${head}:${this.path}`]);
  }

  /** The batch's outcomes, placed blocks and new writers, cut back into one result per apply. */
  #split(
    batch: readonly QueuedApply[],
    outcomes: readonly BlockOutcome[],
    rows: readonly { block: AuthorizedBlock; position: number; first: boolean }[],
  ): ApplyResult[] {
    const head = this.#index.head;
    let at = 0;
    let row = 0;
    return batch.map((entry) => {
      const mine = outcomes.slice(at, at + entry.blocks.length);
      at += entry.blocks.length;
      const placed: PlacedBlock[] = [];
      const newWriters: Writer[] = [];
      for (const outcome of mine) {
        if (outcome.status !== "applied") continue;
        const { block, position, first } = rows[row++];
        placed.push({ position, bytes: block.bytes });
        if (first) newWriters.push({ publicKey: block.publicKey, position });
      }
      return { outcomes: mine, placed, newWriters, head };
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#noticeAgain);
    this.#onClose();
    await this.#run(async () => {
      await this.#cache?.db.close();
    });
  }
}
