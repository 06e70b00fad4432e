/**
 * One live query: its members (the items that match now, in order), the frozen result array
 * cached per generation, and its subscribers. The registry feeds it every change of the
 * repository; it re-evaluates only the changed item and moves it by binary search.
 */
import type { FieldRecord } from "../core/commit.ts";
import { CairnError } from "../core/errors.ts";
import type { Schema } from "../core/schema_types.ts";
import type { ItemValue } from "../core/item_state.ts";
import {
  CLEARED,
  comparatorOrder,
  ENTERING,
  fieldOrder,
  GONE,
  LEAVING,
  type Member,
  type MemberOrder,
  MOVED,
  OUT,
  PLACED,
  sameSortKey,
  STAYING,
} from "./comparator.ts";
import type { AttachmentSlot } from "./attachments.ts";
import { QueryFailures, reportUncaught } from "./failures.ts";
import type { CompiledFilter, WirePredicate } from "./filter.ts";
import { scanPlan } from "./planner.ts";
import type { QueryPlan } from "./types.ts";
import { SortedList } from "./sorted_list.ts";

/** What a live query needs from the registry that runs it. */
export interface QueryHost<R> {
  /** The result element for a live item: what `results` holds and predicates receive. */
  view(key: string, storedSchema: string, schema: Schema | undefined): R;
  /**
   * The item's wire value in `schema`'s shape, when it is stored under another version of that
   * schema; undefined when it cannot be read so (e.g. the older version is not registered).
   */
  convert(key: string, value: ItemValue, schema: Schema): FieldRecord | undefined;
  /** Whether an item stored under this schema id can be viewed when the query names no schema. */
  readable(storedSchema: string): boolean;
  /** Throws E_CLOSED once the repository is closed: its queries' results are gone with it. */
  checkOpen(): void;
  /** The namespace of a schema id. */
  nsOf(schemaId: string): string;
  /** The query changed: notify its subscribers once this batch of changes is over. */
  changed(query: LiveQuery<R>): void;
  /** A slot for records the query keeps with item states, released when it closes. */
  attachments<T>(query: LiveQuery<R>): AttachmentSlot<T>;
  closed(query: LiveQuery<R>): void;
  /** Holds `query` open (holds.ts); returns the release. */
  hold(query: LiveQuery<R>): () => void;
  /** Whether `query` was made for holders only, and none holds it (holds.ts). */
  unheld(query: LiveQuery<R>): boolean;
}

/** A query's definition, validated. */
export interface QuerySpec<R> {
  readonly schema: Schema | undefined;
  readonly filter: CompiledFilter | undefined;
  readonly predicate: ((item: R) => boolean) | undefined;
  readonly sortFields: readonly string[];
  readonly comparator: ((a: R, b: R) => number) | undefined;
  readonly desc: boolean;
  readonly limit: number | undefined;
}

const NONE: readonly never[] = Object.freeze([]);

/** A batch of changes is placed in one pass once it holds at least this share of the members. */
const ONE_PASS_SHARE = 1 / 16;

/** How many more tombstones than members the member map may hold (see `#note`). */
const TOMBSTONE_SLACK = 16_384;

export class LiveQuery<R> {
  readonly #host: QueryHost<R>;
  readonly #schema: Schema | undefined;
  readonly #test: WirePredicate | undefined;
  readonly #predicate: ((item: R) => boolean) | undefined;
  readonly #order: MemberOrder<R>;
  readonly #byComparator: boolean;
  readonly #sortFields: readonly string[];
  readonly #limit: number;
  readonly #members = new Map<string, Member<R>>();
  #list: SortedList<Member<R>> | undefined;
  /**
   * Whether changes wait in `#unplaced` until the list is next read (or the batch ends): only
   * where nothing needs a changed member's rank at once (no `limit`) and the order reads the
   * members alone (no caller's comparator, which reads items as they are now).
   */
  readonly #batches: boolean;
  /** Members that entered, left or moved since the list was last brought up to date. */
  #unplaced: Member<R>[] = [];
  /** Members in the map that no longer match (`OUT`): see `#note`. */
  #tombstones = 0;
  /** Batching queries keep each item's member (or tombstone) with its state too. */
  readonly #attached: AttachmentSlot<Member<R>> | undefined;
  #generation = 0;
  #cachedGeneration = -1;
  #cached: readonly R[] = NONE;
  readonly #subscribers = new Set<(results: readonly R[]) => void>();
  readonly #closeListeners = new Set<() => void>();
  #pending = true;
  #closed = false;
  /** True from the first change of a batch until the registry calls `notify`. */
  #queued = false;
  /** The results changed since the last `notify`. */
  #resultsChanged = false;
  readonly #failures = new QueryFailures();
  /** The result element `#accept` built or reused for the item it accepted (predicate queries). */
  #acceptedView: R | undefined;
  #plan: QueryPlan = scanPlan("scan", 0);
  #resolveReady!: (results: readonly R[]) => void;

  /**
   * Resolves with the results once they are complete. At once on Deno and Node; in a browser
   * a cold scan of a large repository runs in slices and resolves this when done.
   */
  readonly ready: Promise<readonly R[]>;

  /** @internal Created by the query registry. */
  constructor(host: QueryHost<R>, spec: QuerySpec<R>) {
    this.#host = host;
    this.#schema = spec.schema;
    this.#test = spec.filter?.test;
    this.#predicate = spec.predicate;
    this.#limit = spec.limit ?? Infinity;
    this.#byComparator = spec.comparator !== undefined;
    this.#sortFields = spec.sortFields;
    this.#batches = this.#limit === Infinity && !this.#byComparator;
    this.#attached = this.#batches ? host.attachments(this) : undefined;
    this.#order = spec.comparator
      ? comparatorOrder(spec.comparator, (m) => this.#viewOf(m), spec.desc, (a, b, err) => {
        this.#failures.comparatorThrew(a.key, b.key, err);
        this.#queue();
      })
      : fieldOrder(spec.sortFields, spec.desc);
    this.ready = new Promise((resolve) => {
      this.#resolveReady = (results) => {
        // The fields React's `use` reads: a promise known to be fulfilled renders its value at
        // once. A plain one suspends once however early it resolved, so a Suspense fallback
        // showed (for React's 300 ms throttle, and in a server render) while the results were
        // ready.
        Object.assign(this.ready, { status: "fulfilled", value: results });
        resolve(results);
      };
    });
  }

  /**
   * The current results, in order: a frozen array, the same object until the results change.
   * Empty while `pending`: partial results of a scan in progress are never shown.
   */
  get results(): readonly R[] {
    this.#host.checkOpen();
    this.#place();
    if (this.#cachedGeneration !== this.#generation) {
      this.#cachedGeneration = this.#generation;
      this.#cached = this.#build();
    }
    return this.#cached;
  }

  /** Increases each time the results change. */
  get generation(): number {
    return this.#generation;
  }

  /** Items that match, ignoring `limit`. */
  get total(): number {
    this.#host.checkOpen();
    this.#place();
    return this.#list ? this.#list.size : 0;
  }

  /** True while a cold scan is still running in slices (browser only). */
  get pending(): boolean {
    return this.#pending;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Calls `listener` with the new results after each batch of changes that changes them (all
   * writes of one synchronous run, or one imported block), and once when a pending scan
   * completes. Not called at subscription. Returns the unsubscribe function.
   */
  subscribe(listener: (results: readonly R[]) => void): () => void {
    this.#host.checkOpen();
    if (typeof listener !== "function") {
      throw new CairnError("E_BAD_ARGUMENT", "subscribe takes a function");
    }
    this.#subscribers.add(listener);
    return () => {
      this.#subscribers.delete(listener);
    };
  }

  /**
   * While the `where` predicate throws for some item (as last evaluated): an `E_QUERY_FAILED`
   * error naming the latest such item, whose `cause` is what the predicate threw. Such items are
   * not in the results. Undefined when the predicate throws for no item.
   */
  get error(): CairnError | undefined {
    return this.#failures.current;
  }

  /**
   * Calls `listener` with an `E_QUERY_FAILED` error once per batch of changes (or evaluation from
   * scratch) in which the `where` predicate or `sortBy` comparator threw: the batch's last such
   * error. With no listener, such errors are reported as uncaught. Returns the unsubscribe.
   */
  onError(listener: (error: CairnError) => void): () => void {
    this.#host.checkOpen();
    if (typeof listener !== "function") {
      throw new CairnError("E_BAD_ARGUMENT", "onError takes a function");
    }
    return this.#failures.listen(listener);
  }

  /**
   * Calls `listener` once when the query is closed: by any holder of a pooled query, or with
   * its repository (at once if it is closed already). Returns the unsubscribe. A holder that
   * wants the query to go on can then make it again (`repo.query(…)` with the same options).
   */
  onClose(listener: () => void): () => void {
    if (typeof listener !== "function") {
      throw new CairnError("E_BAD_ARGUMENT", "onClose takes a function");
    }
    if (this.#closed) {
      listener();
      return () => {};
    }
    this.#closeListeners.add(listener);
    return () => {
      this.#closeListeners.delete(listener);
    };
  }

  /**
   * Holds the query open until the returned function is called. Only a query made with
   * `{ whileHeld: true }` (and returned by no call without it) needs holding: it closes a second
   * after nothing holds it. Holding a closed query does nothing.
   */
  hold(): () => void {
    return this.#host.hold(this);
  }

  /** How the results were computed from scratch: which index served it, if any. */
  explain(): QueryPlan {
    return this.#plan;
  }

  /**
   * Stops updating the query and drops its subscribers. A pooled query is closed for every
   * holder: the next identical `query()` call creates a new one.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unplaced = [];
    this.#subscribers.clear();
    this.#failures.close();
    this.#host.closed(this);
    if (this.#pending) {
      this.#pending = false;
      this.#resolveReady(this.results);
    }
    const listeners = [...this.#closeListeners];
    this.#closeListeners.clear();
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        reportUncaught(err);
      }
    }
  }

  // ── internal: driven by the registry ─────────────────────────────────────────────────────

  /** @internal The member for `key` if its value matches, else undefined. */
  match(key: string, value: ItemValue | undefined, previous?: Member<R>): Member<R> | undefined {
    const wire = this.#accept(key, value, previous);
    if (wire === undefined) return undefined;
    const view = this.#acceptedView;
    this.#acceptedView = undefined;
    return { key, wire, schema: value!.schema, view, placing: PLACED };
  }

  /**
   * The item's wire value in the query schema's shape when it matches, else undefined. A
   * predicate query leaves the result element it built (or reused from `previous`, when the item
   * is stored under the same schema) in `#acceptedView`.
   */
  #accept(
    key: string,
    value: ItemValue | undefined,
    previous: Member<R> | undefined,
  ): FieldRecord | undefined {
    this.#acceptedView = undefined;
    if (this.#predicate !== undefined) this.#failures.forget(key);
    if (value === undefined) return undefined;
    let wire = value.wire;
    if (wire === undefined) return undefined;
    const schema = this.#schema;
    if (schema === undefined) {
      if (!this.#host.readable(value.schema)) return undefined;
    } else if (value.schema !== schema.id) {
      if (this.#host.nsOf(value.schema) !== schema.ns) return undefined;
      wire = this.#host.convert(key, value, schema);
      if (wire === undefined) return undefined;
    }
    if (this.#test !== undefined && !this.#test(wire)) return undefined;
    if (this.#predicate !== undefined) {
      let view: R;
      try {
        view = previous !== undefined && previous.schema === value.schema &&
            previous.view !== undefined
          ? previous.view
          : this.#host.view(key, value.schema, schema);
        if (!this.#predicate(view)) return undefined;
      } catch (err) {
        // The writer's write goes on: the item does not match, and the query reports the error.
        this.#failures.predicateThrew(key, err);
        this.#queue();
        return undefined;
      }
      this.#acceptedView = view;
    }
    return wire;
  }

  /** @internal Starts the query with the members found by a complete evaluation. */
  start(matches: Member<R>[], plan: QueryPlan): void {
    for (const member of matches) this.#members.set(member.key, member);
    this.#plan = { ...plan, matched: matches.length };
    this.#list = SortedList.from(matches, this.#order);
    this.#pending = false;
    this.#generation++;
    this.#resolveReady(this.results);
  }

  /** @internal Starts a scan in slices: until `finish`, changes only update the member map. */
  beginScan(): void {
    this.#pending = true;
  }

  /** @internal One scanned item (sliced scans). */
  scanned(key: string, value: ItemValue): void {
    const member = this.match(key, value);
    if (member) this.#members.set(key, member);
    else this.#members.delete(key);
  }

  /** @internal The sliced scan is complete. */
  finishScan(plan: QueryPlan): void {
    if (this.#closed) return;
    const matches = [...this.#members.values()];
    this.#members.clear();
    this.start(matches, plan);
    this.#resultsChanged = true;
    this.#queue();
  }

  /**
   * @internal Re-evaluates one changed item. A member that still matches keeps its member object
   * and, when its sort values did not change (or it still sorts between its neighbours), its
   * place: only entering, leaving and moving items touch the sorted list.
   */
  apply(key: string, value: ItemValue | undefined): void {
    const list = this.#list;
    if (list !== undefined && this.#batches) return this.#note(key, value);
    const old = this.#members.get(key);
    if (list === undefined) { // scanning in slices: the member map is all there is yet
      const next = this.match(key, value, old);
      if (next) this.#members.set(key, next);
      else if (old) this.#members.delete(key);
      return;
    }
    const limited = this.#limit !== Infinity;
    if (old === undefined) {
      const next = this.match(key, value);
      if (next === undefined) return;
      this.#members.set(key, next);
      this.#touched(list.insert(next, limited));
      return;
    }
    const wire = this.#accept(key, value, old);
    // A caller's comparator reads items as they are now, not as they were placed (the item may
    // even be deleted): the old member is found by identity instead of by order.
    const byOrder = !this.#byComparator;
    if (wire === undefined) {
      this.#members.delete(key);
      this.#touched(list.remove(old, limited, byOrder));
      return;
    }
    const view = this.#acceptedView;
    this.#acceptedView = undefined;
    // Unlimited and sorted the same as before: the member stays where it is, untouched.
    const stays = !limited && byOrder && sameSortKey(this.#sortFields, old.wire, wire);
    if (!stays && !list.find(old, byOrder)) throw new Error("live query lost a member");
    this.#update(old, wire, value!.schema, view);
    this.#touched(stays ? 0 : list.resettle(limited));
  }

  /**
   * `apply` for a query that places changes in batches: the member map is brought up to date at
   * once, the sorted list by `#place` (states in comparator.ts `Placing`). A member whose sort
   * values change leaves its place, and a new member for the item enters at the new one, so that
   * a listed member always holds the values it was placed by. A member that stops matching stays
   * in the map as a tombstone, so that an item leaving and coming back (a toggled flag, a value
   * moving out of a range and back) costs no map removal and insertion, and keeps its member and
   * its result element.
   */
  #note(key: string, value: ItemValue | undefined): void {
    const old = this.#memberOf(key, value);
    const wire = this.#accept(key, value, old);
    const matched = old !== undefined &&
      (old.placing === PLACED || old.placing === ENTERING || old.placing === STAYING);
    if (wire === undefined) {
      if (!matched) return;
      if (old.placing === ENTERING) old.placing = GONE; // queued already
      else {
        if (old.placing === PLACED) this.#unplaced.push(old);
        old.placing = LEAVING;
      }
      this.#touched(0);
      return;
    }
    const view = this.#acceptedView;
    this.#acceptedView = undefined;
    const schema = value!.schema;
    if (old === undefined) {
      const entering: Member<R> = { key, wire, schema, view, placing: ENTERING };
      this.#members.set(key, entering);
      this.#attached!.set(value, entering);
      this.#unplaced.push(entering);
    } else if (
      old.placing === ENTERING || old.placing === GONE || old.placing === OUT ||
      sameSortKey(this.#sortFields, old.wire, wire)
    ) {
      // Its place is where `wire` puts it, or it has none yet: it takes the new value as it is.
      if (old.placing === OUT) {
        this.#tombstones--;
        this.#unplaced.push(old);
      }
      old.placing = old.placing === LEAVING || old.placing === STAYING
        ? STAYING
        : old.placing === PLACED
        ? PLACED
        : ENTERING;
      this.#update(old, wire, schema, view);
    } else {
      if (old.placing === PLACED) this.#unplaced.push(old);
      old.placing = MOVED;
      const moved: Member<R> = { key, wire, schema: old.schema, view: old.view, placing: ENTERING };
      this.#update(moved, wire, schema, view);
      this.#members.set(key, moved);
      this.#attached!.set(value, moved);
      this.#unplaced.push(moved);
    }
    this.#touched(0);
  }

  /** The item's member or tombstone: kept with its state, else looked up (and then kept). */
  #memberOf(key: string, value: ItemValue | undefined): Member<R> | undefined {
    const attached = this.#attached!.get(value);
    if (attached !== undefined && attached.placing !== CLEARED) return attached;
    const member = this.#members.get(key);
    if (member !== undefined) this.#attached!.set(value, member);
    return member;
  }

  /** The member takes the item's new value; its result element is kept unless it must change. */
  #update(member: Member<R>, wire: FieldRecord, schema: string, view: R | undefined): void {
    if (member.schema !== schema) member.view = view;
    else if (view !== undefined) member.view = view;
    member.wire = wire;
    member.schema = schema;
  }

  /**
   * Brings the sorted list up to date with the changes noted since: one member at a time when
   * they are few, else in one pass that drops the leaving members and merges in the entering
   * ones, sorted (which costs one look at each member plus a sort of the batch). Tombstones are
   * cleared out of the member map once they outnumber the members by more than `TOMBSTONE_SLACK`.
   */
  #place(): void {
    const unplaced = this.#unplaced;
    if (unplaced.length === 0) return;
    this.#unplaced = [];
    const list = this.#list!;
    const leaves = (member: Member<R>) => member.placing === LEAVING || member.placing === MOVED;
    if (unplaced.length < list.size * ONE_PASS_SHARE) {
      // Leaving first: a member leaving and one entering for the same item may sort as equals.
      for (const member of unplaced) if (leaves(member)) list.remove(member);
      for (const member of unplaced) if (member.placing === ENTERING) list.insert(member);
    } else {
      const entering = unplaced.filter((member) => member.placing === ENTERING);
      list.replace(leaves, entering.sort(this.#order));
    }
    for (const member of unplaced) {
      if (member.placing === LEAVING || member.placing === GONE) {
        member.placing = OUT;
        this.#tombstones++;
      } else if (member.placing !== MOVED) member.placing = PLACED;
    }
    if (this.#tombstones > TOMBSTONE_SLACK + this.#members.size - this.#tombstones) {
      for (const [key, member] of this.#members) {
        if (member.placing !== OUT) continue;
        member.placing = CLEARED; // kept with its item's state still: no longer the item's
        this.#members.delete(key);
      }
      this.#tombstones = 0;
    }
  }

  /**
   * @internal New versions of these namespaces were registered. A query without a schema shows
   * each item through its namespace's newest version, so the result elements made before are
   * made again: a field only the new version has would fail to read through them. Returns
   * whether it is such a query (its matches may change too).
   */
  newestVersionsChanged(namespaces: ReadonlySet<string>): boolean {
    if (this.#schema !== undefined || this.#closed) return false;
    let dropped = false;
    for (const member of this.#members.values()) {
      if (member.view !== undefined && namespaces.has(this.#host.nsOf(member.schema))) {
        member.view = undefined;
        dropped = true;
      }
    }
    if (dropped) {
      this.#generation++;
      this.#resultsChanged = true;
      this.#queue();
    }
    return true;
  }

  /** The results changed from rank `rank` on: a new generation, unless beyond the limit. */
  #touched(rank: number): void {
    if (rank >= this.#limit) return;
    this.#generation++;
    this.#resultsChanged = true;
    this.#queue();
  }

  #queue(): void {
    if (this.#queued) return;
    this.#queued = true;
    this.#host.changed(this);
  }

  /**
   * @internal Once per batch, from the registry: reports what threw, then calls the subscribers
   * if the results changed.
   */
  notify(): void {
    this.#queued = false;
    if (this.#closed) return;
    this.#place();
    // Made for holders and held by none (after a server-side render, or in the grace after its
    // last holder let go): a failure is no one's to hear, so it is not reported as uncaught.
    this.#failures.report(!this.#host.unheld(this));
    if (!this.#resultsChanged) return;
    this.#resultsChanged = false;
    if (this.#subscribers.size === 0) return;
    const results = this.results;
    for (const listener of [...this.#subscribers]) {
      try {
        listener(results);
      } catch (err) {
        reportUncaught(err);
      }
    }
  }

  #build(): readonly R[] {
    if (this.#pending || this.#list === undefined) return NONE;
    const members = this.#list.toArray(this.#limit);
    const out = new Array<R>(members.length);
    for (let i = 0; i < members.length; i++) out[i] = this.#viewOf(members[i]);
    return Object.freeze(out);
  }

  #viewOf(member: Member<R>): R {
    if (member.view === undefined) {
      member.view = this.#host.view(member.key, member.schema, this.#schema);
    }
    return member.view;
  }
}
