/**
 * `Cairn`: one database per process or tab. It owns the local session (an Ed25519 key pair),
 * the schema registry, the set of trusted peer sessions, the open repositories and, for a
 * database with a path, its storage: a directory (Deno, Node) or an OPFS directory (browser).
 */
import { sessionIdFromPublicKey } from "../core/block.ts";
import { bytesEqual, fromBase64Url, toBase64Url } from "../core/bytes.ts";
import { CairnError, isCairnError } from "../core/errors.ts";
import { HybridClock } from "../core/hlc.ts";
import { SchemaRegistry } from "../core/schema.ts";
import type { AnySchema } from "../core/schema_types.ts";
import type { CryptoSuite, SigningKey } from "../core/signing.ts";
import { Repository } from "../repo/repository.ts";
import { cryptoSuite } from "../runtime/crypto_suite.ts";
import { hasNodeModules } from "../runtime/platform.ts";
import type { StorageBackend } from "../storage/backend.ts";
import { openBackend } from "../storage/backends/select.ts";
import { opfsDirectory } from "../storage/backends/opfs_directory.ts";
import { LOG_FORMATS, logFormatForFile, logFormatNamed } from "../storage/log_convert.ts";
import type { LogFormat } from "../storage/log_format.ts";
import type { Durability } from "../storage/repository_log.ts";
import {
  type LogFormatName,
  readSettings,
  repositoryOfLogFile,
  repositorySettingsFile,
  SETTINGS_FILE,
  writeSettings,
} from "../storage/settings.ts";
import { badArgument, checkListener, checkOptions, describeShort, typeOf } from "./arguments.ts";
import { IndexDeclarations } from "./index_declarations.ts";
import { RepositoryLifetime } from "./lifetime.ts";
import { checkRepositoryPath } from "../core/repository_path.ts";
import { inFile, RepositoryFiles } from "./repository_files.ts";
import { RepositoryHandle, type RepositoryStats } from "./repository_handle.ts";
import { TypedReader } from "./typed_reader.ts";
import { openTabChannel } from "../tabs/broadcast_channel.ts";
import type { LockManagerLike } from "../tabs/locks.ts";
import type { FollowerRepositoryLink, TabChannel } from "../tabs/repository_link.ts";
import {
  type Persister,
  type SyncResponder,
  TabCoordinator,
  type TabEnvironment,
} from "../tabs/tab_coordinator.ts";
import { tabSecret } from "../tabs/tab_keys.ts";
import type { PersistedRepository } from "../tabs/tab_leader.ts";

export interface CairnOptions {
  /**
   * Where the database lives: a directory on Deno and Node, an OPFS directory in the browser.
   * Without a path the database lives in memory only.
   */
  path?: string;
  /** Log format of a new database: "binary" (default, compact) or "jsonl" (readable with jq). */
  format?: LogFormatName;
  /**
   * "relaxed" (default): writes are appended once per tick and not fsynced — a crash can lose the
   * last unflushed batch, never corrupt the log. "durable": `flush()` (and `item.commit()`)
   * resolve only after the batch is fsynced; concurrent writers share one fsync.
   */
  durability?: Durability;
  /**
   * Trusted mode: blocks are neither signed nor verified. For single-user local data where no
   * block ever comes from another party; much cheaper writes.
   */
  trusted?: boolean;
  /** The 32-byte secret of an existing session (from `exportSecretKey()`), to act as it again. */
  secretKey?: Uint8Array;
  /** Public keys (base64url, from a peer's `db.session.publicKey`) whose blocks are accepted. */
  trust?: readonly string[];
  /** Schemas to register up front, e.g. to read items a peer created before creating any here. */
  schemas?: readonly AnySchema[];
  /** Told about recoverable trouble: damaged log records skipped, a torn tail cut. */
  onWarning?: (warning: CairnWarning) => void;
  /**
   * Browser only: the URL of the OPFS worker script. Needed only when the page's
   * Content-Security-Policy forbids `blob:` workers (by default the worker travels inside Cairn's
   * bundle and starts from a Blob URL): serve cairndb's `dist/browser/opfs_worker.js` and name it
   * here. Ignored on Deno and Node.
   */
  workerUrl?: string | URL;
}

export interface CairnWarning {
  readonly repository: string;
  readonly message: string;
}

export interface SessionInfo {
  /** Short id derived from the public key; commit ids are `<session id>.<seq>`. */
  readonly id: string;
  /** The session's Ed25519 public key, base64url: give it to peers so they can trust you. */
  readonly publicKey: string;
}

interface OpenRepository {
  readonly handle: RepositoryHandle;
  readonly repo: Repository;
  readonly life: RepositoryLifetime;
  readonly files: RepositoryFiles | undefined;
  readonly indexes: IndexDeclarations | undefined;
  /** In a tab that follows another (docs/browser.md, "Many tabs"): its link to the leader. */
  readonly link: FollowerRepositoryLink | undefined;
  /** The close in progress, or the one that succeeded; cleared when one fails. */
  closing?: Promise<void>;
  /** The last close failed (E_IO): the repository stays, for reads and another close. */
  closeFailed?: boolean;
}

/** Opens a database directory's storage: this runtime's backend, or one given by a test. */
type BackendOpener = (path: string, options: CairnOptions) => Promise<StorageBackend>;

/**
 * `Cairn.open` on storage made by `openStorageBackend` instead of this runtime's backend: the
 * seam through which tests wrap the real backend (fault injection). Internal: mod.ts does not
 * export it.
 */
export function openCairnOn(
  options: CairnOptions,
  openStorageBackend: BackendOpener,
): Promise<Cairn> {
  return cairnInternals().open(options, openStorageBackend);
}

/**
 * @internal What a sync link in a tab of a shared stored database needs of its tab (src/sync/
 * tab_sync.ts; tests build fakes).
 */
export interface TabSyncEnvironment {
  /** This tab's id on the channel. */
  readonly tab: string;
  /** A channel object of the database, closed with the link. */
  openChannel(): TabChannel & { close(): void };
  /**
   * Calls `listener` with the database this tab serves from (undefined while another tab
   * serves), now and on each change. Returns the function that stops it.
   */
  watchHost(listener: (host: Cairn | undefined) => void): () => void;
  /** Answers the other tabs about `url` with `responder` while this tab serves. */
  answer(url: string, responder: SyncResponder): () => void;
  /** Resolves once every block this tab sealed is persisted by the tab that serves. */
  flush(): Promise<void>;
  /** This tab's own database, for a connection of its own (`sync-absent`). */
  readonly own: Cairn;
  /**
   * Whether `tab` is the leader this tab knows: the serving tab's reports are taken from it
   * only, not from one that lost the lead without learning it yet.
   */
  isLeader(tab: string): boolean;
}

/**
 * @internal For src/sync: the tab side of a database shared by the tabs of an origin, or
 * undefined for any other database.
 */
export function tabSyncEnvironment(db: Cairn): TabSyncEnvironment | undefined {
  return cairnInternals().tabSync(db);
}

/** @internal What the functions of this module that are not Cairn's methods reach inside a Cairn. */
interface CairnInternals {
  open(options: CairnOptions, openStorageBackend: BackendOpener): Promise<Cairn>;
  signAs(db: Cairn, message: Uint8Array): Promise<Uint8Array>;
  watch(db: Cairn, watcher: RepositoryWatcher): () => void;
  tabSync(db: Cairn): TabSyncEnvironment | undefined;
}

/** The token `Cairn.internals` asks for; this module never hands it out. */
const INTERNALS_TOKEN: object = {};
let internals: CairnInternals | undefined;

function cairnInternals(): CairnInternals {
  return internals ??= Cairn.internals(INTERNALS_TOKEN);
}

/** Told when a repository of a database is opened or closed (see watchRepositories). */
export interface RepositoryWatcher {
  opened(repo: Repository): void;
  closed(repo: Repository): void;
  /** The whole database closed (after `closed` for each of its repositories). */
  ended?(): void;
}

/**
 * @internal For src/sync: signs `message` with the database's session key (the handshake's
 * proof). Not on the Cairn object, so the public API cannot sign arbitrary bytes as the session.
 */
export function signAsSession(db: Cairn, message: Uint8Array): Promise<Uint8Array> {
  return cairnInternals().signAs(db, message);
}

/**
 * @internal For src/sync: tells `watcher` about every open repository now, then about each one
 * opened or closed later (a whole database's close closes each). Returns the unsubscribe.
 */
export function watchRepositories(db: Cairn, watcher: RepositoryWatcher): () => void {
  return cairnInternals().watch(db, watcher);
}

/**
 * @internal For src/sync's stores: the repository behind `db`'s open handle of `path` (its
 * importBlocks takes blocks the store decoded already).
 */
export function repositoryOf(db: Cairn, path: string): Repository {
  let found: Repository | undefined;
  watchRepositories(db, {
    opened: (repo) => {
      if (repo.path === path) found = repo;
    },
    closed: () => {},
  })();
  if (!found) throw new CairnError("E_CLOSED", `repository ${path} is not open`);
  return found;
}

interface Storage {
  readonly backend: StorageBackend;
  /** The stored session's secret: the session of a database open in one tab or process. */
  readonly secretKey: Uint8Array;
  /** The database's directory, for messages. */
  readonly path: string;
  readonly format: LogFormatName;
  readonly durability: Durability;
  /**
   * Whether the directory's file names ignore case (macOS, Windows): there two repository paths
   * that differ only in case would share their files, so the second is refused (#refuseCaseTwin).
   */
  readonly caseInsensitive: boolean;
}

export class Cairn {
  readonly session: SessionInfo;
  readonly trusted: boolean;
  readonly #key: SigningKey;
  /** Seals the checkpoints: the stored session's key (a tab may sign with another, tab_keys.ts). */
  readonly #storedKey: SigningKey;
  readonly #suite: CryptoSuite;
  readonly #storage: Storage | undefined;
  /** In a browser, the tabs that share this stored database (docs/browser.md, "Many tabs"). */
  readonly #tabs: TabCoordinator | undefined;
  readonly #onWarning: (warning: CairnWarning) => void;
  readonly #registry = new SchemaRegistry();
  readonly #reader = new TypedReader(this.#registry);
  readonly #clock = new HybridClock();
  readonly #trustedSessions = new Set<string>();
  /** Open repositories, and those being opened (their logs read): both by path. */
  readonly #repositories = new Map<string, OpenRepository>();
  readonly #opening = new Map<string, Promise<OpenRepository>>();
  /**
   * Without storage: the blocks of each repository closed, so the path opens again with its data
   * and its chains. A fresh repository would seal this session's blocks from seq 1 again, which
   * every peer holding the earlier ones refuses as a fork.
   */
  readonly #closedInMemory = new Map<string, Uint8Array[]>();
  #watchers: readonly RepositoryWatcher[] = [];
  /** In a tab: the stored database this tab serves the others from, while it does. */
  #syncHost: Cairn | undefined;
  readonly #syncHostListeners = new Set<(host: Cairn | undefined) => void>();
  #closed = false;
  /** How many `close()` calls of the whole database run: opening a repository then is E_CLOSED. */
  #closing = 0;

  private constructor(
    session: SessionInfo,
    keys: { key: SigningKey; storedKey: SigningKey },
    suite: CryptoSuite,
    options: CairnOptions,
    storage: Storage | undefined,
    tabs: TabCoordinator | undefined,
  ) {
    this.session = session;
    this.#key = keys.key;
    this.#storedKey = keys.storedKey;
    this.#suite = suite;
    this.trusted = options.trusted === true;
    this.#storage = storage;
    this.#tabs = tabs;
    this.#onWarning = options.onWarning ?? warnOnConsole;
    storage?.backend.onLost?.((error) => this.#storageLost(storage.path, error));
  }

  /**
   * The storage can store nothing more (its OPFS worker ended): the database closes, so that the
   * app learns it must open it again (`closed`, E_CLOSED), and a leading tab lets go of the lead,
   * which another tab, with a storage of its own, takes with the followers' writes. Kept open,
   * it failed every write with E_IO, and held the lead, for as long as the app did not close it.
   */
  #storageLost(directory: string, error: Error): void {
    this.#onWarning({
      repository: directory,
      message: `the storage can store nothing more (${error.message}): the database closes; ` +
        "writes since the last flush were not stored; open it again",
    });
    this.close().catch(() => {}); // fails with E_IO (see close), and closes
  }

  /**
   * Opens a database: in memory, or at `path` (created if new). A database at a path keeps its
   * session (key pair) and log format in a settings file, and takes a writer lock: a second
   * process or tab opening it gets `E_LOCKED`.
   */
  static open(options: CairnOptions = {}): Promise<Cairn> {
    return Cairn.#open(options, openBackend);
  }

  /**
   * @internal The seams behind openCairnOn, signAsSession and watchRepositories, handed only to
   * the holder of this module's token, so the public object cannot sign arbitrary bytes as its
   * session. A method rather than a static block: bundlers count a static block as a side
   * effect and then keep the whole engine in every app that imports anything of cairndb.
   */
  static internals(token: object): CairnInternals {
    if (token !== INTERNALS_TOKEN) {
      throw new CairnError("E_BAD_ARGUMENT", "Cairn.internals is not public API");
    }
    return {
      open: (options, openStorageBackend) => Cairn.#open(options, openStorageBackend),
      signAs: (db, message) => db.#suite.ed25519.sign(db.#key, message),
      watch: (db, watcher) => {
        db.#watchers = [...db.#watchers, watcher];
        for (const { repo } of db.#repositories.values()) watcher.opened(repo);
        return () => db.#watchers = db.#watchers.filter((other) => other !== watcher);
      },
      tabSync: (db) => db.#tabSync(),
    };
  }

  #tabSync(): TabSyncEnvironment | undefined {
    const tabs = this.#tabs;
    if (!tabs) return undefined;
    return {
      tab: tabs.tab,
      openChannel: () => openTabChannel(tabs.directory),
      watchHost: (listener) => {
        this.#syncHostListeners.add(listener);
        listener(this.#syncHost);
        return () => this.#syncHostListeners.delete(listener);
      },
      answer: (url, responder) => tabs.answerSync(url, responder),
      flush: () => this.flush(),
      own: this,
      isLeader: (tab) => tabs.isLeader(tab),
    };
  }

  /** This tab started or stopped serving the other tabs from `host` (see #tabSync). */
  #setSyncHost(host: Cairn | undefined): void {
    if (this.#syncHost === host) return;
    this.#syncHost = host;
    for (const listener of [...this.#syncHostListeners]) listener(host);
  }

  static async #open(
    given: CairnOptions,
    openStorageBackend: BackendOpener,
    shareWithTabs = true,
  ): Promise<Cairn> {
    // Every option is checked before storage is touched: a refused open leaves no file behind.
    const options = checkCairnOptions(given);
    const suite = await cryptoSuite();
    if (shareWithTabs && options.path !== undefined && openStorageBackend === openBackend) {
      const locks = browserLocks();
      if (locks) return await Cairn.#openInTab(options, suite, locks);
    }
    const storage = options.path === undefined
      ? undefined
      : await openStorage(options, suite, openStorageBackend);
    try {
      // A stored database is always its stored session; otherwise the given one, or a new one.
      const secret = storage?.secretKey ?? options.secretKey;
      const key = secret ? await suite.ed25519.fromSecret(secret) : await suite.ed25519.generate();
      return await Cairn.#made({ key, storedKey: key }, suite, options, storage, undefined);
    } catch (err) {
      await storage?.backend.close();
      throw err;
    }
  }

  static async #made(
    keys: { key: SigningKey; storedKey: SigningKey },
    suite: CryptoSuite,
    options: CairnOptions,
    storage: Storage | undefined,
    tabs: TabCoordinator | undefined,
  ): Promise<Cairn> {
    const session = {
      id: await sessionIdFromPublicKey(keys.key.publicKey, suite),
      publicKey: toBase64Url(keys.key.publicKey),
    };
    const db = new Cairn(session, keys, suite, options, storage, tabs);
    for (const publicKey of options.trust ?? []) await db.trust(publicKey);
    db.register(...options.schemas ?? []);
    return db;
  }

  /**
   * A stored database in a browser tab, shared with the origin's other tabs: the tab that leads
   * opens the storage (as one tab always did) and serves the others; another tab holds the
   * database in memory, linked to the leader, until it is granted the lead itself (then it opens
   * the storage beside it). Each tab signs with its own key from the pool (tab_keys.ts).
   */
  static async #openInTab(
    options: CairnOptions,
    suite: CryptoSuite,
    locks: LockManagerLike,
  ): Promise<Cairn> {
    // As the storage names it: "app" and "/app/" are one database, with one election.
    const directory = opfsDirectory(options.path!);
    let opened: Cairn | undefined;
    const warn = options.onWarning ?? warnOnConsole;
    const environment: TabEnvironment = {
      directory,
      locks,
      openChannel: () => openTabChannel(directory),
      now: () => Date.now(),
      visible: () =>
        (globalThis as { document?: { visibilityState?: string } }).document?.visibilityState !==
          "hidden",
      openPersister: () => Cairn.#openPersister(options),
      tookOver: () => {
        if (!opened) return;
        // Another tab serves now: this tab's sync links stop connecting from its database.
        opened.#setSyncHost(undefined);
        opened.close().catch(() => {});
      },
      servingFrom: (persister) => {
        if (opened) opened.#setSyncHost(persister && servedDatabases.get(persister));
      },
      onRefused: (error) =>
        warn({ repository: directory, message: `from another tab: ${describeError(error)}` }),
    };
    const { coordinator, leads, storedSecret: leadersSecret } = await TabCoordinator.join(
      environment,
    );
    let storage: Storage | undefined;
    try {
      storage = leads ? await openStoragePatiently(options, suite) : undefined;
      const storedSecret = storage?.secretKey ?? leadersSecret!;
      if (options.secretKey && !bytesEqual(options.secretKey, storedSecret)) {
        throw new CairnError(
          "E_BAD_ARGUMENT",
          `the database at ${directory} belongs to another session than the given secretKey`,
        );
      }
      const storedKey = await suite.ed25519.fromSecret(storedSecret);
      const key = coordinator.keyIndex === 0 ? storedKey : await suite.ed25519.fromSecret(
        await tabSecret(suite, storedSecret, coordinator.keyIndex),
      );
      const keys = { key, storedKey };
      const db = await Cairn.#made(keys, suite, options, storage, coordinator);
      opened = db;
      if (storage) {
        coordinator.lead({
          storedSecret,
          repository: (path) => db.#persisted(path),
          flush: () => db.flush(),
        });
        db.#setSyncHost(db);
      }
      return db;
    } catch (err) {
      await storage?.backend.close();
      await coordinator.close();
      throw err;
    }
  }

  /** A tab granted the lead after open: the stored database, opened beside the tab's own. */
  static async #openPersister(options: CairnOptions): Promise<Persister> {
    const persister = await Cairn.#open(options, openBackend, false);
    const served: Persister = {
      storedSecret: persister.#storage!.secretKey,
      repository: (path) => persister.#persisted(path),
      flush: () => persister.flush(),
      close: () => persister.close(),
    };
    servedDatabases.set(served, persister);
    return served;
  }

  /**
   * A repository of this stored database, for the tabs that follow: opened if it is not, and
   * opened again once closed if this page is closing it (unless that close fails: then it is
   * given as it is, and the push fails with E_CLOSED).
   */
  async #persisted(path: string): Promise<PersistedRepository> {
    for (;;) {
      await this.open(path);
      const open = await this.#onceClosed(path);
      if (open) return { repo: open.repo, persist: () => open.repo.flush() };
    }
  }

  #checkMayOpen(): void {
    this.#checkOpen();
    if (this.#closing > 0) throw new CairnError("E_CLOSED", "the database is closing");
  }

  /**
   * The open repository at `path` once a close of it in progress has ended: undefined if it
   * closed (the path opens anew), the same one if the close failed.
   */
  async #onceClosed(path: string): Promise<OpenRepository | undefined> {
    for (;;) {
      const open = this.#repositories.get(path);
      if (!open?.repo.closed || open.closeFailed) return open;
      if (open.closing) await open.closing.catch(() => {});
      else await new Promise((resolve) => setTimeout(resolve, 1)); // close() awaits opens first
    }
  }

  /** The session's 32-byte secret: keep it safe; `Cairn.open({ secretKey })` resumes the session. */
  exportSecretKey(): Uint8Array {
    this.#checkOpen();
    return this.#key.secret.slice();
  }

  /**
   * Registers schemas (creating an item, or reading one with an explicit schema, registers it
   * too). Items whose concurrent versions waited for one of these schemas are merged now.
   */
  register(...schemas: AnySchema[]): void {
    this.#checkOpen();
    const added = new Set<string>();
    for (const schema of schemas) {
      // Registered already (the usual call, from every create): nothing to do. Anything that is
      // not a schema is refused by the registry (E_BAD_SCHEMA).
      const id = typeof schema === "object" && schema !== null ? schema.id : undefined;
      if (id !== undefined && this.#registry.get(id) === schema) continue;
      this.#registry.register(schema);
      if (this.#registry.get(schema.id) === schema) added.add(schema.id);
    }
    if (added.size === 0) return;
    // Repositories still opening merge again themselves once loaded (see #openRepository).
    for (const { repo, handle } of this.#repositories.values()) {
      repo.remergeUnresolved();
      handle.schemasRegistered(added);
    }
  }

  /** Accepts blocks signed by the session with this public key (base64url). */
  async trust(publicKey: string): Promise<void> {
    this.#checkOpen();
    this.#trustedSessions.add(await sessionIdFromPublicKey(publicKeyBytes(publicKey), this.#suite));
  }

  /**
   * Opens (creating if new) the repository at `path`, e.g. "/data/todos". With storage, its
   * log is read and applied first; damaged records are skipped and reported (`stats()`, and the
   * `onWarning` option).
   */
  async open(path: string): Promise<RepositoryHandle> {
    this.#checkMayOpen();
    checkRepositoryPath(path);
    const open = await this.#onceClosed(path);
    if (open) return open.handle;
    this.#checkMayOpen(); // the database may have begun to close meanwhile
    let opening = this.#opening.get(path);
    if (!opening) {
      opening = this.#openRepository(path).finally(() => this.#opening.delete(path));
      this.#opening.set(path, opening);
    }
    return (await opening).handle;
  }

  /**
   * Resolves when every write so far, in every open repository, is sealed and on disk (fsynced,
   * whatever the durability mode). Fails with E_IO when a write fails (a full disk); nothing is
   * lost then: the next flush (or close) writes it again. In a tab that follows another, the
   * tab that serves the database stores the writes and then flushes all it stored.
   */
  async flush(): Promise<void> {
    this.#checkOpen();
    await Promise.allSettled(this.#opening.values());
    await Promise.all([...this.#repositories.values()].map(async ({ repo, files, indexes }) => {
      await repo.flush();
      await files?.sync();
      await indexes?.settled();
    }));
    if (this.#follows) await this.#tabs!.flushLeader();
  }

  /**
   * True once `close()` has closed the database: not while it runs, nor after it failed (the
   * database then stays open).
   */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Flushes and closes one repository, or (without a path) every repository and the database.
   * Fails with E_IO when a repository's log cannot be written (a full disk): that repository
   * then stays open with everything it holds — reads work, writes fail with E_CLOSED — and so
   * does the database (and its lock), so close() can be called again once there is room. Storage
   * lost for good (the backend's `lost`: its OPFS worker ended) closes all the same, failing with
   * E_IO: what was not stored before is gone, and the database can be opened again.
   */
  async close(path?: string): Promise<void> {
    if (path !== undefined) checkRepositoryPath(path);
    if (this.#closed) return; // closing again: nothing left to do
    const whole = path === undefined;
    if (whole) {
      this.#closing++;
      // Other tabs wait for the next leader rather than for repositories that are closing.
      this.#tabs?.stopServing();
    }
    // Writes are refused from this call on, so what the close flushes is all there is.
    for (const [repoPath, { repo }] of this.#repositories) {
      if (whole || repoPath === path) repo.close();
    }
    try {
      await Promise.allSettled(this.#opening.values());
      const paths = whole ? [...this.#repositories.keys()] : [path];
      let failure: unknown;
      for (const repoPath of paths) {
        const open = this.#repositories.get(repoPath);
        if (!open) continue;
        try {
          await this.#closeRepository(open);
        } catch (err) {
          failure ??= err;
          // Storage that is gone for good (its worker ended) cannot take a retry: close anyway.
          if (!this.#storage?.backend.lost) continue;
          open.life.end();
        }
        if (this.#repositories.get(repoPath) === open) {
          this.#repositories.delete(repoPath);
          for (const watcher of this.#watchers) watcher.closed(open.repo);
        }
      }
      const lost = this.#storage?.backend.lost;
      if (failure !== undefined && !lost) throw failure;
      if (whole && !this.#closed) {
        this.#closed = true;
        for (const watcher of this.#watchers) watcher.ended?.();
        await this.#storage?.backend.close().catch((err) => {
          if (!lost) throw err;
        });
        // After the storage: the next leader opens it as soon as this tab lets go of the lead.
        await this.#tabs?.close();
      }
      if (failure !== undefined) throw failure;
    } finally {
      if (whole) this.#closing--;
    }
  }

  /**
   * Refuses the repository's writes first, so that what the flush writes is all there is. One
   * close at a time per repository: concurrent calls share it, a failed one can be retried.
   */
  #closeRepository(open: OpenRepository): Promise<void> {
    open.closeFailed = false;
    open.closing ??= (async () => {
      const { repo, files, indexes, life, link } = open;
      repo.close();
      await repo.flush();
      if (!files && !link) this.#closedInMemory.set(repo.path, await repo.exportBlocks());
      if (link) this.#tabs?.unfollow(link);
      await files?.close();
      await indexes?.close();
      life.end();
    })().catch((err) => {
      open.closing = undefined;
      open.closeFailed = true;
      throw err;
    });
    return open.closing;
  }

  /**
   * A stored repository's index declarations and files, read at the same time (each file read
   * is a round trip to the runtime's I/O threads). If either fails, the log opened by the other
   * is closed again.
   */
  async #openFiles(
    storage: Storage,
    path: string,
  ): Promise<[IndexDeclarations, RepositoryFiles]> {
    if (storage.caseInsensitive) await this.#refuseCaseTwin(storage, path);
    const [indexes, files] = await Promise.allSettled([
      IndexDeclarations.open(
        storage.backend,
        path,
        (message) => this.#onWarning({ repository: path, message }),
      ),
      RepositoryFiles.open(
        storage.backend,
        path,
        storage.format,
        storage.durability,
        this.#suite,
        (message) => this.#onWarning({ repository: path, message }),
        this.#storedKey,
        storage.path,
      ),
    ]);
    if (indexes.status === "rejected") {
      if (files.status === "fulfilled") await files.value.discard();
      throw inFile(indexes.reason, `${storage.path}/${repositorySettingsFile(path)}`);
    }
    if (files.status === "rejected") throw files.reason;
    return [indexes.value, files.value];
  }

  /**
   * On a disk whose names ignore case, refuses a repository whose path differs only in case from
   * one open, opening or stored here: their files would be the same files, written by both.
   */
  async #refuseCaseTwin(storage: Storage, path: string): Promise<void> {
    const twin = (other: string) => other !== path && other.toLowerCase() === path.toLowerCase();
    let found = [...this.#repositories.keys(), ...this.#opening.keys()].find(twin);
    if (!found) {
      // Every stored repository has a log: its name gives the repository's path back.
      const extension = logFormatNamed(storage.format).fileExtension;
      found = (await storage.backend.listFiles())
        .filter((name) => name.endsWith(extension))
        .map((name) => `/${name.slice(0, -extension.length).replaceAll("~", "/")}`)
        .find(twin);
    }
    if (found !== undefined) {
      throw new CairnError(
        "E_BAD_ARGUMENT",
        `${path}: the files of ${storage.path} ignore case, and another repository ` +
          `(${found}) differs from it only in case`,
      );
    }
  }

  /** Whether this is a tab that follows another: its database in memory, the leader's stored. */
  get #follows(): boolean {
    return this.#tabs !== undefined && this.#storage === undefined;
  }

  async #openRepository(path: string): Promise<OpenRepository> {
    const storage = this.#storage;
    const [indexes, files] = storage ? await this.#openFiles(storage, path) : [];
    // A tab that follows another: loaded from the leader, acknowledged once the leader persisted.
    const follows = this.#follows;
    let link: FollowerRepositoryLink | undefined;
    const repo = new Repository(path, {
      session: this.session.id,
      publicKey: this.#key.publicKey,
      signer: this.trusted ? null : { key: this.#key, ed25519: this.#suite.ed25519 },
      suite: this.#suite,
      registry: this.#registry,
      clock: this.#clock,
      isTrusted: (session) => this.#trustedSessions.has(session),
      persist: files && ((sealed) => files.append(sealed)),
      onRepaired: files && (() => files.repaired()),
      persisted: files
        ? () => files.flush()
        : follows
        ? () => link?.acknowledged() ?? Promise.resolve()
        : undefined,
    });
    if (follows) link = await this.#tabs!.follow(repo);
    const kept = this.#closedInMemory.get(path);
    if (kept) {
      // Accepted once already, from whoever wrote them: not checked against the writers again.
      await repo.importBlocks(kept, undefined, { trustAuthors: true });
      this.#closedInMemory.delete(path);
    }
    let stats: RepositoryStats = { damaged: [], tornTailBytes: 0, unloadable: [] };
    if (files) {
      let loaded;
      try {
        loaded = await files.loadInto(repo);
      } catch (err) {
        // Nothing of a repository that failed to open stays open (or, if new, on disk).
        await files.discard();
        await indexes?.close();
        throw err;
      }
      const { checkpointProblem, ...found } = loaded;
      stats = found;
      this.#warnAbout(path, stats);
      this.#warnAboutMissing(path, repo);
      if (checkpointProblem) {
        this.#onWarning({
          repository: path,
          message: `rebuilt from the log: the checkpoint was unusable (${checkpointProblem})`,
        });
      }
    }
    const register = (schema: AnySchema) => this.register(schema);
    const life = new RepositoryLifetime(path);
    const handle = new RepositoryHandle(
      this,
      repo,
      life,
      register,
      this.#registry,
      this.#reader,
      stats,
      indexes,
    );
    const open = { handle, repo, life, files, indexes, link };
    this.#repositories.set(path, open);
    // Schemas registered while the log was read: merge what waited for them.
    repo.remergeUnresolved();
    for (const watcher of this.#watchers) watcher.opened(repo);
    return open;
  }

  #warnAbout(path: string, stats: RepositoryStats): void {
    for (const damage of stats.damaged) {
      this.#onWarning({
        repository: path,
        message: `skipped a damaged log record at byte ${damage.offset} (${damage.reason})`,
      });
    }
    if (stats.tornTailBytes > 0) {
      this.#onWarning({
        repository: path,
        message: `cut an incomplete last record (${stats.tornTailBytes} bytes) left by a crash`,
      });
    }
    for (const lost of stats.unloadable) {
      this.#onWarning({
        repository: path,
        message: `could not apply stored block ${lost.session}/${lost.seq}: ${lost.error.message}`,
      });
    }
  }

  #warnAboutMissing(path: string, repo: Repository): void {
    const { blocks, heldBackCommits, heldBackItems } = repo.missingHistory();
    if (blocks.length === 0 && heldBackCommits === 0) return;
    const runs = blocks.map(({ session, first, last }) =>
      first === last ? `${session}/${first}` : `${session}/${first}-${last}`
    );
    this.#onWarning({
      repository: path,
      message: `history lost to damage: ${heldBackCommits} commits of ${heldBackItems} items ` +
        `wait for blocks it held${runs.length > 0 ? ` (${runs.join(", ")})` : ""}; ` +
        `importing from a peer that holds them repairs it (see docs/storage.md, "Repair")`,
    });
  }

  #checkOpen(): void {
    if (this.#closed) throw new CairnError("E_CLOSED", "the database is closed");
  }
}

const OPTION_NAMES: readonly string[] = [
  "path",
  "format",
  "durability",
  "trusted",
  "secretKey",
  "trust",
  "schemas",
  "onWarning",
  "workerUrl",
];

/**
 * Checks every option, pure checks only (no file is touched): the secret key's length, each
 * trusted key, each schema (registered into a scratch registry, so the real registration after
 * storage is opened cannot fail).
 */
function checkCairnOptions(given: unknown): CairnOptions {
  const options: CairnOptions = checkOptions<CairnOptions>(
    given,
    "Cairn.open options",
    OPTION_NAMES,
  );
  const bad = badArgument;
  if (
    options.path !== undefined &&
    (typeof options.path !== "string" || options.path.length === 0 ||
      !options.path.isWellFormed())
  ) {
    throw bad("path must be a non-empty string");
  }
  if (options.trusted !== undefined && typeof options.trusted !== "boolean") {
    throw bad(`trusted must be a boolean, got ${typeOf(options.trusted)}`);
  }
  if (options.secretKey !== undefined) {
    if (!(options.secretKey instanceof Uint8Array) || options.secretKey.length !== 32) {
      throw new CairnError("E_BAD_KEY", "secretKey must be 32 bytes (from db.exportSecretKey())");
    }
  }
  if (options.trust !== undefined) {
    if (!Array.isArray(options.trust)) {
      throw bad(`trust is an array of public keys, got ${typeOf(options.trust)}`);
    }
    for (const key of options.trust) publicKeyBytes(key);
  }
  if (options.schemas !== undefined) {
    if (!Array.isArray(options.schemas)) {
      throw bad(`schemas is an array of schemas, got ${typeOf(options.schemas)}`);
    }
    const scratch = new SchemaRegistry();
    for (const schema of options.schemas) scratch.register(schema);
  }
  if (options.onWarning !== undefined) checkListener(options.onWarning, "onWarning");
  if (
    options.workerUrl !== undefined &&
    !(options.workerUrl instanceof URL ||
      (typeof options.workerUrl === "string" && options.workerUrl.length > 0))
  ) {
    throw bad(`workerUrl must be a URL or a non-empty string, got ${typeOf(options.workerUrl)}`);
  }
  if (
    options.format !== undefined && !LOG_FORMATS.some((format) => format.name === options.format)
  ) {
    throw bad(`format must be "binary" or "jsonl", got ${describeShort(options.format)}`);
  }
  if (
    options.durability !== undefined && options.durability !== "relaxed" &&
    options.durability !== "durable"
  ) {
    throw bad(
      `durability must be "relaxed" or "durable", got ${describeShort(options.durability)}`,
    );
  }
  return options;
}

/** A peer's public key (base64url of 32 bytes), decoded; E_BAD_KEY for anything else. */
function publicKeyBytes(publicKey: unknown): Uint8Array {
  const bytes = typeof publicKey === "string" ? fromBase64Url(publicKey) : undefined;
  if (!bytes || bytes.length !== 32) {
    throw new CairnError(
      "E_BAD_KEY",
      "a public key is 32 bytes in base64url (a peer's db.session.publicKey)",
    );
  }
  return bytes;
}

/** Opens the backend, takes the lock, and reads (or creates) the settings file. */
async function openStorage(
  options: CairnOptions,
  suite: CryptoSuite,
  openStorageBackend: BackendOpener,
): Promise<Storage> {
  const backend = await openStorageBackend(options.path!, options);
  try {
    // Inside the try: a backend whose lock is held elsewhere (E_LOCKED) is closed too, or its
    // OPFS worker lives on, one per attempt of openStoragePatiently.
    await backend.acquireLock();
    let settings;
    try {
      settings = await readSettings(backend);
    } catch (err) {
      // Named in full: the user must find the file.
      if (!isCairnError(err)) throw err;
      const message = err.message.slice(err.code.length + 2);
      throw new CairnError(err.code, `${options.path}/${SETTINGS_FILE}: ${message}`, {
        cause: err,
      });
    }
    if (!settings) {
      settings = {
        format: await formatOfNewSettings(backend, options),
        secretKey: options.secretKey ?? (await suite.ed25519.generate()).secret,
      };
      await writeSettings(backend, settings);
    } else if (options.secretKey && !bytesEqual(options.secretKey, settings.secretKey)) {
      throw new CairnError(
        "E_BAD_ARGUMENT",
        `the database at ${options.path} belongs to another session than the given secretKey`,
      );
    } else if (options.format !== undefined && options.format !== settings.format) {
      throw new CairnError(
        "E_BAD_ARGUMENT",
        `the database at ${options.path} uses the ${settings.format} format, not ${options.format}: ` +
          `open it without "format" to keep it; to change it, see "Converting between formats" in Cairn's docs/storage.md`,
      );
    }
    return {
      backend,
      path: options.path!,
      format: settings.format,
      durability: options.durability ?? "relaxed",
      secretKey: settings.secretKey,
      // OPFS names are case-sensitive; a disk's are if the settings file is not found in capitals.
      caseInsensitive: backend.kind === "fs" &&
        await backend.readFile(SETTINGS_FILE.toUpperCase()) !== undefined,
    };
  } catch (err) {
    await backend.close();
    throw err;
  }
}

/**
 * The format of a database directory without settings. Logs already there mean its cairn.json was
 * lost: a new log of the other format beside them would hide their items, and writes to it would be
 * lost once the old cairn.json came back. So their format is kept, and a warning says the database
 * signs with a new key from now on (their blocks stay readable: they are its own storage).
 */
async function formatOfNewSettings(
  backend: StorageBackend,
  options: CairnOptions,
): Promise<LogFormatName> {
  const found = new Set<LogFormatName>();
  for (const name of await backend.listFiles()) {
    const format = logFormatForFile(name);
    if (format && await isCairnLog(backend, name, format)) found.add(format.name);
  }
  if (found.size === 0) return options.format ?? "binary";
  const where = `${options.path}/${SETTINGS_FILE}`;
  const [format] = found;
  if (found.size > 1) {
    throw new CairnError(
      "E_NOT_A_LOG",
      `${where} is missing, and the directory holds logs of both formats: restore it from a backup`,
    );
  }
  if (options.format !== undefined && options.format !== format) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      `${where} is missing, and the logs there are ${format}, not ${options.format}: restore it ` +
        `from a backup, or open without "format" to go on with them`,
    );
  }
  (options.onWarning ?? warnOnConsole)({
    repository: options.path!,
    message: `${where} was missing beside ${format} logs: a new one keeps their format and holds ` +
      `${options.secretKey ? "the given secretKey" : "a new session key"}, which signs from now ` +
      `on (put the old file back, with the database closed, to sign with the old key again)`,
  });
  return format;
}

/**
 * Whether file `name` is a log Cairn wrote: named as a repository's log is, and starting with its
 * format's header. An app's own "server.log" beside a new database, or a directory named so, is not.
 */
async function isCairnLog(
  backend: StorageBackend,
  name: string,
  format: LogFormat,
): Promise<boolean> {
  if (repositoryOfLogFile(name, format) === undefined) return false;
  const header = format.header();
  const start = await backend.readRange(name, 0, header.length).catch(() => undefined);
  return start !== undefined && start.bytes.length === header.length &&
    start.bytes.every((byte, i) => byte === header[i]);
}

/** The database behind each persister a tab serves from after a promotion. */
const servedDatabases = new WeakMap<Persister, Cairn>();

/** `navigator.locks` in a browser (where the storage is OPFS); undefined on Deno and Node. */
function browserLocks(): LockManagerLike | undefined {
  if (hasNodeModules() || typeof BroadcastChannel !== "function") return undefined;
  return (globalThis.navigator as { locks?: LockManagerLike } | undefined)?.locks;
}

/**
 * The tab that leads opens the storage; the last leader's worker may still hold it for a moment
 * after its lock was released (a reload): E_LOCKED is retried for up to STORAGE_WAIT_MS.
 */
async function openStoragePatiently(
  options: CairnOptions,
  suite: CryptoSuite,
): Promise<Storage> {
  const deadline = Date.now() + STORAGE_WAIT_MS;
  for (let delay = 20;; delay = Math.min(delay * 2, 500)) {
    try {
      return await openStorage(options, suite, openBackend);
    } catch (err) {
      if (!isCairnError(err, "E_LOCKED") || Date.now() + delay > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

const STORAGE_WAIT_MS = 3_000;

/** Where warnings go when the app gives no `onWarning`. */
function warnOnConsole(warning: CairnWarning): void {
  console.warn(`cairn ${warning.repository}: ${warning.message}`);
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
