/**
 * An in-memory repository: the items map, the commit graph, the per-session block chains, and
 * the two ways commits enter — local writes (synchronous, sealed once per tick into signed
 * blocks of a capped size) and imported blocks (verified whole before anything of them applies).
 *
 * The repository coordinates parts with one job each, handing each only what it needs:
 * block_verifier.ts checks a block, seal_pipeline.ts seals local commits, session_chains.ts and
 * held_blocks.ts keep the chains and the blocks for exports, held_back.ts the commits that wait
 * for lost history. What changes item states — local writes, applying checked commits, merging
 * leaves — is done here.
 *
 * Everything here works on wire values; typed access lives in db/.
 */
import {
  type BlockSigner,
  decodeBlock,
  encodeBlockPayload,
  type SealedBlock,
  verifyBlock,
} from "../core/block.ts";
import {
  type Commit,
  commitId,
  type FieldRecord,
  makeCommit,
  makeOwnParentCommit,
  ownParentSeq,
  parseCommitId,
  type WireValue,
} from "../core/commit.ts";
import { toBase64Url } from "../core/bytes.ts";
import { CairnError, isCairnError } from "../core/errors.ts";
import type { HybridClock } from "../core/hlc.ts";
import type { SchemaRegistry } from "../core/schema.ts";
import type { CryptoSuite } from "../core/signing.ts";
import { type ItemState, type ItemValue, soleLeaf, SoleLeafState } from "../core/item_state.ts";
import type { RepositorySnapshot, RestoredSnapshot } from "../core/snapshot.ts";
import { applyDelta, CommitGraph } from "./commit_graph.ts";
import { type LeafMerge, type MergedValue, mergeLeaves } from "./leaf_merge.ts";
import { ChangeListeners, type ItemChange } from "./change_listeners.ts";
import { type BlockListener, BlockListeners, SEALED_HERE } from "./block_listeners.ts";
import { GeneratedKeys } from "./generated_keys.ts";
import { isLive, ItemMap, type StoredPrefilter } from "./item_map.ts";
import { HeldBackCommits } from "./held_back.ts";
import { type HeldBlock, HeldBlocks } from "./held_blocks.ts";
import { BlockVerifier, type CheckedBlock } from "./block_verifier.ts";
import { SealPipeline } from "./seal_pipeline.ts";
import { type BlockTextCheck, type TextFieldChange, TextFields } from "./text_fields.ts";
import type { TextChange } from "../core/text/text_doc.ts";
import type { TextOp } from "../core/text/text_ops.ts";
import { copyRecord, setLazyText } from "../core/text/text_record.ts";
import {
  type ChainPlace,
  type MissingBlocks,
  SessionChains,
  type VersionVector,
} from "./session_chains.ts";

export type { MissingBlocks, VersionVector } from "./session_chains.ts";
export { sealing } from "./seal_pipeline.ts";

/** What a repository needs from the database that owns it. */
export interface RepositoryContext {
  readonly session: string;
  readonly publicKey: Uint8Array;
  /** null in trusted mode: blocks are neither signed nor verified. */
  readonly signer: BlockSigner | null;
  readonly suite: CryptoSuite;
  readonly registry: SchemaRegistry;
  readonly clock: HybridClock;
  /** Whether blocks by this session may enter (the own session always may). */
  readonly isTrusted: (session: string, publicKey: Uint8Array) => boolean;
  /**
   * Persists a block that entered (sealed here or imported); resolves when it is as durable as
   * the database's mode promises. Absent for an in-memory database. A rejection is not final:
   * the block stays queued and `persisted` writes it again.
   */
  readonly persist?: (sealed: SealedBlock) => Promise<void>;
  /**
   * Resolves when every block handed to `persist` so far is as durable as the mode promises,
   * writing again those a failed write left queued; rejects (E_IO) when that write fails too.
   */
  readonly persisted?: () => Promise<void>;
  /**
   * Called when the last block known to be missing (lost to damage in storage) has come back and
   * every commit held back for it has applied: storage may now rewrite its log whole.
   */
  readonly onRepaired?: () => void;
}

/** History lost to damage in storage, which a peer that holds it can send back. */
export interface MissingHistory {
  /** Blocks known to be missing, per session in runs of seqs. */
  readonly blocks: readonly MissingBlocks[];
  /** Commits held back (not applied) until the missing blocks come back. */
  readonly heldBackCommits: number;
  /** Items those commits belong to: their values stay as they were before the lost history. */
  readonly heldBackItems: number;
}

/** What loading a repository's stored blocks found. */
export interface LoadReport {
  readonly blocks: number;
  readonly commits: number;
  /** Stored blocks that could not be applied (a bad signature, or history lost to damage). */
  readonly unloadable: readonly { session: string; seq: number; error: CairnError }[];
}

export interface ImportReport {
  /** Blocks applied. */
  readonly applied: number;
  /** Commits those blocks carried. */
  readonly commits: number;
  /** Blocks already held (the same hash at the same place in their chain): nothing to do. */
  readonly duplicates: number;
  /** Blocks refused, with why; nothing of a refused block was applied. */
  readonly rejected: readonly {
    index: number;
    session?: string;
    seq?: number;
    error: CairnError;
  }[];
}

/**
 * A block its caller has decoded already (a sync server decodes each pushed block to authorize
 * its author), with the bytes it came as: importBlocks then does not decode it again. A class,
 * so that nothing handed to the public importBlocks passes for one: only code that imports this
 * module makes them.
 */
export class DecodedBlock {
  readonly bytes: Uint8Array;
  readonly sealed: SealedBlock;

  constructor(bytes: Uint8Array, sealed: SealedBlock) {
    this.bytes = bytes;
    this.sealed = sealed;
  }
}

const NO_UNSET: readonly string[] = Object.freeze([]);

/** Shared by every commit without parents (creates), so none allocates its own. */
const NO_PARENTS: readonly string[] = Object.freeze([]);

/** How many blocks of one import are decoded and authenticated ahead of the one applied. */
const AUTHENTICATED_AHEAD = 32;

interface Authenticated {
  /** Undefined when the frame could not be decoded. */
  sealed?: SealedBlock;
  /** Why the block is refused, if it is. */
  error?: unknown;
}

/** A full value is written after this many deltas, bounding the walk that rebuilds a value. */
const MAX_DELTA_CHAIN = 32;

export class Repository {
  readonly path: string;
  readonly #ctx: RepositoryContext;
  readonly #graph = new CommitGraph();
  readonly #generatedKeys: GeneratedKeys;
  /** Every key's state, deleted ones included. */
  #items: ItemMap;
  readonly #listeners = new ChangeListeners();
  readonly #blockListeners = new BlockListeners();
  /** Public keys (base64url) trusted to write this repository only (see trustWriters). */
  #writers: ReadonlySet<string> = new Set();
  /**
   * Keys whose leaves could not be merged for want of a registered schema, or whose value may
   * read otherwise once it is (#mayReadAsText).
   */
  readonly #unresolved = new Set<string>();
  /**
   * Whether an item that may read otherwise once its schema is registered came while none was:
   * then every item is looked at when one is. A sync server's database registers none, and so
   * keeps no set of waiting keys as large as its repository.
   */
  #allMayWait = false;
  #liveCount = 0;
  #lastKey: string | undefined;
  #lastState: ItemState | undefined;
  #commitSeq = 0;

  /** Blocks in the order they were applied here, for exports. */
  readonly #blocks = new HeldBlocks((id) =>
    (this.#graph.get(id) ?? this.#heldBack.get(id))?.parents
  );
  /** Tips, block hashes (a duplicate told from a fork) and blocks known to be missing. */
  readonly #chains: SessionChains;
  /** Commits waiting for history lost to damage. */
  readonly #heldBack = new HeldBackCommits();
  /** The items' text fields, one document each. */
  readonly #texts: TextFields;
  /** The lowest common ancestor each merged state was made from (see #merged). */
  readonly #mergeBases = new WeakMap<ItemState, Commit | null>();
  /**
   * The merge each merged state was made by, when a leaf may be added to it (see
   * #mergedWithNewLeaf). Handed on to the next state with the leaf added, never shared.
   */
  readonly #leafMerges = new WeakMap<ItemState, LeafMerge>();

  #closed = false;
  /**
   * Set after `restore`: reads the blocks the restored snapshot stands for. The commit graph,
   * the blocks list (for exports) and the block hashes (for duplicates) hold only what came
   * after the snapshot until `#ensureHistory` has read them.
   */
  #history: (() => Promise<readonly SealedBlock[]>) | undefined;
  #hydrating: Promise<void> | undefined;
  /** Seals local commits into blocks, once per tick. */
  readonly #seals: SealPipeline;
  /** Checks a block before anything of it applies. */
  readonly #verifier: BlockVerifier;

  constructor(path: string, ctx: RepositoryContext) {
    this.path = path;
    this.#chains = new SessionChains(path);
    this.#ctx = ctx;
    this.#generatedKeys = new GeneratedKeys(ctx.session, () => this.#commitSeq);
    this.#texts = new TextFields(ctx.registry);
    this.#items = new ItemMap(undefined, this.#generatedKeys);
    const { session, publicKey, signer, suite, registry, clock } = ctx;
    this.#seals = new SealPipeline({
      path,
      session,
      publicKey,
      signer,
      suite,
      tip: () => this.#chains.tip(session),
      sealed: (sealed) => {
        this.#recordBlock(sealed, "next");
        return this.#store(sealed, SEALED_HERE);
      },
      persisted: ctx.persisted,
    });
    this.#verifier = new BlockVerifier({
      session,
      signer,
      suite,
      registry,
      clock,
      isTrusted: (session, publicKey) =>
        ctx.isTrusted(session, publicKey) || this.#writers.has(toBase64Url(publicKey)),
      graph: this.#graph,
      heldBack: this.#heldBack,
      leaf: (key, id) => this.#heldLeaf(key, id),
      leaves: (key) => this.#state(key)?.leaves ?? [],
      texts: this.#texts,
    });
  }

  // ── reads ────────────────────────────────────────────────────────────────────────────────

  /** Live (not deleted) items. O(1). */
  count(): number {
    return this.#liveCount;
  }

  keys(): IterableIterator<string> {
    return this.#items.liveKeys();
  }

  /** The keys of live items, one per call of the step returned, then undefined. */
  liveKeyStep(): () => string | undefined {
    return this.#items.liveKeyStep();
  }

  /** The current value of a live item, or undefined. */
  value(key: string): ItemValue | undefined {
    const state = this.#state(key);
    return state?.wire === undefined ? undefined : state;
  }

  /** The key's state, deleted items included (`wire` undefined); undefined for an unknown key. */
  state(key: string): ItemValue | undefined {
    return this.#state(key);
  }

  /**
   * Every item's current state, deleted ones included (`wire` undefined), read-only: what the
   * query layer scans and builds indexes from, without a lookup or an allocation per item.
   */
  items(): ReadonlyMap<string, ItemValue> {
    return this.#items;
  }

  /**
   * Visits every item's state as `items().forEach` does, passing over restored items still in
   * their stored form that `prefilter` rejects on their stored bytes; returns how many existing
   * items it passed over.
   */
  scanPassing(prefilter: StoredPrefilter, visit: (value: ItemValue, key: string) => void): number {
    return this.#items.forEachPassing(prefilter, visit);
  }

  /** scanPassing as an iterator of entries, for a scan in slices. */
  entriesPassing(
    prefilter: StoredPrefilter,
    tally: { passedOver: number },
  ): IterableIterator<[string, ItemValue]> {
    return this.#items.entriesPassing(prefilter, tally);
  }

  /** The ids of a key's leaf commits (empty for an unknown key). */
  leaves(key: string): string[] {
    const state = this.#state(key);
    return state ? state.leaves.map(commitId) : [];
  }

  /**
   * A key no item of this repository has had: made from the next local commit's number, or from
   * the next free number after it. Another repository of this session makes the same keys from
   * its own numbers, so an item copied from there with its key may hold one already.
   */
  newKey(): string {
    for (let seq = this.#commitSeq + 1;; seq++) {
      const key = this.#generatedKeys.make(seq);
      // Remembered first: the check and the create's own lookup then neither parse nor hash it
      // again.
      this.#items.rememberGenerated(key, seq);
      if (!this.#items.has(key)) return key;
    }
  }

  onChange(listener: (change: ItemChange) => void): () => void {
    return this.#listeners.add(listener);
  }

  /**
   * Like `onChange`, but called before every other listener, whenever it was added: the query
   * layer, made at the first query, so that queries and indexes are up to date in any listener,
   * and a write a listener makes finds them holding the change before it.
   */
  onChangeFirst(listener: (change: ItemChange) => void): () => void {
    return this.#listeners.addFirst(listener);
  }

  onItemChange(key: string, listener: (change: ItemChange) => void): () => void {
    return this.#listeners.addForKey(key, listener);
  }

  /**
   * @internal Tells `listener` about every block that enters from now on — sealed here (origin
   * SEALED_HERE) or imported (the origin given to importBlocks) — once it is applied, recorded
   * and, with storage, stored. What a sync client pushes.
   */
  onBlock(listener: BlockListener): () => void {
    return this.#blockListeners.add(listener);
  }

  /**
   * @internal Trusts exactly the public keys (base64url) of `writers` to write this repository,
   * on top of the database's trusted sessions: the writers a sync server lists for it. Replaces
   * the last set. The set is read as it stands whenever a block is checked: its owner (the sync
   * link) adds writers to it as the server lists them, without handing over a copy each time.
   */
  trustWriters(writers: ReadonlySet<string>): void {
    this.#writers = writers;
  }

  // ── local writes: synchronous in memory, sealed once per tick ─────────────────────────────

  /** Creates `key` with the value `wire`: E_KEY_EXISTS while it is live (a deleted key may return). */
  create(key: string, schema: string, wire: FieldRecord): void {
    const state = this.#state(key);
    if (state !== undefined && isLive(state)) {
      throw new CairnError("E_KEY_EXISTS", `item ${key} already exists in ${this.path}`);
    }
    this.#commitLocal(key, schema, state, "value", wire);
  }

  /** Replaces a live item's value with the full value `wire` (e.g. under a newer schema version). */
  writeValue(key: string, schema: string, wire: FieldRecord): void {
    const state = this.#requireLive(key);
    this.#commitLocal(key, schema, state, "value", wire);
  }

  /**
   * Changes fields of a live item: `next` is the whole new value, `set`/`unset` what changed.
   * Written as a delta when the item has one leaf of the same schema, else as a full value.
   */
  writeChange(
    key: string,
    schema: string,
    next: FieldRecord,
    set: FieldRecord,
    unset: string[],
  ): void {
    const state = this.#requireLive(key);
    const asDelta = state.schema === schema && state.deltas < MAX_DELTA_CHAIN &&
      soleLeaf(state) !== undefined;
    if (asDelta) this.#commitLocal(key, schema, state, "delta", next, set, unset);
    else this.#commitLocal(key, schema, state, "value", next);
  }

  delete(key: string): void {
    const state = this.#requireLive(key);
    this.#commitLocal(key, state.schema, state, "delete", undefined);
  }

  /**
   * Edits a live item's text field by position: at `change.index`, `change.deleted` code units
   * removed, then `change.inserted` put there. E_BAD_ARGUMENT for positions outside the text or
   * inside a surrogate pair. The item's value must follow `schema` (the caller upgrades it first).
   */
  editText(key: string, schema: string, field: string, change: TextChange): void {
    const state = this.#requireLive(key);
    this.#checkOpen();
    this.#texts.checkEdit(key, field, state.wire!, change);
    const session = this.#ctx.session;
    const edited = this.#texts.edit(key, field, state.wire!, session, (doc) => {
      const ops: TextOp[] = doc.delete(change.index, change.deleted);
      if (change.inserted.length > 0) {
        ops.push(doc.insert(change.index, change.inserted, session, doc.nextClock(session)));
      }
      return ops;
    });
    // The text is read when someone reads it, not per edit (core/text/text_record.ts).
    const next = copyRecord(state.wire!);
    setLazyText(next, field, edited.text);
    const carried = { field, wire: edited.wire, changes: [change] };
    const asDelta = state.schema === schema && state.deltas < MAX_DELTA_CHAIN &&
      soleLeaf(state) !== undefined;
    if (asDelta) {
      this.#commitLocal(
        key,
        schema,
        state,
        "delta",
        next,
        { [field]: edited.wire },
        NO_UNSET,
        carried,
      );
    } else this.#commitLocal(key, schema, state, "value", next, undefined, undefined, carried);
  }

  /**
   * Resolves when every write so far is sealed and persisted as the mode promises. A failed
   * write rejects it (E_IO) but loses nothing: the next flush writes those blocks again, and
   * resolves once they, and everything before, are persisted.
   */
  async flush(): Promise<void> {
    await this.#seals.flush();
    this.#blockListeners.allStored();
  }

  /**
   * Applies blocks read from this repository's own storage, in stored order. They were checked
   * when they first entered, so trust is not asked again; signatures are verified (the file may
   * have been altered). A chain gap is tolerated — damage may have removed a stored record: the
   * missing blocks are recorded (missingBlocks()), and the commits that need the lost history are
   * held back until it comes back; every other commit applies.
   */
  async load(blocks: readonly SealedBlock[]): Promise<LoadReport> {
    // Our own blocks after a snapshot only ever name leaves it holds; a peer's may need history,
    // and so may merging an item the snapshot left waiting for a schema.
    if (this.#anyWaits() || blocks.some((sealed) => sealed.block.session !== this.#ctx.session)) {
      await this.#ensureHistory();
    }
    let applied = 0;
    let commits = 0;
    const unloadable: { session: string; seq: number; error: CairnError }[] = [];
    for (const sealed of blocks) {
      try {
        if (this.#ctx.signer) await verifyBlock(sealed, this.#ctx.suite);
        const place = this.#chains.place(sealed, true);
        if (place === "duplicate") continue;
        this.#applyBlock(sealed, this.#verifier.check(sealed, true), place);
        applied++;
        commits += sealed.block.commits.length;
      } catch (err) {
        if (!isCairnError(err)) throw err;
        unloadable.push({ session: sealed.block.session, seq: sealed.block.seq, error: err });
      }
    }
    // Our own blocks may have left an item waiting (a text edit under a schema not registered):
    // registering it, at any time, merges the item again, and that walks its history.
    if (this.#anyWaits()) await this.#ensureHistory();
    return { blocks: applied, commits, unloadable };
  }

  /** Whether an item may read otherwise once a schema is registered (see remergeUnresolved). */
  #anyWaits(): boolean {
    return this.#allMayWait || this.#unresolved.size > 0;
  }

  /** After close, writes and imports fail with E_CLOSED; reads still see the last state. */
  close(): void {
    this.#closed = true;
  }

  /** Whether close() was called: writes and imports are refused. */
  get closed(): boolean {
    return this.#closed;
  }

  #checkOpen(): void {
    if (this.#closed) throw new CairnError("E_CLOSED", `repository ${this.path} is closed`);
  }

  #requireLive(key: string): ItemState {
    const state = this.#state(key);
    if (state?.wire === undefined) {
      throw new CairnError("E_NOT_FOUND", `no item ${key} in ${this.path}`);
    }
    return state;
  }

  /**
   * Writes a local commit of `kind`: `next` is the item's new value (undefined once deleted),
   * which a "value" commit carries whole and a "delta" one as `set` and `unset`. Text fields
   * given as strings are carried as the edit from the current text; `edited`, a text field
   * already edited by position, is carried as its operations.
   */
  #commitLocal(
    givenKey: string,
    schema: string,
    state: ItemState | undefined,
    kind: Commit["kind"],
    next: FieldRecord | undefined,
    set?: FieldRecord,
    unset?: readonly string[],
    edited?: { field: string; wire: WireValue; changes: TextChange[] },
  ): void {
    this.#checkOpen();
    // Schemas check their ids; this guards callers that name one as text (the CLI's import): a
    // lone surrogate would seal a block every reader but this one refuses.
    if (!schema.isWellFormed()) {
      throw new CairnError("E_BAD_ARGUMENT", "a schema id must not hold a lone surrogate");
    }
    const key = state === undefined ? givenKey : heldKey(state);
    const session = this.#ctx.session;
    let change = kind === "delta" ? set : next;
    let text: TextFieldChange[] | undefined;
    if (change !== undefined && this.#texts.fieldsOf(schema).length > 0) {
      const written = this.#texts.write(key, schema, change, state?.wire, session, edited?.field);
      if (written) [change, text] = [written.record, written.changes];
      if (edited) {
        change = copyRecord(change!);
        change[edited.field] = edited.wire;
        (text ??= []).push({ field: edited.field, changes: edited.changes });
      }
    }
    const seq = ++this.#commitSeq;
    const hlc = this.#nextHlc(state);
    const sole = state === undefined ? undefined : soleLeaf(state);
    const commit = sole?.session === session
      ? makeOwnParentCommit(session, seq, key, hlc, sole.seq, schema, kind, change, unset)
      : makeCommit(
        session,
        seq,
        key,
        hlc,
        state === undefined ? NO_PARENTS : leafIds(state),
        schema,
        kind,
        change,
        unset,
      );
    this.#graph.add(commit);
    const deltas = kind === "delta" ? state!.deltas + 1 : 0;
    const made = new SoleLeafState(commit, next, schema, deltas);
    // A local write under a schema not registered here (the CLI's import) waits for it as an
    // imported one does: a checkpoint must name it, or it would read otherwise than the log.
    if (this.#unresolved.size > 0) this.#unresolved.delete(key);
    this.#awaitSchemaForText(key, made);
    this.#setState(key, state, made);
    this.#seals.add(commit);
    if (this.#listeners.active) {
      this.#listeners.emit(changeEvent(key, "local", next === undefined, text));
    }
  }

  /** A clock reading after every leaf's, even a leaf stamped ahead of our clock. */
  #nextHlc(state: ItemState | undefined): number {
    const hlc = this.#ctx.clock.now();
    if (state === undefined) return hlc;
    const leaf = soleLeaf(state);
    if (leaf !== undefined) return leaf.hlc >= hlc ? leaf.hlc + 1 : hlc;
    let after = hlc;
    for (const other of state.leaves) if (other.hlc >= after) after = other.hlc + 1;
    return after;
  }

  // ── snapshots (checkpoints) ──────────────────────────────────────────────────────────────

  /** At the next moment every local write is sealed and stored, if one comes: see SealPipeline. */
  whenQuiet(listener: (quiet: boolean) => void, chances: number): void {
    this.#seals.whenQuiet(listener, chances);
  }

  /**
   * The heads as plain data, taken synchronously; undefined unless every write is sealed (and
   * handed to `persist`) and no block is missing — a snapshot must match the log exactly, and a
   * repository with history lost to damage is read from its log until repaired (a snapshot
   * cannot carry held-back commits). Items that wait for a schema are named in it: restored,
   * they wait again (see restore).
   */
  snapshot(): RepositorySnapshot | undefined {
    if (this.#seals.busy || !this.isWhole()) return undefined;
    // forEach, not a spread of the map's entries: a checkpoint of 100k items took ~20-40 ms
    // to copy them through the iterator, all of it a pause of the event loop.
    const items: [string, ItemState][] = [];
    this.#items.forEach((state, key) => items.push([key, state]));
    const texts = this.#texts.snapshot();
    const unresolved = this.#allMayWait ? "all" : new Set(this.#unresolved);
    return { commitSeq: this.#commitSeq, tips: this.#chains.tips(), items, texts, unresolved };
  }

  /**
   * Starts from a snapshot instead of replaying history. Nothing per item is made here: the
   * items map reads the snapshot's items on demand, and the commit graph finds its leaves there.
   * `history` reads the blocks the snapshot stands for, when an import, export or merge needs
   * them. Call on an empty repository, before load(). Items the snapshot names as waiting for
   * a schema wait again: load() then reads the history, which merging them needs once the
   * schema comes (registering one is synchronous, and may come at any time).
   */
  restore(snapshot: RestoredSnapshot, history: () => Promise<readonly SealedBlock[]>): void {
    this.#items = new ItemMap(snapshot.items, this.#generatedKeys);
    this.#lastKey = undefined;
    this.#lastState = undefined;
    this.#liveCount = snapshot.items.liveCount;
    this.#graph.findMissingIn((session, seq) => snapshot.leaf(session, seq));
    this.#texts.findMissingIn(snapshot.texts);
    for (const [session, tip] of snapshot.tips) this.#chains.restoreTip(session, tip);
    this.#commitSeq = snapshot.commitSeq;
    this.#history = history;
    if (snapshot.unresolved === "all") this.#allMayWait = true;
    else for (const key of snapshot.unresolved) this.#unresolved.add(key);
  }

  /** Reads the history a snapshot stood for: commits into the graph, blocks and hashes. */
  #ensureHistory(): Promise<void> {
    const history = this.#history;
    if (!history) return Promise.resolve();
    this.#hydrating ??= history().then((blocks) => {
      for (const sealed of blocks) {
        // The snapshot's leaf objects stay (has() finds them): item states point at them.
        for (const commit of sealed.block.commits) {
          if (!this.#graph.has(commitId(commit))) this.#graph.add(commit);
        }
        this.#chains.recordHistory(sealed.block.session, sealed.block.seq, sealed.digest);
      }
      // Held as their bodies from now on, like blocks applied here (the leaves stay objects).
      this.#blocks.addHistory(blocks).forEach((held, i) => {
        this.#graph.keepEncoded(blocks[i].block, held);
      });
      this.#history = undefined;
    }).finally(() => {
      this.#hydrating = undefined;
    });
    return this.#hydrating;
  }

  /**
   * Writes a block that entered to storage, and tells block listeners once it is there. The
   * promise settles (never rejects) when the write ends: a failure leaves the block queued for
   * the next write, and flush() retries and reports it.
   */
  #store(sealed: SealedBlock, origin: unknown, frame?: Uint8Array): Promise<void> | undefined {
    const write = this.#ctx.persist?.(sealed);
    this.#blockListeners.entered(sealed, origin, frame, write);
    return write?.catch(() => {});
  }

  // ── exchange ─────────────────────────────────────────────────────────────────────────────

  /**
   * What this repository holds: per session, the last block seq held with none missing before
   * it. A block lost to damage keeps its session's entry below it, so a peer's reply brings it.
   */
  versionVector(): VersionVector {
    return this.#chains.versionVector();
  }

  /** Blocks known to be missing (lost to damage in storage) and the commits waiting for them. */
  missingHistory(): MissingHistory {
    return {
      blocks: this.#chains.missing(),
      heldBackCommits: this.#heldBack.size,
      heldBackItems: this.#heldBack.items(),
    };
  }

  /**
   * @internal Every text field held as a document, with its text now and whether an edit ever
   * reached it: for a tool that reads a repository without its schemas (the CLI), whose items'
   * values hold such fields as edits. A document never edited may be an empty set's: without
   * the schema, a text created empty and an empty set look the same (`[]`).
   */
  heldTexts(): IterableIterator<[key: string, field: string, text: string, edited: boolean]> {
    return this.#texts.texts();
  }

  /** Encoded blocks a peer at `since` lacks, in an order it can apply (causal). */
  async exportBlocks(since: VersionVector = {}): Promise<Uint8Array[]> {
    return (await this.#blocksSince(since)).map(encodeHeld);
  }

  /**
   * @internal exportBlocks of other sessions' blocks held now, without first sealing and
   * persisting pending writes: for a tab taking the lead, whose own blocks reach the storage as
   * pushes (which wait for it to serve, and are then sent on to every tab).
   */
  async exportOthersHeldBlocks(since: VersionVector): Promise<Uint8Array[]> {
    await this.#ensureHistory();
    const others = { ...since, [this.#ctx.session]: Number.MAX_SAFE_INTEGER };
    return this.#blocks.since(others).map(encodeHeld);
  }

  /**
   * @internal exportBlocks with each block's session and seq: a sync client's push queue knows
   * blocks by their place in their chain.
   */
  async exportNamedBlocks(
    since: VersionVector,
  ): Promise<{ session: string; seq: number; bytes: Uint8Array }[]> {
    return (await this.#blocksSince(since)).map(({ session, seq, body, signature }) => ({
      session,
      seq,
      bytes: encodeBlockPayload(body, signature),
    }));
  }

  async #blocksSince(since: VersionVector): Promise<HeldBlock[]> {
    await this.#ensureHistory();
    await this.flush();
    return this.#blocks.since(since);
  }

  /**
   * Imports encoded blocks from a peer, in order. Each block is decoded (unless given as a
   * DecodedBlock), checked (trust, signature, chain, commits) and applied whole, or refused whole
   * with a typed error; a refused block does not stop the rest. `origin` is handed to block listeners with each applied block.
   * `trustAuthors` takes blocks by any session (their signatures are still verified): for blocks
   * from the database's own other tabs, which were trusted where they entered. `accepted` blocks
   * were accepted already by the store they come from (a sync server's PostgreSQL rows, placed by
   * another server): they are not refused for a clock ahead of this one, as blocks from this
   * repository's own storage are not; what was accepted once always applies.
   */
  async importBlocks(
    frames: Iterable<Uint8Array | DecodedBlock>,
    origin?: unknown,
    { trustAuthors = false, accepted = false } = {},
  ): Promise<ImportReport> {
    this.#checkOpen();
    await this.#ensureHistory();
    let applied = 0;
    let commits = 0;
    let duplicates = 0;
    const rejected: { index: number; session?: string; seq?: number; error: CairnError }[] = [];
    // The blocks of a list are decoded and authenticated up to AUTHENTICATED_AHEAD ahead of the
    // one applied, so that where the suite verifies signatures off this thread (Node) they are
    // verified in parallel; they still apply one by one, in order. Another iterable is taken a
    // frame at a time, as it asks to be (a generator may make each frame when it is taken).
    const ahead = Array.isArray(frames) && frames.length > 1 ? AUTHENTICATED_AHEAD : 0;
    const iterator = frames[Symbol.iterator]();
    const queue: { frame: Uint8Array; checked: Promise<Authenticated> }[] = [];
    const take = (): boolean => {
      const next = iterator.next();
      if (next.done) return false;
      const given = next.value;
      queue.push({
        frame: given instanceof DecodedBlock ? given.bytes : given,
        checked: this.#authenticated(given, trustAuthors, ahead > 0),
      });
      return true;
    };
    for (let index = 0; queue.length > 0 || take(); index++) {
      while (queue.length <= ahead && take());
      const { frame, checked } = queue.shift()!;
      let sealed: SealedBlock | undefined;
      try {
        const { sealed: decoded, error } = await checked;
        sealed = decoded;
        if (error !== undefined || decoded === undefined) throw error;
        // A close that began during those awaits has flushed what it stores: refused, not lost.
        this.#checkOpen();
        const place = this.#chains.place(decoded);
        if (place === "duplicate") duplicates++;
        else {
          this.#applyBlock(decoded, this.#verifier.check(decoded, false, !accepted), place);
          this.#store(decoded, origin, frame);
          applied++;
          commits += decoded.block.commits.length;
        }
      } catch (err) {
        if (!isCairnError(err)) throw err;
        rejected.push({
          index,
          session: sealed?.block.session,
          seq: sealed?.block.seq,
          error: err,
        });
      }
    }
    return { applied, commits, duplicates, rejected };
  }

  /** A frame decoded and its author checked; never rejects (the error is in the result). */
  async #authenticated(
    frame: Uint8Array | DecodedBlock,
    trustAuthors: boolean,
    oneOfMany: boolean,
  ): Promise<Authenticated> {
    let sealed: SealedBlock | undefined;
    try {
      sealed = frame instanceof DecodedBlock
        ? frame.sealed
        : await decodeBlock(frame, this.#ctx.suite);
      await this.#verifier.authenticate(sealed, trustAuthors, oneOfMany);
      return { sealed };
    } catch (error) {
      return { sealed, error };
    }
  }

  /** The leaf `id` of the item `key`, if it is one: found without decoding history. */
  #heldLeaf(key: string, id: string): Commit | undefined {
    const state = this.#state(key);
    if (state === undefined) return undefined;
    const sole = soleLeaf(state);
    if (sole !== undefined) return commitId(sole) === id ? sole : undefined;
    return state.leaves.find((leaf) => commitId(leaf) === id);
  }

  /**
   * Applies a checked block's commits, except those that `waits` holds back; then the commits
   * that waited for any of them. `place` says where the block stands in its chain.
   */
  #applyBlock(sealed: SealedBlock, { waits, texts }: CheckedBlock, place: ChainPlace): void {
    let newest = 0;
    // The documents the check copied may stand in for their originals only while nothing else
    // edits them: no commit of the block waits, and none held back can be released in between.
    const inOrder = waits === undefined && this.#heldBack.size === 0;
    const checked = inOrder ? texts : undefined;
    const commits = sealed.block.commits;
    for (let i = 0; i < commits.length; i++) {
      const commit = commits[i];
      const parent = waits?.get(commit);
      if (parent !== undefined) {
        this.#heldBack.hold(commit, parent);
        continue;
      }
      // With nothing held back, nothing can apply between a block's commits: a chain of them on
      // one item applies as one change (#applyRemoteRun).
      let end = i + 1;
      while (inOrder && end < commits.length && followsAlone(commits[end], commits[end - 1])) end++;
      if (end - i > 1) {
        const run = commits.slice(i, end);
        for (const each of run) this.#graph.add(each);
        this.#applyRemoteRun(run, true, checked);
        for (const each of run) if (each.hlc > newest) newest = each.hlc;
        i = end - 1;
        continue;
      }
      this.#applyCommit(commit, checked);
      if (commit.hlc > newest) newest = commit.hlc;
    }
    this.#ctx.clock.observe(newest);
    this.#recordBlock(sealed, place);
    if (place === "gap" && this.isWhole()) this.#ctx.onRepaired?.();
  }

  /**
   * Applies a commit whose parents are all applied, then any commits held back for it. `texts`:
   * its block's text edits as checked (TextFields.apply).
   */
  #applyCommit(commit: Commit, texts?: BlockTextCheck): void {
    this.#graph.add(commit);
    this.#applyRemoteCommit(commit, true, texts);
    if (this.#heldBack.size === 0) return;
    const applied = [commitId(commit)];
    while (applied.length > 0) {
      for (const waiter of this.#heldBack.release(applied.pop()!)) {
        const missing = waiter.parents.find((parent) => !this.#graph.has(parent));
        if (missing !== undefined) {
          this.#heldBack.hold(waiter, missing);
          continue;
        }
        this.#graph.add(waiter);
        this.#applyRemoteCommit(waiter, this.#textsApply(waiter));
        this.#ctx.clock.observe(waiter.hlc);
        applied.push(commitId(waiter));
      }
    }
  }

  /**
   * Whether a commit that waited for lost history can apply its text edits, checked now that
   * their characters may exist; if they cannot, the commit applies without them.
   */
  #textsApply(commit: Commit): boolean {
    try {
      this.#texts.check(commit, new Map(), () => this.#verifier.viewOf(commit));
      return true;
    } catch (err) {
      if (isCairnError(err)) return false;
      throw err;
    }
  }

  /** Whether no block is known to be missing and no commit waits for one. */
  isWhole(): boolean {
    return this.#chains.whole && this.#heldBack.size === 0;
  }

  #applyRemoteCommit(commit: Commit, applyText = true, checked?: BlockTextCheck): void {
    this.#applyRemoteRun([commit], applyText, checked);
  }

  /**
   * Applies `run`, commits of one item that are in the graph already, each after the first
   * having the one before as its only parent: one commit, or a chain of them from one block. The
   * item's state is worked out once, for the last: a state is a function of the item's leaves
   * (docs/merge-rules.md), so this is the state that working it out for each and keeping the last
   * would give, without the merges in between (X04a: a block of 12,000 edits to an item with a
   * concurrent leaf merged it 12,000 times). One change event carries every commit's text
   * changes, in order.
   */
  #applyRemoteRun(run: readonly Commit[], applyText: boolean, checked?: BlockTextCheck): void {
    const first = run[0];
    const commit = run[run.length - 1];
    const state = this.#state(commit.key);
    const key = state === undefined ? commit.key : heldKey(state);
    const text = applyText ? this.#texts.applyRun(run, checked) : undefined;
    const leaves = state ? leavesNotUnder(state.leaves, first) : [];
    leaves.push(commit);
    this.#unresolved.delete(key);
    let next: ItemState;
    if (leaves.length > 1) {
      next =
        (run.length === 1 ? this.#mergedWithNewLeaf(key, state!, commit, leaves) : undefined) ??
          this.#merged(key, leaves, this.#keepsAncestor(first, state!, leaves) ? state : undefined);
    } else if (this.#extendsHeldValue(first, state) && run.every((each) => each.kind === "delta")) {
      // Fast path: deltas on the value we already hold.
      const value = copyRecord(state!.wire!);
      for (const each of run) applyDelta(value, each);
      const wire = this.#texts.overlay(key, commit.schema, value);
      next = new SoleLeafState(commit, wire, commit.schema, state!.deltas + run.length);
    } else {
      const deltas = deltasEnding(run);
      const wire = this.#texts.overlay(key, commit.schema, this.#graph.valueAt(commit));
      next = new SoleLeafState(commit, wire, commit.schema, deltas);
    }
    this.#awaitSchemaForText(key, next);
    this.#setState(key, state, next);
    this.#listeners.emit(changeEvent(key, "remote", next.wire === undefined, text));
  }

  /**
   * Whether the leaves `state` was merged from, with `commit` applied (`leaves`), have the same
   * lowest common ancestor as before: when `commit` is on one of them (it replaces that leaf, and
   * their common ancestors stay as they were), or when its one parent is that ancestor (a new
   * concurrent leaf started from it: any lower common ancestor would have to be below the parent
   * too, as X05's many users each typing at the start are). For a run of commits (see
   * #applyRemoteRun), `commit` is its first, and the run's last stands in `leaves` for it: the
   * commits between are new, ancestors of no other leaf, so the common ancestors are the same.
   */
  #keepsAncestor(commit: Commit, state: ItemState, leaves: readonly Commit[]): boolean {
    if (commit.parents.length !== 1) return false;
    if (leaves.length === state.leaves.length) return true;
    const ancestor = this.#mergeBases.get(state);
    return ancestor != null && commitId(ancestor) === commit.parents[0];
  }

  /** Whether `commit` is a delta on the single leaf of `state`, whose value is held. */
  #extendsHeldValue(commit: Commit, state: ItemState | undefined): boolean {
    if (commit.kind !== "delta" || state?.wire === undefined) return false;
    const leaf = soleLeaf(state);
    return leaf !== undefined && commit.parents[0] === commitId(leaf);
  }

  /**
   * The merged state of `leaves`. `sameAncestorAs`: a state whose leaves have the same common
   * ancestors (one of them replaced by a child of it): the lowest one it was merged from is taken
   * again instead of walking the history since then, so applying N concurrent commits one by one
   * costs N merges, not N walks through N commits.
   */
  #merged(key: string, leaves: readonly Commit[], sameAncestorAs?: ItemState): ItemState {
    const known = sameAncestorAs && this.#mergeBases.get(sameAncestorAs);
    const merged = mergeLeaves(
      this.#graph,
      leaves,
      this.#ctx.registry,
      this.#isDocument(key),
      known,
    );
    if (!merged.complete) this.#unresolved.add(key);
    return this.#mergedState(key, leaves, merged);
  }

  /**
   * The merged state of `leaves` when `commit`, the one leaf not in `state`, starts from the
   * ancestor `state` was merged from: added to that merge, which passes over the fields, not
   * over every leaf again. Undefined when it cannot be (see LeafMerge.accepts).
   */
  #mergedWithNewLeaf(
    key: string,
    state: ItemState,
    commit: Commit,
    leaves: readonly Commit[],
  ): ItemState | undefined {
    const merge = this.#leafMerges.get(state);
    if (merge === undefined || leaves.length !== state.leaves.length + 1) return undefined;
    if (!merge.accepts(commit, this.#isDocument(key))) return undefined;
    this.#leafMerges.delete(state);
    merge.add(commit, this.#graph.readValueAt(commit));
    const wire = merge.result();
    if (wire === undefined) return undefined; // a value its schema refuses: merged in full then
    const { ancestor, target } = merge;
    return this.#mergedState(key, leaves, { wire, schema: target.id, ancestor, merge });
  }

  #isDocument(key: string): (field: string) => boolean {
    return (field) => this.#texts.has(key, field);
  }

  /** The state of merged leaves, with the ancestor and the merge it was made from kept for it. */
  #mergedState(
    key: string,
    leaves: readonly Commit[],
    merged: Pick<MergedValue, "wire" | "schema" | "ancestor" | "merge">,
  ): ItemState {
    const { schema, ancestor, merge } = merged;
    const wire = this.#texts.overlay(key, schema, merged.wire);
    const next = { leaves, wire, schema, deltas: Infinity, attached: undefined };
    if (ancestor !== undefined) this.#mergeBases.set(next, ancestor);
    if (merge !== undefined) this.#leafMerges.set(next, merge);
    this.#awaitSchemaForText(key, next);
    return next;
  }

  /**
   * Under a schema not registered here, an item's text fields still hold their edits (which
   * fields are text, only the schema says): the item waits with the unresolved ones, and is made
   * again, with its texts, when the schema is registered.
   */
  #awaitSchemaForText(key: string, next: ItemState): void {
    const registry = this.#ctx.registry;
    if (registry.get(next.schema)) return;
    if (registry.size > 0) {
      if (this.#mayReadAsText(key, next.wire)) this.#unresolved.add(key);
    } else this.#allMayWait ||= this.#mayReadAsText(key, next.wire);
  }

  /**
   * Whether `wire`, the value of `key`, may read otherwise once its schema says which fields are
   * text: a text field reads as its document's text when it holds a list (its edits, or a list
   * it cannot hold as text) or when the item has a document for it, whatever value a peer put
   * there. (Only a list of lists or an empty list counted once: a text field given a set's
   * values, or a record after its edits, read as text when the schema was registered first and
   * failed to read when it came later.)
   */
  #mayReadAsText(key: string, wire: FieldRecord | undefined): boolean {
    for (const field in wire) {
      if (Array.isArray(wire[field]) || this.#texts.has(key, field)) return true;
    }
    return false;
  }

  /**
   * Merges again the items that waited for a schema; call after registering schemas. An item
   * whose merge still fails (a leaf under a schema still unknown, an upgrade that throws on its
   * values) waits on, in the state that merge gives now, as it would had the new schemas been
   * registered before its commits came: its newest leaf's value, read now under a known schema
   * (its text fields showing their documents, not their edits). Keeping the state made without
   * the schema left such a field holding its edits, and reads of the item failed. One that
   * waits on with the value it had is not announced as changed, nor is a sole version whose
   * value the schema reads as it was (no text field in it to read from a document): a database
   * opened without its schemas looks at every item with a list when the first one comes, and
   * most are a set's values, which merging again would only copy.
   */
  remergeUnresolved(): void {
    const registry = this.#ctx.registry;
    if (registry.size === 0) return;
    const every = this.#allMayWait;
    this.#allMayWait = false;
    for (const key of every ? [...this.#items.keys()] : [...this.#unresolved]) {
      const state = this.#state(key)!;
      if (!state.leaves.some((leaf) => registry.get(leaf.schema))) {
        // Merged again under schemas still unknown, it would come out the same: it waits on,
        // now on its own (a schema is registered: items are no longer all looked at).
        if (every && (state.leaves.length > 1 || this.#mayReadAsText(key, state.wire))) {
          this.#unresolved.add(key);
        }
        continue;
      }
      this.#unresolved.delete(key);
      // A sole version under a schema now known reads otherwise only where its text fields do.
      if (soleLeaf(state) !== undefined && !this.#texts.overlays(key, state.schema, state.wire)) {
        continue;
      }
      const next = this.#merged(key, state.leaves);
      if (this.#unresolved.has(key) && sameValue(state, next)) continue;
      this.#setState(key, state, next);
      this.#listeners.emit({ key, source: "remote", deleted: next.wire === undefined });
    }
  }

  #setState(key: string, previous: ItemState | undefined, next: ItemState): void {
    this.#liveCount += Number(isLive(next)) - Number(previous !== undefined && isLive(previous));
    if (previous?.attached !== undefined) next.attached = previous.attached;
    this.#items.set(key, next);
    this.#lastKey = key;
    this.#lastState = next;
  }

  /**
   * The state of `key`. The last one found is remembered: a write looks its item up several times
   * (the handle, the typed reader, the repository, each live query), and in a large map each
   * lookup of a key costs a cache miss.
   */
  #state(key: string): ItemState | undefined {
    if (key === this.#lastKey) return this.#lastState;
    const state = this.#items.get(key);
    this.#lastKey = key;
    this.#lastState = state;
    return state;
  }

  #recordBlock(sealed: SealedBlock, place: ChainPlace): void {
    const { session, commits } = sealed.block;
    // Our own session's blocks can come back (a session restored on another device, or our
    // log read on open): the next local commit must follow them, or it would reuse their ids.
    if (session === this.#ctx.session) {
      this.#commitSeq = Math.max(this.#commitSeq, commits[commits.length - 1].seq);
    }
    const held = this.#blocks.add(sealed, place === "gap");
    this.#graph.keepEncoded(sealed.block, held);
    this.#chains.record(sealed);
  }
}

/**
 * The key string the repository already holds for a state's item (its leaves carry it). Passed
 * on instead of the caller's equal string, it is the one every map downstream has hashed before,
 * and a write retains no second copy of it.
 */
function heldKey(state: ItemState): string {
  return (soleLeaf(state) ?? state.leaves[0]).key;
}

/** The ids of a state's leaves: the parents of the next commit on its key. */
function leafIds(state: ItemState): readonly string[] {
  const leaf = soleLeaf(state);
  return leaf !== undefined ? [commitId(leaf)] : state.leaves.map(commitId);
}

/** A change event; `text` only when text fields changed (most changes carry none). */
function changeEvent(
  key: string,
  source: "local" | "remote",
  deleted: boolean,
  text: TextFieldChange[] | undefined,
): ItemChange {
  return text === undefined || text.length === 0
    ? { key, source, deleted }
    : { key, source, deleted, text };
}

/** Whether two states of an item read alike: the same schema and wire value (texts read). */
function sameValue(a: ItemState, b: ItemState): boolean {
  return a.schema === b.schema && JSON.stringify(a.wire) === JSON.stringify(b.wire);
}

/** Whether `next` has `commit`, of the same item, as its only parent. */
function followsAlone(next: Commit, commit: Commit): boolean {
  if (next.key !== commit.key) return false;
  const own = ownParentSeq(next);
  if (own !== 0) return own === commit.seq && next.session === commit.session;
  return next.parents.length === 1 && next.parents[0] === commitId(commit);
}

/**
 * How many deltas end a run on an item after its last full value (0 when it ends with a value or
 * a delete), as applying its commits one by one counts them; Infinity when no full value comes
 * before them in the run. A local write goes on from the count (writing a full value when it is
 * unknown or large), so an item created and edited in one imported block is next written as a
 * delta, not whole.
 */
function deltasEnding(run: readonly Commit[]): number {
  let deltas = 0;
  for (let i = run.length - 1; i >= 0; i--) {
    if (run[i].kind !== "delta") return deltas === 0 || run[i].kind === "value" ? deltas : Infinity;
    deltas++;
  }
  return Infinity;
}

/**
 * The leaves that are not parents of `commit`. Compared by seq, then session: an item with L
 * concurrent leaves checks them all at each commit (X05: 1,540), so this is plain loops over
 * numbers first; making each leaf's id string cost more than the rest of it, and a filter with a
 * closure per leaf was a fifth of X05's time.
 */
function leavesNotUnder(leaves: readonly Commit[], commit: Commit): Commit[] {
  const parents = commit.parents.map(parseCommitId);
  const kept: Commit[] = [];
  for (let i = 0; i < leaves.length; i++) {
    const leaf = leaves[i];
    let under = false;
    for (let p = 0; p < parents.length && !under; p++) {
      const parent = parents[p];
      under = parent !== undefined && parent.seq === leaf.seq && parent.session === leaf.session;
    }
    if (!under) kept.push(leaf);
  }
  return kept;
}

function encodeHeld(held: HeldBlock): Uint8Array {
  return encodeBlockPayload(held.body, held.signature);
}
