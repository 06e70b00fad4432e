/**
 * The PostgreSQL store: N stateless sync servers share one PostgreSQL database. PostgreSQL holds
 * every accepted block and its position; each server keeps, per repository it has open, a cache
 * loaded from PostgreSQL and kept in step with it (postgres_repository.ts), and LISTENs for the
 * pushes and access-rule changes other servers commit (postgres_listener.ts, postgres_rules.ts).
 * The schema: postgres_schema.ts.
 */
import { CairnError } from "../../core/errors.ts";
import type { CryptoSuite } from "../../core/signing.ts";
import { cryptoSuite } from "../../runtime/crypto_suite.ts";
import { StoreListener } from "./postgres_listener.ts";
import { loadDriver, type PostgresPool } from "./postgres_pool.ts";
import { PostgresRepository } from "./postgres_repository.ts";
import { postgresFailure } from "./postgres_retry.ts";
import { PostgresRules } from "./postgres_rules.ts";
import { migrate } from "./postgres_schema.ts";
import { randomName } from "./server_files.ts";
import type { StoredRepository, SyncStore, SyncStoreSource } from "./store.ts";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** Connections each server opens at most, besides the one it LISTENs on (default 10). */
  maxConnections?: number;
}

/**
 * A store on PostgreSQL for `createSyncServer({ store })`: every server given the same database
 * serves every repository. The tables are created (or migrated) when the first server starts.
 */
export function postgresStore(options: string | PostgresStoreOptions): SyncStoreSource {
  const { url, maxConnections = 10 } = typeof options === "string" ? { url: options } : options;
  if (typeof url !== "string" || !/^postgres(ql)?:\/\//.test(url)) {
    throw new CairnError("E_BAD_ARGUMENT", "postgresStore needs a postgres:// URL");
  }
  if (!Number.isInteger(maxConnections) || maxConnections < 1) {
    throw new CairnError("E_BAD_ARGUMENT", "maxConnections must be a positive integer");
  }
  return { open: () => PostgresStore.open(url, maxConnections) };
}

class PostgresStore implements SyncStore {
  readonly serverId: string;
  readonly rules: PostgresRules;
  readonly #epoch: string;
  readonly #pool: PostgresPool;
  readonly #suite: CryptoSuite;
  readonly #open = new Map<string, PostgresRepository>();
  #listener: StoreListener | undefined;

  private constructor(
    pool: PostgresPool,
    identity: { serverId: string; epoch: string },
    suite: CryptoSuite,
  ) {
    this.#pool = pool;
    this.serverId = identity.serverId;
    this.#epoch = identity.epoch;
    this.#suite = suite;
    this.rules = new PostgresRules(pool);
  }

  static async open(url: string, maxConnections: number): Promise<PostgresStore> {
    const driver = await loadDriver();
    const pool = driver.pool(url, maxConnections);
    try {
      const client = await pool.connect();
      let identity;
      try {
        identity = await migrate(client, () => ({
          serverId: `cairn-${randomName()}`,
          epoch: randomName(),
        }));
      } finally {
        client.release();
      }
      const store = new PostgresStore(pool, identity, await cryptoSuite());
      store.#listener = await StoreListener.start(() => driver.connection(url), {
        blocks: (path, head) => store.#open.get(path)?.noticed(head),
        rules: (path) => store.rules.changed(path),
        reconnected: () => {
          for (const repository of store.#open.values()) repository.noticed(Infinity);
          store.rules.reloadAll();
        },
      });
      return store;
    } catch (err) {
      await pool.end().catch(() => {});
      throw postgresFailure(err);
    }
  }

  async openRepository(path: string): Promise<StoredRepository> {
    const repository = new PostgresRepository(path, this.#epoch, this.#pool, this.#suite, () => {
      if (this.#open.get(path) === repository) this.#open.delete(path);
    });
    await repository.load();
    this.#open.set(path, repository);
    return repository;
  }

  async close(): Promise<void> {
    this.rules.close();
    await this.#listener?.close();
    for (const repository of [...this.#open.values()]) await repository.close();
    await this.#pool.end();
  }
}
