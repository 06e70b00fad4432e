/**
 * What `db.open(path)` returns: typed, synchronous access to one repository's items, its change
 * events, and the exchange primitive peers sync with.
 */
import { CairnError } from "../core/errors.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { AnySchema, CreateInput, Schema } from "../core/schema_types.ts";
import type { ItemChange } from "../repo/change_listeners.ts";
import type { ImportReport, Repository, VersionVector } from "../repo/repository.ts";
import { Item } from "./item.ts";
import type { TypedReader } from "./typed_reader.ts";

export interface CreateOptions {
  /** The item's key; generated (unique per session) when omitted. */
  key?: string;
}

const MAX_KEY_LENGTH = 512;

export class RepositoryHandle {
  readonly #repo: Repository;
  readonly #register: (schema: AnySchema) => void;
  readonly #registry: SchemaRegistry;
  readonly #reader: TypedReader;
  readonly #keyPrefix: string;

  /** @internal Created by Cairn.open. */
  constructor(
    repo: Repository,
    register: (schema: AnySchema) => void,
    registry: SchemaRegistry,
    reader: TypedReader,
    session: string,
  ) {
    this.#repo = repo;
    this.#register = register;
    this.#registry = registry;
    this.#reader = reader;
    this.#keyPrefix = session.slice(0, 8);
  }

  get path(): string {
    return this.#repo.path;
  }

  /** Creates an item; visible to reads, queries and events at once, sealed into a block this tick. */
  create<S extends AnySchema>(
    schema: S,
    input: CreateInput<S>,
    options: CreateOptions = {},
  ): Item<S> {
    this.#register(schema);
    const wire = schema.createWire(input as never);
    const key = options.key === undefined ? this.#newKey() : checkKey(options.key);
    if (this.#repo.value(key)) {
      throw new CairnError("E_KEY_EXISTS", `item ${key} already exists in ${this.path}`);
    }
    this.#repo.writeValue(key, schema.id, wire);
    return new Item(this.#repo, this.#reader, key, schema);
  }

  /**
   * The item at `key`, or undefined if there is none (or it is deleted). Pass its schema to get a
   * typed handle; by default the newest registered version of the item's schema is used.
   */
  get<S extends AnySchema = Schema>(key: string, schema?: S): Item<S> | undefined {
    if (schema) this.#register(schema);
    const current = this.#repo.value(key);
    if (!current) return undefined;
    const target = schema ?? this.#newestVersionOf(current.schema);
    return new Item(this.#repo, this.#reader, key, target as S);
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

  /** Calls `listener` synchronously on every change: local writes at once, remote ones on import. */
  on(event: "change", listener: (change: ItemChange) => void): () => void {
    if (event !== "change") {
      throw new CairnError("E_BAD_ARGUMENT", `unknown event ${String(event)}`);
    }
    return this.#repo.onChange(listener);
  }

  /** Resolves when every write so far is sealed into a signed block. */
  flush(): Promise<void> {
    return this.#repo.flush();
  }

  // ── exchange: what peers and sync build on ─────────────────────────────────────────────

  /** `{ [session]: last block held }`: send it to a peer to learn what you lack. */
  versionVector(): VersionVector {
    return this.#repo.versionVector();
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

  #newKey(): string {
    return `${this.#repo.nextCommitSeq.toString(36)}-${this.#keyPrefix}`;
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
