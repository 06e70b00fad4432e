/**
 * A sorted in-memory index on one field: (value, key) pairs ordered by value (wire order), then
 * key, kept in a chunked sorted list and updated on every change of an item. A set field's value
 * is indexed once per element, so `has` can use the index too. Items without the field are not
 * indexed (no indexable condition matches a missing field).
 *
 * What it returns are candidates: a superset of the matches of the term it was asked about; the
 * query applies its whole filter to each.
 *
 * Changes are noted as they come (two array pushes) and applied together before the index is
 * next read, or at the end of the tick: one by one when they are few, otherwise in one pass that
 * rebuilds only the chunks of the sorted entries where old entries leave or new ones land. In
 * the write flow, one change placed on its own cost 1.3–1.7 µs (cache misses, with the write
 * path's allocations in between); 10k changes of 100k entries in one pass cost 3–7 ms, most of it
 * looking the 10k keys up (a cache miss or two each). A key's entries are therefore kept with its
 * item's state too (attachments.ts): only an item's first change here looks its key up.
 */
import type { FieldRecord, WireValue } from "../core/commit.ts";
import type { AttachmentHolder, AttachmentSlot } from "./attachments.ts";
import type { IndexTerm } from "./filter.ts";
import { SortedList } from "./sorted_list.ts";
import { compareKeys, compareWire, wireRank } from "./wire_order.ts";

/**
 * One indexed (value, key) pair. A scalar field's entry is kept for the key's lifetime and its
 * value changed in place (found first by the old value, then re-placed), so an update allocates
 * nothing.
 */
interface IndexEntry {
  value: WireValue;
  readonly key: string;
  /**
   * What the last batch of changes did with this entry: `2 * batch` once the batch met a change
   * of its key, `2 * batch + 1` once it also took the entry out of its place.
   */
  mark: number;
}

function compareEntries(a: IndexEntry, b: IndexEntry): number {
  const x = a.value;
  const y = b.value;
  if (typeof x === "number" && typeof y === "number" && x !== y) return x < y ? -1 : 1;
  return compareWire(x, y) || compareKeys(a.key, b.key);
}

/** What is indexed for one key: one entry, or one per element of a set (possibly none). */
type KeyEntries = IndexEntry | IndexEntry[];

/** An item's state as the index reads it: its value, and the records kept with it. */
export type IndexedState = { readonly wire?: FieldRecord } & AttachmentHolder;

/**
 * A batch's changes, one per key: the key, its state, its new indexed value (undefined: none)
 * and its entries before the change; `moved` is the mark of entries the batch takes out of their
 * place.
 */
interface Changes {
  readonly keys: string[];
  readonly states: (IndexedState | undefined)[];
  readonly values: (WireValue | undefined)[];
  readonly olds: (KeyEntries | undefined)[];
  readonly moved: number;
}

/** An index range: ranks [from, to) in the sorted entries. */
type Span = readonly [number, number];

/**
 * A batch is applied in one pass once it holds at least this share of the entries: about one
 * change per four chunks of the sorted list, where a pass (which visits every chunk, and rebuilds
 * only those the batch touches) starts to cost less than placing the changes one by one. 100k
 * entries, isolated: 1k changes 0.63–0.78 → 0.34–0.49 ms, 3k changes 2.2–2.7 → 1.1–1.3 ms (at
 * the earlier 1/16); below ~150 changes one by one stays cheaper.
 */
export const ONE_PASS_SHARE = 1 / 512;

export class FieldIndex {
  readonly field: string;
  readonly #list = new SortedList<IndexEntry>(compareEntries);
  readonly #byKey = new Map<string, KeyEntries>();
  /** A key's entries kept with its state too, found without `#byKey` (see attachments.ts). */
  readonly #attached: AttachmentSlot<KeyEntries> | undefined;
  /** True once any item had an array value here: a key may then appear in several entries. */
  #multi = false;
  /**
   * Changes not applied yet, in the order they came: keys and their new states (undefined:
   * none). Two arrays, not a map: noting a change is two pushes.
   */
  #pendingKeys: string[] = [];
  #pendingStates: (IndexedState | undefined)[] = [];
  #batches = 0;

  /**
   * Indexes `field` of `items`. `attach`, given this index, makes the slot its entries are kept
   * in with item states; without it every change looks its key up.
   */
  constructor(
    field: string,
    items: ReadonlyMap<string, IndexedState>,
    attach?: (index: FieldIndex) => AttachmentSlot<KeyEntries>,
  ) {
    this.field = field;
    this.#attached = attach?.(this);
    const entries: IndexEntry[] = [];
    for (const [key, state] of items) {
      const value = state.wire?.[field];
      if (value === undefined) continue;
      const made = this.#entriesFor(key, value);
      this.#byKey.set(key, made);
      if (Array.isArray(made)) entries.push(...made);
      else entries.push(made);
    }
    this.#list = SortedList.from(entries, compareEntries);
  }

  get size(): number {
    this.#settle();
    return this.#list.size;
  }

  /**
   * Takes note of the key's new state (undefined, or without a value: deleted); applied before
   * the next read.
   */
  update(key: string, state: IndexedState | undefined): void {
    if (this.#pendingKeys.length === 0) queueMicrotask(() => this.#settle());
    this.#pendingKeys.push(key);
    this.#pendingStates.push(state);
  }

  #settle(): void {
    const keys = this.#pendingKeys;
    if (keys.length === 0) return;
    const states = this.#pendingStates;
    this.#pendingKeys = [];
    this.#pendingStates = [];
    const changes = this.#latest(keys, states) ?? this.#latestOfRepeated(keys, states);
    if (changes.keys.length < this.#list.size * ONE_PASS_SHARE) {
      for (let i = 0; i < changes.keys.length; i++) {
        this.#apply(changes.keys[i], changes.states[i], changes.values[i], changes.olds[i]);
      }
    } else this.#applyInOnePass(changes);
  }

  /** The key's entries as they are: kept with its state, else looked up (and then kept). */
  #entriesOf(key: string, state: IndexedState | undefined): KeyEntries | undefined {
    const attached = this.#attached?.get(state);
    if (attached !== undefined) return attached;
    const entries = this.#byKey.get(key);
    if (entries !== undefined) this.#attached?.set(state, entries);
    return entries;
  }

  /** Records the key's new entries (undefined: none) in the map and with its state. */
  #setEntries(key: string, state: IndexedState | undefined, entries: KeyEntries | undefined): void {
    if (entries === undefined) this.#byKey.delete(key);
    else this.#byKey.set(key, entries);
    this.#attached?.set(state, entries);
  }

  /**
   * The batch's changes that change what is indexed, with each key's entries as they are; or
   * undefined when a key changed more than once (then `#latestOfRepeated` sorts it out). Keys
   * are looked up in the order they came (walking the same lookups backwards costs ~2× more),
   * all of them first in a loop of their own: the cache misses of independent lookups then
   * overlap (settling 10k changes of 100k entries, isolated: 1.9–2.7 → 1.5–2.2 ms).
   */
  #latest(
    keys: readonly string[],
    states: readonly (IndexedState | undefined)[],
  ): Changes | undefined {
    const batch = ++this.#batches;
    const changes: Changes = {
      keys: [],
      states: [],
      values: [],
      olds: [],
      moved: 2 * batch + 1,
    };
    let seen: Set<string> | undefined; // keys without a scalar entry to mark
    const field = this.field;
    const olds = new Array<KeyEntries | undefined>(keys.length);
    for (let i = 0; i < keys.length; i++) olds[i] = this.#entriesOf(keys[i], states[i]);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const old = olds[i];
      if (old !== undefined && !Array.isArray(old)) {
        if (old.mark >= 2 * batch) return undefined;
        old.mark = 2 * batch;
      } else {
        seen ??= new Set();
        if (seen.has(key)) return undefined;
        seen.add(key);
      }
      const value = states[i]?.wire?.[field];
      if (unchanged(old, value)) continue;
      changes.keys.push(key);
      changes.states.push(states[i]);
      changes.values.push(value);
      changes.olds.push(old);
    }
    return changes;
  }

  /** `#latest` for a batch where some key changed more than once: its last change counts. */
  #latestOfRepeated(
    keys: readonly string[],
    states: readonly (IndexedState | undefined)[],
  ): Changes {
    const last = new Map<string, IndexedState | undefined>();
    for (let i = 0; i < keys.length; i++) last.set(keys[i], states[i]);
    return this.#latest([...last.keys()], [...last.values()])!;
  }

  /** Brings the key's entries (`old`) up to date with its new value (undefined: deleted). */
  #apply(
    key: string,
    state: IndexedState | undefined,
    value: WireValue | undefined,
    old: KeyEntries | undefined,
  ): void {
    // A new scalar: the same entry, moved only if its place changed.
    if (reusable(old, value) && this.#list.find(old as IndexEntry)) {
      (old as IndexEntry).value = value as WireValue;
      this.#list.resettle();
      return;
    }
    if (old !== undefined) {
      if (Array.isArray(old)) { for (const entry of old) this.#list.remove(entry); }
      else this.#list.remove(old);
    }
    if (value === undefined) {
      this.#setEntries(key, state, undefined);
      return;
    }
    const made = this.#entriesFor(key, value);
    this.#setEntries(key, state, made);
    if (Array.isArray(made)) { for (const entry of made) this.#list.insert(entry); }
    else this.#list.insert(made);
  }

  /**
   * Applies a batch in one pass: the entries of changed keys leave the list (marked `moved`),
   * their new entries are sorted, and both are merged with the entries that stayed, in the
   * chunks where the batch lands and where its old entries were. A scalar entry is reused with
   * its new value, as one placed on its own would be.
   */
  #applyInOnePass({ keys: changed, states, values, olds, moved }: Changes): void {
    const leaving: IndexEntry[] = [];
    for (const old of olds) {
      if (old === undefined) continue;
      if (Array.isArray(old)) { for (const entry of old) leaving.push(entry); }
      else leaving.push(old);
    }
    // Located while the entries still hold the values they are placed by.
    const dropsIn = this.#list.chunksOf(leaving);
    const added: IndexEntry[] = [];
    for (let i = 0; i < changed.length; i++) {
      const value = values[i];
      const old = olds[i];
      if (reusable(old, value)) {
        const entry = old as IndexEntry;
        entry.mark = moved;
        entry.value = value as WireValue;
        added.push(entry);
        continue;
      }
      if (old !== undefined) {
        if (Array.isArray(old)) { for (const entry of old) entry.mark = moved; }
        else old.mark = moved;
      }
      if (value === undefined) {
        this.#setEntries(changed[i], states[i], undefined);
        continue;
      }
      const made = this.#entriesFor(changed[i], value);
      this.#setEntries(changed[i], states[i], made);
      if (Array.isArray(made)) { for (const entry of made) added.push(entry); }
      else added.push(made);
    }
    added.sort(compareEntries);
    this.#list.replace((entry) => entry.mark === moved, added, dropsIn);
  }

  /** How many entries the term would yield (a key may count more than once in a set index). */
  estimate(term: IndexTerm): number {
    this.#settle();
    let total = 0;
    for (const [from, to] of this.#spans(term)) total += to - from;
    return total;
  }

  /** Keys of the candidate items for `term`, each once. */
  candidates(term: IndexTerm): string[] {
    this.#settle();
    const keys: string[] = [];
    for (const [from, to] of this.#spans(term)) {
      this.#list.forRange(from, to, (entry) => keys.push(entry.key));
    }
    return this.#multi ? [...new Set(keys)] : keys;
  }

  #spans(term: IndexTerm): Span[] {
    const list = this.#list;
    switch (term.kind) {
      case "eq":
      case "has":
        return term.values.map((value) => [
          list.rankWhere((e) => compareWire(e.value, value) < 0),
          list.rankWhere((e) => compareWire(e.value, value) <= 0),
        ]);
      case "prefix": {
        const prefix = term.prefix;
        return [[
          list.rankWhere((e) => compareWire(e.value, prefix) < 0),
          list.rankWhere((e) =>
            compareWire(e.value, prefix) < 0 ||
            (typeof e.value === "string" && e.value.startsWith(prefix))
          ),
        ]];
      }
      case "range": {
        const { lower, upper } = term;
        // Both bounds have the kind of value they compare with; stay within that kind.
        const rank = wireRank((lower ?? upper)!.value);
        const from = lower
          ? list.rankWhere((e) => {
            const c = compareWire(e.value, lower.value);
            return lower.inclusive ? c < 0 : c <= 0;
          })
          : list.rankWhere((e) => wireRank(e.value) < rank);
        const to = upper
          ? list.rankWhere((e) => {
            const c = compareWire(e.value, upper.value);
            return upper.inclusive ? c <= 0 : c < 0;
          })
          : list.rankWhere((e) => wireRank(e.value) <= rank);
        return to > from ? [[from, to]] : [];
      }
    }
  }

  #entriesFor(key: string, value: WireValue): KeyEntries {
    if (!Array.isArray(value)) return { value, key, mark: 0 };
    this.#multi = true;
    return value.map((element) => ({ value: element, key, mark: 0 }));
  }
}

/** Whether a key's new value leaves what is indexed for it as it is. */
function unchanged(
  old: KeyEntries | undefined,
  value: WireValue | undefined,
): boolean {
  if (old === undefined) return value === undefined;
  if (!Array.isArray(old)) return old.value === value;
  return Array.isArray(value) && sameElements(old, value);
}

/**
 * Whether the key's one entry, a scalar's, can take its new value, a scalar too, in place of a new
 * entry. (Not a type guard on `old`: the answer depends on `value` as well.)
 */
function reusable(
  old: KeyEntries | undefined,
  value: WireValue | undefined,
): boolean {
  return old !== undefined && !Array.isArray(old) && value !== undefined && !Array.isArray(value);
}

/** Whether a set's entries index exactly these elements (a set's wire value is sorted). */
function sameElements(entries: readonly IndexEntry[], elements: readonly WireValue[]): boolean {
  if (entries.length !== elements.length) return false;
  for (let i = 0; i < entries.length; i++) if (entries[i].value !== elements[i]) return false;
  return true;
}
