/**
 * What `db.open(path)` returns: typed, synchronous access to one repository's items, its change
 * events, and the exchange primitive peers sync with. Arguments are checked here (arguments.ts),
 * and once the repository is closed every method is E_CLOSED (lifetime.ts).
 */
import { CairnError } from "../core/errors.ts";
import { iteratorOf } from "../core/iterate.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { AnySchema, CreateInput, FieldName, Schema } from "../core/schema_types.ts";
import { callSafely, type ItemChange } from "../repo/change_listeners.ts";
import type {
  ImportReport,
  MissingHistory,
  Repository,
  VersionVector,
} from "../repo/repository.ts";
import { LiveQuery } from "../query/live_query.ts";
import { QueryRegistry } from "../query/registry.ts";
import type { QueryLifetime, QueryOptions } from "../query/types.ts";
import {
  badArgument,
  checkEvent,
  checkFrames,
  checkListener,
  checkLookupKey,
  checkNewKey,
  checkOptions,
  checkVersionVector,
} from "./arguments.ts";
import type { IndexDeclarations } from "./index_declarations.ts";
import { Item } from "./item.ts";
import type { RepositoryLifetime } from "./lifetime.ts";
import type { TypedReader } from "./typed_reader.ts";
import type { Cairn } from "./database.ts";

/** What opening a stored repository found; all empty for a repository in memory. */
export interface RepositoryStats {
  /** Damaged records in the middle of the log, skipped (the records after them were kept). */
  readonly damaged: readonly { offset: number; length: number; reason: string }[];
  /** Bytes of an incomplete last record (a crash mid-append) that were cut. */
  readonly tornTailBytes: number;
  /** Stored blocks that could not be applied (bad signature, or history lost to damage). */
  readonly unloadable: readonly { session: string; seq: number; error: CairnError }[];
}

const NOTHING_STORED: RepositoryStats = Object.freeze({
  damaged: [],
  tornTailBytes: 0,
  unloadable: [],
});

export interface CreateOptions {
  /** The item's key; generated (unique per session) when omitted. */
  key?: string;
}

const CREATE_OPTIONS: readonly string[] = ["key"];

export class RepositoryHandle {
  readonly #database: Cairn;
  readonly #repo: Repository;
  readonly #register: (schema: AnySchema) => void;
  /**
   * The schema this handle registered last. Registration is for good, so a create or read with
   * the same schema again skips the database's registry lookup.
   */
  #registered: AnySchema | undefined;
  readonly #registry: SchemaRegistry;
  readonly #reader: TypedReader;
  /** Indexes and live queries: made on first use, so a repository never queried pays nothing. */
  #queries: QueryRegistry<Item> | undefined;
  readonly #schemaListeners = new Set<(ids: ReadonlySet<string>) => void>();
  readonly #stats: RepositoryStats;
  /** A stored repository's createIndex declarations; undefined in memory. */
  readonly #indexes: IndexDeclarations | undefined;
  readonly #life: RepositoryLifetime;

  /** @internal Created by Cairn.open. */
  constructor(
    database: Cairn,
    repo: Repository,
    life: RepositoryLifetime,
    register: (schema: AnySchema) => void,
    registry: SchemaRegistry,
    reader: TypedReader,
    stats: RepositoryStats = NOTHING_STORED,
    indexes?: IndexDeclarations,
  ) {
    this.#database = database;
    this.#stats = stats;
    this.#indexes = indexes;
    this.#repo = repo;
    this.#life = life;
    this.#register = register;
    this.#registry = registry;
    this.#reader = reader;
    // Live queries end with the repository: their results are items of a closed repository.
    life.onEnd(() => {
      this.#queries?.dispose(life.closedError().message);
      this.#schemaListeners.clear();
    });
  }

  /** The database this repository was opened from (`database.open(path)`); readable after close. */
  get database(): Cairn {
    return this.#database;
  }

  /** The repository's path; readable after close. */
  get path(): string {
    return this.#repo.path;
  }

  /**
   * True once the repository is closed (`db.close(path)` or `db.close()`): this handle is then
   * done with, and opening the path again gives a new one.
   */
  get closed(): boolean {
    return this.#life.ended;
  }

  /**
   * @internal New schemas were registered: queries take in the items that waited for them, then
   * "schemas" listeners hear of it.
   */
  schemasRegistered(ids: ReadonlySet<string>): void {
    if (this.#life.ended) return;
    this.#queries?.reconsider(ids);
    for (const listener of [...this.#schemaListeners]) callSafely(listener, ids);
  }

  /** Creates an item; visible to reads, queries and events at once, sealed into a block this tick. */
  create<S extends AnySchema>(
    schema: S,
    input: CreateInput<S>,
    options?: CreateOptions,
  ): Item<S> {
    this.#life.check();
    const { key: given } = checkOptions<CreateOptions>(options, "create options", CREATE_OPTIONS);
    this.#ensureRegistered(schema);
    const wire = schema.createWire(input as never);
    const key = given === undefined ? this.#repo.newKey() : checkNewKey(given);
    this.#repo.create(key, schema.id, wire);
    return new Item(this.#repo, this.#reader, this.#life, key, schema);
  }

  /**
   * The item at `key`, or undefined if there is none (or it is deleted). Pass its schema to get a
   * typed handle; by default the newest registered version of the item's schema is used.
   */
  get<S extends AnySchema = Schema>(key: string, schema?: S): Item<S> | undefined {
    this.#life.check();
    checkLookupKey(key);
    if (schema !== undefined) this.#ensureRegistered(schema);
    const current = this.#repo.value(key);
    if (!current) return undefined;
    const target = schema ?? this.#newestVersionOf(current.schema);
    return new Item(this.#repo, this.#reader, this.#life, key, target as S);
  }

  #ensureRegistered(schema: AnySchema): void {
    if (schema === this.#registered && schema !== undefined) return;
    this.#register(schema);
    this.#registered = schema;
  }

  has(key: string): boolean {
    this.#life.check();
    return this.#repo.value(checkLookupKey(key)) !== undefined;
  }

  /**
   * Keys of live items, without materializing their values. An iteration still going when the
   * repository is closed ends with E_CLOSED.
   */
  keys(): IterableIterator<string> {
    this.#life.check();
    const nextKey = this.#repo.liveKeyStep();
    const life = this.#life;
    return iteratorOf(() => {
      life.check();
      return nextKey();
    });
  }

  /** Number of live items, O(1). */
  count(): number {
    this.#life.check();
    return this.#repo.count();
  }

  /**
   * A live query (docs/queries.md): results in order, kept up to date on every change. An
   * identical declarative query, or the same `id`, returns the same live query object. It stays
   * open until closed, or with `{ whileHeld: true }` while held (`query.hold()`).
   */
  query<S extends AnySchema = Schema>(
    options: QueryOptions<S, Item<S>> = {},
    lifetime?: QueryLifetime,
  ): LiveQuery<Item<S>> {
    this.#life.check();
    const { whileHeld = false } = checkOptions<QueryLifetime>(lifetime, "a query's lifetime", [
      "whileHeld",
    ]);
    if (typeof whileHeld !== "boolean") throw badArgument("`whileHeld` is a boolean");
    // The query layer checks the options' shape; here only the schema, which is registered first.
    if (typeof options === "object" && options?.schema !== undefined) {
      this.#ensureRegistered(options.schema);
    }
    return this.#queryRegistry().query(
      options as never,
      whileHeld,
    ) as unknown as LiveQuery<Item<S>>;
  }

  /**
   * Keeps an in-memory sorted index on `field` (built now), so filters on it need not scan every
   * item. `field` must be a field of a registered schema (E_UNKNOWN_FIELD). A stored repository
   * remembers the index: opened again, it rebuilds it the first time a query filters on `field`.
   */
  createIndex(field: string): void;
  /**
   * The same, typed by a schema (registered here if it is not yet): `field` must be one of its
   * fields, which TypeScript checks too.
   */
  createIndex<S extends AnySchema>(schema: S, field: FieldName<S>): void;
  createIndex(first: string | AnySchema, second?: string): void {
    this.#life.check();
    const field = typeof first === "string" ? first : second;
    if (typeof field !== "string" || field.length === 0) {
      throw badArgument("createIndex takes a field name");
    }
    if (typeof first !== "string") {
      this.#ensureRegistered(first);
      if (!Object.hasOwn(first.fields, field)) {
        throw new CairnError(
          "E_UNKNOWN_FIELD",
          `schema ${first.id} has no field ${JSON.stringify(field)} to index`,
        );
      }
    } else if (!this.#registry.hasField(field)) {
      throw new CairnError(
        "E_UNKNOWN_FIELD",
        `no registered schema has a field ${JSON.stringify(field)} to index`,
      );
    }
    this.#indexes?.add(field); // first: E_CLOSED once the repository is closed
    this.#queryRegistry().createIndex(field);
  }

  #queryRegistry(): QueryRegistry<Item> {
    return this.#queries ??= new QueryRegistry<Item>(this.#repo, {
      view: (key, stored, schema) =>
        new Item(
          this.#repo,
          this.#reader,
          this.#life,
          key,
          schema ?? this.#newestVersionOf(stored),
        ),
      // An item stored under a schema not registered here has no typed view: queries without a
      // schema leave it out until it is registered (see schemasRegistered).
      readable: (schemaId) => this.#registry.get(schemaId) !== undefined,
      convert: (key, _value, schema) => {
        try {
          return schema.toWire(this.#reader.values(this.#repo, key, schema) as never);
        } catch {
          return undefined; // not readable in that version (e.g. an older one unregistered)
        }
      },
    }, { storedIndexes: this.#indexes?.fields });
  }

  /** Calls `listener` synchronously on every change: local writes at once, remote ones on import. */
  on(event: "change", listener: (change: ItemChange) => void): () => void;
  /**
   * Calls `listener` once, when the repository is closed (`db.close(path)` or `db.close()`):
   * what holds this handle can let go of it (opening the path again gives a new one).
   */
  on(event: "close", listener: () => void): () => void;
  /**
   * Calls `listener` with the ids of the schemas `db.register` adds: items stored under them,
   * or under another version of their namespaces, may read differently from now on (an item this
   * app could not read becomes readable; one read through the newest version is read through
   * the new one). Queries take that in by themselves; this is for what reads items directly.
   */
  on(event: "schemas", listener: (ids: ReadonlySet<string>) => void): () => void;
  on(
    event: "change" | "close" | "schemas",
    listener: ((change: ItemChange) => void) | ((ids: ReadonlySet<string>) => void),
  ): () => void {
    this.#life.check();
    checkEvent(event, ["change", "close", "schemas"]);
    checkListener(listener, "on");
    if (event === "close") return this.#life.onEnd(listener as () => void);
    if (event === "schemas") {
      const added = listener as (ids: ReadonlySet<string>) => void;
      this.#schemaListeners.add(added);
      return () => this.#schemaListeners.delete(added);
    }
    return this.#repo.onChange(listener as (change: ItemChange) => void);
  }

  /**
   * Resolves when every write so far is sealed into a signed block and persisted as the
   * database's durability mode promises (appended; in durable mode also fsynced), and every
   * `createIndex` so far is stored.
   */
  async flush(): Promise<void> {
    this.#life.check();
    await this.#repo.flush();
    await this.#indexes?.settled();
  }

  /** What opening this repository found in storage: damaged records skipped, a torn tail cut. */
  stats(): RepositoryStats {
    this.#life.check();
    return this.#stats;
  }

  // ── exchange: what peers and sync build on ─────────────────────────────────────────────

  /**
   * `{ [session]: last block held }`: send it to a peer to learn what you lack. Where damage in
   * storage lost a block, its session's entry stays below it, so the peer sends it back.
   */
  versionVector(): VersionVector {
    this.#life.check();
    return this.#repo.versionVector();
  }

  /**
   * History lost to damage in storage: the blocks known to be missing and the commits held back
   * until they return. Empty unless opening found damage; an import from a peer or server that
   * holds the blocks (the usual `importBlocks(await peer.exportBlocks(repo.versionVector()))`)
   * restores them, and the log is then written anew without the damaged records.
   */
  missingHistory(): MissingHistory {
    this.#life.check();
    return this.#repo.missingHistory();
  }

  /** The encoded blocks a peer at `since` lacks, in an order it can import. */
  async exportBlocks(since?: VersionVector): Promise<Uint8Array[]> {
    this.#life.check();
    return await this.#repo.exportBlocks(checkVersionVector(since));
  }

  /**
   * Verifies and applies blocks from a peer; a bad block is refused whole and reported (a frame
   * that is not a Uint8Array too, as E_CORRUPT_ENCODING).
   */
  async importBlocks(blocks: Iterable<Uint8Array>): Promise<ImportReport> {
    this.#life.check();
    return await this.#repo.importBlocks(checkFrames(blocks) as Iterable<Uint8Array>);
  }

  /** Ids of the item's leaf commits: one normally, several after concurrent edits. */
  leaves(key: string): readonly string[] {
    this.#life.check();
    return this.#repo.leaves(checkLookupKey(key));
  }

  #newestVersionOf(schemaId: string): Schema {
    const known = this.#registry.get(schemaId);
    if (!known) {
      throw new CairnError(
        "E_UNKNOWN_SCHEMA",
        `schema ${schemaId} is not registered in this database`,
      );
    }
    return this.#registry.latest(known.ns) ?? known;
  }
}
