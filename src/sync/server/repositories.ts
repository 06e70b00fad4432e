/**
 * The repositories a server has open, each with its subscribers. A repository is opened on first
 * use and closed once it has had no subscriber and no push in flight for `idleCloseMs`, so a
 * server does not hold every repository it ever served.
 */
import type { ApplyResult, StoredRepository, SyncStore } from "./store.ts";

/** What a subscriber is told when blocks are placed. */
export interface RepositoryListener {
  /** Blocks were placed; `fromPusher` is true for the listener whose connection pushed them. */
  placed(result: ApplyResult, fromPusher: boolean): void;
  /** Telling it failed (a frame it could not be sent). */
  failed(err: unknown): void;
}

export class OpenRepository {
  readonly stored: StoredRepository;
  readonly listeners = new Set<RepositoryListener>();
  /** Pushes in flight and subscriptions: the repository is not idle while any. */
  users = 0;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Stops the reports of blocks other servers placed (when the repository closes). */
  readonly stopReports: () => void;

  constructor(stored: StoredRepository) {
    this.stored = stored;
    // Blocks another server placed reach this server's subscribers as from no pusher.
    this.stopReports = stored.onPlacedElsewhere((result) => this.publish(result, undefined));
  }

  /** Tells every listener, in the order results come (position order). */
  publish(result: ApplyResult, pusher: RepositoryListener | undefined): void {
    if (result.placed.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener.placed(result, listener === pusher);
      } catch (err) {
        listener.failed(err); // that listener's connection ends; the others are told
      }
    }
  }
}

export class Repositories {
  readonly #store: SyncStore;
  readonly #idleCloseMs: number;
  readonly #open = new Map<string, Promise<OpenRepository>>();
  /** Idle repositories being closed: opened again only once closed. */
  readonly #closing = new Map<string, Promise<void>>();

  constructor(store: SyncStore, idleCloseMs: number) {
    this.#store = store;
    this.#idleCloseMs = idleCloseMs;
  }

  /** Opens (or finds) a repository and counts a user of it until `release`. */
  async acquire(path: string): Promise<OpenRepository> {
    let opening = this.#open.get(path);
    if (!opening) {
      const closed = this.#closing.get(path) ?? Promise.resolve();
      opening = closed.then(() => this.#store.openRepository(path))
        .then((stored) => new OpenRepository(stored));
      this.#open.set(path, opening);
      opening.catch(() => this.#open.delete(path));
    }
    const repository = await opening;
    repository.users++;
    clearTimeout(repository.idleTimer);
    repository.idleTimer = undefined;
    return repository;
  }

  release(repository: OpenRepository): void {
    if (--repository.users > 0) return;
    repository.idleTimer = setTimeout(() => {
      if (repository.users > 0) return;
      const path = repository.stored.path;
      this.#open.delete(path);
      repository.stopReports();
      const closing = repository.stored.close().catch(() => {}).finally(() => {
        if (this.#closing.get(path) === closing) this.#closing.delete(path);
      });
      this.#closing.set(path, closing);
    }, this.#idleCloseMs);
  }

  /** How many repositories are open (for tests of idle closing). */
  get size(): number {
    return this.#open.size;
  }

  /** Closes every repository (the server stops). */
  async closeAll(): Promise<void> {
    await Promise.all(this.#closing.values());
    const all = [...this.#open.values()];
    this.#open.clear();
    for (const opening of all) {
      const repository = await opening.catch(() => undefined);
      if (!repository) continue;
      clearTimeout(repository.idleTimer);
      repository.stopReports();
      await repository.stored.close();
    }
  }
}
