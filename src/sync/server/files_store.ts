/**
 * The embedded store: an ordinary Cairn database (durable mode) in `<dir>/repositories`, one
 * Cairn repository per synced repository, so blocks are verified by importBlocks and kept in
 * Cairn's own logs. Positions come from a BlockIndex built at open from exportBlocks (which
 * lists blocks in the order they entered the log, so positions survive restarts) and appended
 * to as blocks are placed.
 */
import { toBase64Url } from "../../core/bytes.ts";
import { decodeBlock } from "../../core/block.ts";
import type { CryptoSuite } from "../../core/signing.ts";
import { Cairn, openCairnOn, repositoryOf } from "../../db/database.ts";
import { DecodedBlock, type Repository, type VersionVector } from "../../repo/repository.ts";
import { cryptoSuite } from "../../runtime/crypto_suite.ts";
import { openFsBackend } from "../../storage/backends/fs.ts";
import { logFileName } from "../../storage/settings.ts";
import type { StorageBackend } from "../../storage/backend.ts";
import { NO_RULES, type RepositoryRules, tentatively } from "./access.ts";
import { BlockIndex, IndexedReads } from "./block_index.ts";
import { randomName, ServerFiles, type ServerIdentity } from "./server_files.ts";
import type {
  ApplyResult,
  AuthorizedBlock,
  BlockOutcome,
  PlacedBlock,
  RulesStorage,
  StoredRepository,
  SyncStore,
  Writer,
} from "./store.ts";

/** @internal For tests: the storage the Cairn database is opened on (e.g. one counting syncs). */
export interface FilesStoreOptions {
  openStorage?: (path: string) => Promise<StorageBackend>;
}

export async function openFilesStore(
  dir: string,
  options: FilesStoreOptions = {},
): Promise<SyncStore> {
  const backend = await openFsBackend(dir);
  let db: Cairn | undefined;
  try {
    const cairnOptions = {
      path: `${dir}/repositories`,
      durability: "durable",
      onWarning: () => {}, // damage is seen in stats() and answered with a new epoch
    } as const;
    // The database's writer lock first: a second server on the directory is refused before it
    // reads or makes the server's identity. (Two started at once on a new directory each wrote
    // their own, and the one that ran served under an id server.json no longer held.)
    db = options.openStorage
      ? await openCairnOn(cairnOptions, options.openStorage)
      : await Cairn.open(cairnOptions);
    const files = new ServerFiles(backend);
    const identity = await files.identity();
    const rules = await files.loadRules();
    const repositoryFiles = await openFsBackend(cairnOptions.path);
    return new FilesStore(
      backend,
      repositoryFiles,
      files,
      identity,
      rules,
      db,
      await cryptoSuite(),
    );
  } catch (err) {
    await db?.close().catch(() => {});
    await backend.close();
    throw err;
  }
}

class FilesStore implements SyncStore {
  readonly serverId: string;
  readonly rules: RulesStorage;
  readonly #backend: StorageBackend;
  /** The database directory, read (never locked or written) to tell existing repositories. */
  readonly #repositoryFiles: StorageBackend;
  readonly #files: ServerFiles;
  #identity: ServerIdentity;
  readonly #db: Cairn;
  readonly #suite: CryptoSuite;
  /** Public keys the database trusts already. */
  readonly #trusted = new Set<string>();

  constructor(
    backend: StorageBackend,
    repositoryFiles: StorageBackend,
    files: ServerFiles,
    identity: ServerIdentity,
    rules: Map<string, RepositoryRules>,
    db: Cairn,
    suite: CryptoSuite,
  ) {
    this.#backend = backend;
    this.#repositoryFiles = repositoryFiles;
    this.#files = files;
    this.#identity = identity;
    this.serverId = identity.serverId;
    this.#db = db;
    this.#suite = suite;
    this.rules = {
      load: () => Promise.resolve(new Map(rules)),
      // The whole file is written from the map as it is at each call, and writes are made in
      // call order, so the last one holds every change.
      update: async (repository, change) => {
        const changed = change(rules.get(repository) ?? NO_RULES);
        await tentatively(rules, repository, changed, () => files.saveRules(rules));
        return changed;
      },
      // Alone on its files: every change is this server's own.
      onChangedElsewhere: () => () => {},
    };
  }

  async openRepository(path: string): Promise<StoredRepository> {
    // A repository nobody has written yet is not created by reading it: no files until a push.
    if (!await this.#exists(path)) {
      return new FilesRepository(
        path,
        undefined,
        async () => {
          await this.#db.open(path);
          return repositoryOf(this.#db, path);
        },
        new BlockIndex(),
        this.#epochOf(path),
        (publicKey) => this.#trust(publicKey),
        () => this.#db.close(path),
      );
    }
    const handle = await this.#db.open(path);
    const repository = repositoryOf(this.#db, path);
    const index = new BlockIndex();
    for (const { session, seq, bytes } of await repository.exportNamedBlocks({})) {
      // Only a session's first block is decoded, for the writer's public key. (Our own verified
      // log: the canonical check, half of decoding, is not needed again.)
      const publicKey = index.hasSession(session)
        ? undefined
        : (await decodeBlock(bytes, this.#suite, false)).block.publicKey;
      index.add(bytes, session, seq, publicKey);
    }
    const stats = handle.stats();
    const damaged = stats.damaged.length > 0 || handle.missingHistory().blocks.length > 0;
    return new FilesRepository(
      path,
      repository,
      () => Promise.resolve(repository),
      index,
      damaged ? await this.#freshEpoch(path) : this.#epochOf(path),
      (publicKey) => this.#trust(publicKey),
      () => this.#db.close(path),
    );
  }

  /** Whether the repository has a log (in either format) in the database directory. */
  async #exists(path: string): Promise<boolean> {
    for (const extension of [".log", ".jsonl"]) {
      if (await this.#repositoryFiles.readRange(logFileName(path, extension), 0, 0)) return true;
    }
    return false;
  }

  #epochOf(path: string): string {
    return this.#identity.repositoryEpochs[path] ?? this.#identity.epoch;
  }

  /** Positions read from a damaged history may differ from those given out: a new epoch. */
  async #freshEpoch(path: string): Promise<string> {
    const epoch = randomName();
    const identity = {
      ...this.#identity,
      repositoryEpochs: { ...this.#identity.repositoryEpochs, [path]: epoch },
    };
    await this.#files.saveIdentity(identity);
    this.#identity = identity;
    return epoch;
  }

  async #trust(publicKey: Uint8Array): Promise<void> {
    const key = toBase64Url(publicKey);
    if (this.#trusted.has(key)) return;
    await this.#db.trust(key);
    this.#trusted.add(key);
  }

  async close(): Promise<void> {
    try {
      await this.#db.close();
    } finally {
      await this.#repositoryFiles.close();
      await this.#backend.close();
    }
  }
}

class FilesRepository extends IndexedReads implements StoredRepository {
  readonly path: string;
  readonly epoch: string;
  /** Opened on the first apply for a repository that had no files. */
  #repository: Repository | undefined;
  readonly #openRepository: () => Promise<Repository>;
  readonly #index: BlockIndex;
  readonly #trust: (publicKey: Uint8Array) => Promise<void>;
  readonly #close: () => Promise<void>;
  /** Imports run one at a time, in arrival order. */
  #importing: Promise<unknown> = Promise.resolve();
  /** Placing runs one apply at a time too, in the same order, so positions follow it. */
  #placing: Promise<unknown> = Promise.resolve();

  constructor(
    path: string,
    repository: Repository | undefined,
    openRepository: () => Promise<Repository>,
    index: BlockIndex,
    epoch: string,
    trust: (publicKey: Uint8Array) => Promise<void>,
    close: () => Promise<void>,
  ) {
    super();
    this.path = path;
    this.#repository = repository;
    this.#openRepository = openRepository;
    this.#index = index;
    this.epoch = epoch;
    this.#trust = trust;
    this.#close = close;
  }

  protected get blockIndex(): BlockIndex {
    return this.#index;
  }

  versionVector(): Promise<VersionVector> {
    // What is placed, so durable: the repository also holds what a failed flush left unstored.
    return Promise.resolve(this.#index.versionVector());
  }

  /**
   * Import, then flush: the flush of a durable database resolves after an fsync that several
   * concurrent flushes share (storage/repository_log.ts), so pushes arriving together pay one.
   * A block is placed (given a position) only once durable, by the first apply that finds it
   * durable and not yet placed: a retry after a failed flush places what the failure left.
   */
  apply(blocks: readonly AuthorizedBlock[]): Promise<ApplyResult> {
    const imported = this.#importing.then(() => this.#import(blocks));
    this.#importing = imported.catch(() => {});
    const placed = Promise.all([imported, this.#placing]).then(([rejected]) =>
      this.#place(blocks, rejected)
    );
    this.#placing = placed.catch(() => {});
    return placed;
  }

  /** Imports and starts the flush; returns the refusals by index and the flush. */
  async #import(blocks: readonly AuthorizedBlock[]): Promise<{
    rejected: Map<number, { code: string; message: string }>;
    durable: Promise<void>;
  }> {
    if (blocks.length === 0) return { rejected: new Map(), durable: Promise.resolve() };
    for (const block of blocks) await this.#trust(block.publicKey);
    const repository = this.#repository ??= await this.#openRepository();
    const report = await repository.importBlocks(
      blocks.map((block) => new DecodedBlock(block.bytes, block.sealed)),
    );
    const rejected = new Map(
      report.rejected.map(({ index, error }) => [index, {
        code: error.code,
        message: error.message,
      }]),
    );
    const durable = repository.flush();
    durable.catch(() => {}); // awaited in #place, after the applies before it
    return { rejected, durable };
  }

  async #place(
    blocks: readonly AuthorizedBlock[],
    imported: {
      rejected: Map<number, { code: string; message: string }>;
      durable: Promise<void>;
    },
  ): Promise<ApplyResult> {
    await imported.durable;
    const outcomes: BlockOutcome[] = [];
    const placed: PlacedBlock[] = [];
    const newWriters: Writer[] = [];
    for (let i = 0; i < blocks.length; i++) {
      const refusal = imported.rejected.get(i);
      if (refusal) {
        outcomes.push({ status: "rejected", ...refusal });
        continue;
      }
      const { bytes, session, seq, publicKey } = blocks[i];
      if (this.#index.has(session, seq)) {
        outcomes.push({ status: "duplicate" });
        continue;
      }
      const writer = this.#index.add(bytes, session, seq, publicKey);
      if (writer) newWriters.push(writer);
      placed.push({ position: this.#index.head, bytes });
      outcomes.push({ status: "applied", position: this.#index.head });
    }
    return { outcomes, placed, newWriters, head: this.#index.head };
  }

  /** Alone on its files: nothing is ever placed elsewhere. */
  onPlacedElsewhere(): () => void {
    return () => {};
  }

  refresh(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return this.#repository ? this.#close() : Promise.resolve();
  }
}
