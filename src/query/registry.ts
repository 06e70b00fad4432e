/**
 * The query layer of one repository: its indexes, its open live queries and the pool that hands
 * out the same live query for the same declarative definition (or explicit id). It listens to the
 * repository's change events and, for each change, updates every index and every open query with
 * that one item, synchronously; subscribers hear about it once per batch (a microtask later, so
 * the writes of one synchronous run, or one imported block, notify once).
 */
import type { FieldRecord } from "../core/commit.ts";
import { CairnError } from "../core/errors.ts";
import type { AnySchema, Schema } from "../core/schema_types.ts";
import type { ItemChange } from "../repo/change_listeners.ts";
import type { ItemValue } from "../core/item_state.ts";
import { nextSlice, sliceBudgetMs } from "../runtime/scheduling.ts";
import { AttachmentSlot, AttachmentSlots } from "./attachments.ts";
import type { Member } from "./comparator.ts";
import { reportUncaught } from "./failures.ts";
import { canonicalText, compileFilter, isPlainObject } from "./filter.ts";
import { LiveQuery, type QueryHost, type QuerySpec } from "./live_query.ts";
import { candidateKeys, indexPlan, planAccess, scanPlan } from "./planner.ts";
import { QueryHolds } from "./holds.ts";
import { FieldIndex } from "./sorted_index.ts";
import type { QueryOptions, QueryPlan } from "./types.ts";
import type { StoredPrefilter } from "../repo/item_map.ts";

/** What the registry needs of a repository (repo/Repository provides it). */
export interface QuerySource {
  /** Every item's state, deleted ones included (wire undefined). Read only. */
  items(): ReadonlyMap<string, ItemValue>;
  /** The key's state, deleted items included (wire undefined), or undefined if it has none. */
  state(key: string): ItemValue | undefined;
  /**
   * Calls `listener` on every change before the source's other listeners (the application's),
   * whenever they were added: they may read queries, or write, which places items among the
   * results already placed.
   */
  onChangeFirst(listener: (change: ItemChange) => void): () => void;
  /**
   * Where items may still be stored bytes (a repository restored from a checkpoint): visits
   * every item as `items().forEach` does, except those stored bytes `prefilter` rejects, and
   * returns how many existing items it passed over.
   */
  scanPassing?(
    prefilter: StoredPrefilter,
    visit: (value: ItemValue, key: string) => void,
  ): number;
  /** The same as an iterator of entries, for a scan in slices: `tally` counts what it passed over. */
  entriesPassing?(
    prefilter: StoredPrefilter,
    tally: { passedOver: number },
  ): IterableIterator<[string, ItemValue]>;
}

/** How results are presented: supplied by the layer above (db/ gives Item handles). */
export interface ResultAdapter<R> {
  view(key: string, storedSchema: string, schema: Schema | undefined): R;
  convert(key: string, value: ItemValue, schema: Schema): FieldRecord | undefined;
  /**
   * Whether an item stored under this schema id can be viewed without naming a schema (e.g.
   * false while the schema is not registered); absent: always.
   */
  readable?(storedSchema: string): boolean;
}

export interface RegistryOptions {
  /**
   * Longest synchronous slice of a cold scan, in ms, before the rest continues after yielding to
   * the event loop; null scans in one go. Default: 8 where the runtime wants long work sliced
   * (a browser page: runtime/scheduling.ts), null elsewhere.
   */
  readonly sliceMs?: number | null;
  /**
   * Fields indexed in an earlier session of a stored repository. Each index is rebuilt the first
   * time a query's filter could use it, so opening a repository never waits for it.
   */
  readonly storedIndexes?: readonly string[];
}

/**
 * What a scan may test on an item's stored bytes: the filter, on items stored under the query's
 * own schema (an item of another version is converted before the filter sees it).
 */
function storedPrefilter<R>(spec: QuerySpec<R>): StoredPrefilter | undefined {
  const { schema, filter } = spec;
  if (schema === undefined || filter === undefined) return undefined;
  return { schema: schema.id, fields: filter.reads, test: filter.test };
}

export class QueryRegistry<R> implements QueryHost<R> {
  readonly #source: QuerySource;
  readonly #adapter: ResultAdapter<R>;
  readonly #sliceMs: number | null;
  readonly #unsubscribe: () => void;
  readonly #indexes = new Map<string, FieldIndex>();
  /** Slots of the records indexes and queries keep with item states (attachments.ts). */
  readonly #slots = new AttachmentSlots();
  readonly #querySlots = new Map<LiveQuery<R>, number>();
  /** Stored index declarations not built yet (see RegistryOptions.storedIndexes). */
  readonly #unbuilt: Set<string>;
  /** The indexes and open queries as arrays: each change walks them (no iterator objects). */
  #indexList: FieldIndex[] = [];
  #queryList: LiveQuery<R>[] = [];
  readonly #pool = new Map<string, LiveQuery<R>>();
  readonly #poolKeys = new Map<LiveQuery<R>, string>();
  readonly #holds = new QueryHolds<LiveQuery<R>>();
  readonly #declared = new WeakSet<AnySchema>();
  readonly #dirty = new Set<LiveQuery<R>>();
  #flushScheduled = false;
  readonly #namespaces = new Map<string, string>();
  /**
   * Once an index exists: every schema id an item was ever stored under (`#seen`, cheap to keep:
   * no lookup per change). Only when a query's namespace turns out to have another version among
   * them does the registry count live items per schema id exactly (`#schemaOf`, one lookup per
   * change from then on).
   */
  #seen: Set<string> | undefined;
  #lastSeen: string | undefined;
  #schemaOf: Map<string, string> | undefined;
  readonly #schemaCounts = new Map<string, number>();
  /** Why the repository's queries ended (E_CLOSED), once `dispose` ran. */
  #ended: string | undefined;

  constructor(source: QuerySource, adapter: ResultAdapter<R>, options: RegistryOptions = {}) {
    this.#source = source;
    this.#adapter = adapter;
    this.#sliceMs = options.sliceMs !== undefined ? options.sliceMs : sliceBudgetMs();
    this.#unbuilt = new Set(options.storedIndexes);
    this.#unsubscribe = source.onChangeFirst((change) => this.#onChange(change.key));
  }

  /**
   * Returns the live query for `options`: a pooled one when it is declarative or has an id. It
   * stays open until closed; `whileHeld`, only while held (holds.ts), unless a call without it
   * returned it too.
   */
  query(options: QueryOptions<AnySchema, R>, whileHeld = false): LiveQuery<R> {
    // The options are read anew at every call, the same object included: an app may have
    // changed it since (a UI state object edited in place).
    if (!isPlainObject(options)) throw bad("query options are an object");
    // Checked before the pool is looked at: the pool's key is text made from the options, which
    // bad options can share with good ones (a Map filter and {}; NaN and null).
    const spec = this.#spec(options);
    const poolKey = this.#poolKey(options);
    if (poolKey !== undefined) {
      const pooled = this.#pool.get(poolKey);
      if (pooled) {
        this.#holds.handedOut(pooled, whileHeld);
        return pooled;
      }
    }
    const query = new LiveQuery<R>(this, spec);
    this.#run(query, spec);
    if (poolKey !== undefined) {
      this.#pool.set(poolKey, query);
      this.#poolKeys.set(query, poolKey);
    }
    this.#holds.handedOut(query, whileHeld);
    return query;
  }

  /**
   * Builds an in-memory sorted index on `field` (over every item that has it) now; idempotent.
   * The caller has checked the field name.
   */
  createIndex(field: string): FieldIndex {
    let index = this.#indexes.get(field);
    if (index !== undefined) return index;
    this.#unbuilt.delete(field);
    this.#watchSchemas();
    index = new FieldIndex(
      field,
      this.#source.items(),
      (owner) => new AttachmentSlot(owner, this.#slots.take()),
    );
    this.#indexes.set(field, index);
    this.#indexList = [...this.#indexList, index];
    return index;
  }

  /** Builds the indexes a schema declares (`indexes: [...]`), once per schema. */
  declareIndexes(schema: AnySchema): void {
    if (this.#declared.has(schema)) return;
    this.#declared.add(schema);
    for (const field of schema.indexes) this.createIndex(field);
  }

  /**
   * Stops listening to the repository and closes every query; reading any query of this
   * registry (closed before or not) is then E_CLOSED with `message`.
   */
  dispose(message = "the repository is closed"): void {
    if (this.#ended !== undefined) return;
    this.#unsubscribe();
    for (const query of this.#queryList) query.close();
    this.#holds.dispose();
    this.#ended = message;
  }

  /**
   * Evaluates again, in every index and open query, the items of the namespaces of `schemaIds`:
   * schemas registered since may make them readable (an item under a schema this database did
   * not know is left out of queries until then), and are the newest version of their namespace.
   */
  reconsider(schemaIds: ReadonlySet<string>): void {
    if (this.#ended !== undefined) return;
    // With a query without a schema open, items of those namespaces under older versions too:
    // it now shows them through the new version, which its predicate may judge otherwise.
    const namespaces = new Set([...schemaIds].map((id) => this.nsOf(id)));
    let newest = false;
    for (const query of this.#queryList) newest = query.newestVersionsChanged(namespaces) || newest;
    const affected = (schema: string) =>
      schemaIds.has(schema) || (newest && namespaces.has(this.nsOf(schema)));
    const keys: string[] = [];
    this.#source.items().forEach((value, key) => {
      if (value.wire !== undefined && affected(value.schema)) keys.push(key);
    });
    for (const key of keys) this.#onChange(key);
  }

  // ── QueryHost ────────────────────────────────────────────────────────────────────────────

  view(key: string, storedSchema: string, schema: Schema | undefined): R {
    return this.#adapter.view(key, storedSchema, schema);
  }

  readable(storedSchema: string): boolean {
    return this.#adapter.readable?.(storedSchema) ?? true;
  }

  checkOpen(): void {
    if (this.#ended !== undefined) throw new CairnError("E_CLOSED", this.#ended);
  }

  convert(key: string, value: ItemValue, schema: Schema): FieldRecord | undefined {
    return this.#adapter.convert(key, value, schema);
  }

  nsOf(schemaId: string): string {
    let ns = this.#namespaces.get(schemaId);
    if (ns === undefined) {
      ns = schemaId.slice(0, schemaId.lastIndexOf("@"));
      this.#namespaces.set(schemaId, ns);
    }
    return ns;
  }

  changed(query: LiveQuery<R>): void {
    this.#dirty.add(query);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    queueMicrotask(() => {
      this.#flushScheduled = false;
      const dirty = [...this.#dirty];
      this.#dirty.clear();
      for (const q of dirty) q.notify();
    });
  }

  /** A slot for the records `query` keeps with item states, released when it closes. */
  attachments<T>(query: LiveQuery<R>): AttachmentSlot<T> {
    const slot = this.#slots.take();
    this.#querySlots.set(query, slot);
    return new AttachmentSlot(query, slot);
  }

  hold(query: LiveQuery<R>): () => void {
    return this.#holds.hold(query);
  }

  unheld(query: LiveQuery<R>): boolean {
    return this.#holds.unheld(query);
  }

  closed(query: LiveQuery<R>): void {
    const slot = this.#querySlots.get(query);
    if (slot !== undefined) {
      this.#querySlots.delete(query);
      this.#slots.release(slot);
    }
    // A new array: a change being applied keeps walking the one it started with.
    this.#queryList = this.#queryList.filter((q) => q !== query);
    this.#dirty.delete(query);
    this.#holds.closed(query);
    const poolKey = this.#poolKeys.get(query);
    if (poolKey !== undefined) {
      this.#poolKeys.delete(query);
      if (this.#pool.get(poolKey) === query) this.#pool.delete(poolKey);
    }
  }

  // ── change events ────────────────────────────────────────────────────────────────────────

  #onChange(key: string): void {
    const value = this.#source.state(key);
    if (this.#schemaOf !== undefined) this.#trackSchema(key, value);
    else if (this.#seen !== undefined && value !== undefined && value.schema !== this.#lastSeen) {
      this.#lastSeen = value.schema;
      this.#seen.add(value.schema);
    }
    const indexes = this.#indexList;
    for (let i = 0; i < indexes.length; i++) indexes[i].update(key, value);
    const queries = this.#queryList;
    for (let i = 0; i < queries.length; i++) {
      const query = queries[i];
      if (query.closed) continue;
      try {
        query.apply(key, value);
      } catch (err) {
        // What a query's own code throws is handled inside it (failures.ts); this keeps anything
        // else going wrong in one query from failing the write or the other queries.
        reportUncaught(err);
      }
    }
  }

  #watchSchemas(): void {
    if (this.#seen !== undefined) return;
    this.#seen = new Set();
    for (const value of this.#source.items().values()) this.#seen.add(value.schema);
  }

  #trackSchemas(): void {
    if (this.#schemaOf !== undefined) return;
    this.#schemaOf = new Map();
    for (const [key, value] of this.#source.items()) this.#trackSchema(key, value);
  }

  #trackSchema(key: string, value: ItemValue | undefined): void {
    const before = this.#schemaOf!.get(key);
    const after = value?.wire !== undefined ? value.schema : undefined;
    if (before === after) return;
    if (before !== undefined) this.#schemaCounts.set(before, this.#schemaCounts.get(before)! - 1);
    if (after !== undefined) {
      this.#schemaCounts.set(after, (this.#schemaCounts.get(after) ?? 0) + 1);
      this.#schemaOf!.set(key, after);
    } else this.#schemaOf!.delete(key);
  }

  // ── evaluation from scratch ──────────────────────────────────────────────────────────────

  #run(query: LiveQuery<R>, spec: QuerySpec<R>): void {
    const items = this.#source.items();
    const served = this.#fromIndex(query, spec);
    if (served) {
      query.start(served.matches, served.plan);
      this.#opened(query);
      return;
    }
    if (this.#sliceMs === null) {
      const matches: Member<R>[] = [];
      let examined = 0;
      const visit = (value: ItemValue, key: string) => {
        if (value.wire === undefined) return;
        examined++;
        const member = query.match(key, value);
        if (member !== undefined) matches.push(member);
      };
      const prefilter = storedPrefilter(spec);
      if (prefilter && this.#source.scanPassing) {
        const passedOver = this.#source.scanPassing(prefilter, visit); // visit counts the rest
        examined += passedOver;
      } else items.forEach(visit);
      query.start(matches, scanPlan("scan", examined));
      this.#opened(query);
      return;
    }
    this.#sliced(query, items, storedPrefilter(spec), this.#sliceMs);
  }

  /**
   * A scan in slices of at most `sliceMs`: the first slice runs now; if the scan is not done,
   * the rest continues after yielding to the event loop. Meanwhile changes go to the query's
   * member map (an item the scan reaches later is simply evaluated again), and no partial
   * results are published.
   */
  #sliced(
    query: LiveQuery<R>,
    items: ReadonlyMap<string, ItemValue>,
    prefilter: StoredPrefilter | undefined,
    sliceMs: number,
  ): void {
    query.beginScan();
    this.#opened(query);
    const tally = { passedOver: 0 };
    const entries = prefilter && this.#source.entriesPassing
      ? this.#source.entriesPassing(prefilter, tally)
      : items.entries();
    let examined = 0;
    let first = true;
    const step = () => {
      if (query.closed) return;
      const deadline = performance.now() + sliceMs;
      let n = 0;
      // Stepped by hand: leaving a for…of early would call return() on the iterator, which
      // ends a generator (the repository's item map gives generators), losing the rest.
      for (let next = entries.next(); !next.done; next = entries.next()) {
        const [key, value] = next.value;
        if (value.wire !== undefined) {
          examined++;
          query.scanned(key, value);
        }
        if ((++n & 255) === 0 && performance.now() >= deadline) {
          first = false;
          nextSlice().then(step);
          return;
        }
      }
      examined += tally.passedOver;
      query.finishScan(scanPlan(first ? "scan" : "sliced scan", examined));
    };
    step();
  }

  #opened(query: LiveQuery<R>): void {
    this.#queryList = [...this.#queryList, query];
  }

  /**
   * Candidates from the cheapest index plan (one lookup, or the union of an `or`'s lookups), or
   * undefined to scan: no plan, or one that would visit more index entries than a scan visits
   * items.
   */
  #fromIndex(
    query: LiveQuery<R>,
    spec: QuerySpec<R>,
  ): { matches: Member<R>[]; plan: QueryPlan } | undefined {
    const filter = spec.filter;
    if (filter === undefined || this.#indexes.size + this.#unbuilt.size === 0) return undefined;
    const items = this.#source.items();
    const access = planAccess(filter, (field) => this.#indexOf(field));
    if (access === undefined || access.estimate > items.size) return undefined;
    if (spec.schema !== undefined && !this.#indexUsable(spec.schema)) return undefined;
    const matches: Member<R>[] = [];
    let examined = 0;
    for (const key of candidateKeys(access)) {
      examined++;
      const member = query.match(key, items.get(key));
      if (member !== undefined) matches.push(member);
    }
    return { matches, plan: indexPlan(access, examined) };
  }

  /** The index on `field`, built now if it was declared in an earlier session; or undefined. */
  #indexOf(field: string): FieldIndex | undefined {
    return this.#indexes.get(field) ??
      (this.#unbuilt.has(field) ? this.createIndex(field) : undefined);
  }

  /**
   * Indexes hold stored wire values. A query with a schema reads items of other versions of
   * its namespace upgraded, which the index does not see: it then scans.
   */
  #indexUsable(schema: Schema): boolean {
    if (this.#schemaOf === undefined) {
      let others = false;
      for (const id of this.#seen!) {
        if (id !== schema.id && this.nsOf(id) === schema.ns) others = true;
      }
      if (!others) return true;
      this.#trackSchemas(); // another version was stored once: is any of it still live?
    }
    for (const [id, count] of this.#schemaCounts) {
      if (count > 0 && id !== schema.id && this.nsOf(id) === schema.ns) return false;
    }
    return true;
  }

  // ── options ──────────────────────────────────────────────────────────────────────────────

  #poolKey(options: QueryOptions<AnySchema, R>): string | undefined {
    if (options.id !== undefined) {
      if (typeof options.id !== "string" || options.id.length === 0) {
        throw bad("a query id is a non-empty string");
      }
      return `#${options.id}`;
    }
    if (typeof options.where === "function" || typeof options.sortBy === "function") {
      return undefined; // a function's identity is not its source text: never pooled
    }
    return `${options.schema?.id ?? ""}\u0000${canonicalText(options.where ?? null)}\u0000${
      canonicalText(options.sortBy ?? null)
    }\u0000${options.desc === true}\u0000${options.limit ?? ""}`;
  }

  #spec(options: QueryOptions<AnySchema, R>): QuerySpec<R> {
    const { schema, where, sortBy, desc, limit } = options;
    if (schema !== undefined) {
      if (schema === null || typeof schema !== "object" || typeof schema.id !== "string") {
        throw bad("`schema` is a schema made by defineSchema");
      }
      this.declareIndexes(schema);
    }
    let filter;
    let predicate: ((item: R) => boolean) | undefined;
    if (typeof where === "function") predicate = where as (item: R) => boolean;
    else if (where !== undefined) {
      filter = compileFilter(where, schema?.fields);
    }
    let sortFields: readonly string[] = [];
    let comparator: ((a: R, b: R) => number) | undefined;
    if (typeof sortBy === "function") comparator = sortBy;
    else if (sortBy !== undefined) {
      sortFields = typeof sortBy === "string" ? [sortBy] : sortBy;
      if (!Array.isArray(sortFields) || sortFields.some((f) => typeof f !== "string")) {
        throw bad("`sortBy` is a field name, an array of field names, or a comparator");
      }
      for (const field of sortFields) {
        if (schema !== undefined && !Object.hasOwn(schema.fields, field)) {
          throw new CairnError("E_UNKNOWN_FIELD", `${schema.id} has no field ${field} to sort by`);
        }
      }
      sortFields = [...sortFields];
    }
    if (desc !== undefined && typeof desc !== "boolean") throw bad("`desc` is a boolean");
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
      throw bad("`limit` is a non-negative integer");
    }
    return {
      schema,
      filter,
      predicate,
      sortFields,
      comparator,
      desc: desc === true,
      limit,
    };
  }
}

function bad(message: string): CairnError {
  return new CairnError("E_BAD_ARGUMENT", message);
}
