/**
 * One index's or live query's records kept with item states (core/item_state.ts `Attachments`),
 * so that a change finds the changed item's record through the state it comes with instead of
 * a lookup by key in a map of every item: that lookup misses the cache once or twice in a large
 * map, which made it the largest cost of applying a change to an index or a query.
 *
 * A slot's pair is [owner, record]. Slot numbers are reused once their owner is closed; the
 * owner check makes a record left by an earlier owner read as absent. An absent record means
 * "not known here": the caller looks the key up, then attaches what it found.
 */
import type { Attachments, ItemValue } from "../core/item_state.ts";

/** What carries attachments: an item's state. */
export type AttachmentHolder = Pick<ItemValue, "attached">;

/**
 * What `Attachments` are, known here only: per slot, its owner and then its record. An owner's
 * record is written only by its own AttachmentSlot<T>, so a record found beside its owner is a T.
 */
type SlotPairs = unknown[];

function pairsOf(attached: Attachments): SlotPairs {
  return attached as unknown as SlotPairs;
}

export class AttachmentSlot<T> {
  readonly #owner: object;
  readonly #at: number;

  constructor(owner: object, slot: number) {
    this.#owner = owner;
    this.#at = 2 * slot;
  }

  get(holder: AttachmentHolder | undefined): T | undefined {
    const attached = holder?.attached;
    if (attached === undefined) return undefined;
    const pairs = pairsOf(attached);
    return pairs[this.#at] === this.#owner ? pairs[this.#at + 1] as T : undefined;
  }

  set(holder: AttachmentHolder | undefined, record: T | undefined): void {
    if (holder === undefined) return;
    const pairs = pairsOf(holder.attached ??= [] as unknown as Attachments);
    pairs[this.#at] = this.#owner;
    pairs[this.#at + 1] = record;
  }
}

/** Slot numbers for the owners open at once: the lowest free one first. */
export class AttachmentSlots {
  readonly #free: number[] = [];
  #next = 0;

  take(): number {
    if (this.#free.length === 0) return this.#next++;
    this.#free.sort((a, b) => b - a);
    return this.#free.pop()!;
  }

  release(slot: number): void {
    this.#free.push(slot);
  }
}
