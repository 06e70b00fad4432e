/**
 * What `db.open(path)` returns: typed, synchronous access to one repository's items, its change
 * events, and the exchange primitive peers sync with.
 */
import { CairnError } from "../core/errors.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { AnySchema, CreateInput, Schema } from "../core/schema_types.ts";
import type { ItemChange } from "../repo/change_listeners.ts";
import type {
  ImportReport,
  MissingHistory,
  Repository,
  VersionVector,
} from "../repo/repository.ts";
import { LiveQuery } from "../query/live_query.ts";
import { QueryRegistry } from "../query/registry.ts";
import type { QueryOptions } from "../query/types.ts";
import type { IndexDeclarations } from "./index_declarations.ts";
import { Item } from "./item.ts";
import type { TypedReader } from "./typed_reader.ts";

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

const MAX_KEY_LENGTH = 512;

export class RepositoryHandle {
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
  readonly #stats: RepositoryStats;
  /** A stored repository's createIndex declarations; undefined in memory. */
  readonly #indexes: IndexDeclarations | undefined;

  /** @internal Created by Cairn.open. */
  constructor(
    repo: Repository,
    register: (schema: AnySchema) => void,
    registry: SchemaRegistry,
    reader: TypedReader,
    stats: RepositoryStats = NOTHING_STORED,
    indexes?: IndexDeclarations,
  ) {
    this.#stats = stats;
    this.#indexes = indexes;
    this.#repo = repo;
    this.#register = register;
    this.#registry = registry;
    this.#reader = reader;
  }

  get path(): string {
    return this.#repo.path;
  }

  /** Creates an item; visible to reads, queries and events at once, sealed into a block this tick. */
  create<S extends AnySchema>(
    schema: S,
    input: CreateInput<S>,
    options?: CreateOptions,
  ): Item<S> {
    this.#ensureRegistered(schema);
    const wire = schema.createWire(input as never);
    const key = options?.key === undefined ? this.#repo.newKey() : checkKey(options.key);
    this.#repo.create(key, schema.id, wire);
    return new Item(this.#repo, this.#reader, key, schema);
  }

  /**
   * The item at `key`, or undefined if there is none (or it is deleted). Pass its schema to get a
   * typed handle; by default the newest registered version of the item's schema is used.
   */
  get<S extends AnySchema = Schema>(key: string, schema?: S): Item<S> | undefined {
    if (schema) this.#ensureRegistered(schema);
    const current = this.#repo.value(key);
    if (!current) return undefined;
    const target = schema ?? this.#newestVersionOf(current.schema);
    return new Item(this.#repo, this.#reader, key, target as S);
  }

  #ensureRegistered(schema: AnySchema): void {
    if (schema === this.#registered) return;
    this.#register(schema);
    this.#registered = schema;
  }

  has(key: string): boolean {
    return this.#repo.value(key) !== undefined;
  }

  /** Keys of live items, without materializing their values. */
  keys(): IterableIterator<string> {
    return this.#repo.keys();
  }

  /** Number of live items, O(1). */
  count(): number {
    return this.#repo.count();
  }

  /**
   * A live query (docs/queries.md): results in order, kept up to date on every change. An
   * identical declarative query, or the same `id`, returns the same live query object.
   */
  query<S extends AnySchema = Schema>(options: QueryOptions<S, Item<S>> = {}): LiveQuery<Item<S>> {
    if (options.schema) this.#ensureRegistered(options.schema);
    return this.#queryRegistry().query(options as never) as unknown as LiveQuery<Item<S>>;
  }

  /**
   * Keeps an in-memory sorted index on `field` (built now), so filters on it need not scan every
   * item. `field` must be a field of a registered schema (E_UNKNOWN_FIELD). A stored repository
   * remembers the index: opened again, it rebuilds it the first time a query filters on `field`.
   */
  createIndex(field: string): void {
    if (typeof field !== "string" || field.length === 0) {
      throw new CairnError("E_BAD_ARGUMENT", "createIndex takes a field name");
    }
    if (!this.#registry.hasField(field)) {
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
        new Item(this.#repo, this.#reader, key, schema ?? this.#newestVersionOf(stored)),
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
  on(event: "change", listener: (change: ItemChange) => void): () => void {
    if (event !== "change") {
      throw new CairnError("E_BAD_ARGUMENT", `unknown event ${String(event)}`);
    }
    return this.#repo.onChange(listener);
  }

  /**
   * Resolves when every write so far is sealed into a signed block and persisted as the
   * database's durability mode promises (appended; in durable mode also fsynced), and every
   * `createIndex` so far is stored.
   */
  async flush(): Promise<void> {
    await this.#repo.flush();
    await this.#indexes?.settled();
  }

  /** What opening this repository found in storage: damaged records skipped, a torn tail cut. */
  stats(): RepositoryStats {
    return this.#stats;
  }

  // ── exchange: what peers and sync build on ─────────────────────────────────────────────

  /**
   * `{ [session]: last block held }`: send it to a peer to learn what you lack. Where damage in
   * storage lost a block, its session's entry stays below it, so the peer sends it back.
   */
  versionVector(): VersionVector {
    return this.#repo.versionVector();
  }

  /**
   * History lost to damage in storage: the blocks known to be missing and the commits held back
   * until they return. Empty unless opening found damage; an import from a peer or server that
   * holds the blocks (the usual `importBlocks(await peer.exportBlocks(repo.versionVector()))`)
   * restores them, and the log is then written anew without the damaged records.
   */
  missingHistory(): MissingHistory {
    return this.#repo.missingHistory();
  }

  /** The encoded blocks a peer at `since` lacks, in an order it can import. */
  exportBlocks(since?: VersionVector): Promise<Uint8Array[]> {
    return this.#repo.exportBlocks(since);
  }

  /** Verifies and applies blocks from a peer; a bad block is refused whole and reported. */
  importBlocks(blocks: Iterable<Uint8Array>): Promise<ImportReport> {
    return this.#repo.importBlocks(blocks);
  }

  /** Ids of the item's leaf commits: one normally, several after concurrent edits. */
  leaves(key: string): readonly string[] {
    return this.#repo.leaves(key);
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

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      `an item key is a non-empty string of at most ${MAX_KEY_LENGTH} characters`,
    );
  }
  return key;
}
