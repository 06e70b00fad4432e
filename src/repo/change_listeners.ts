/** Change listeners of a repository: all changes, or one key's. Called synchronously. */
import type { TextFieldChange } from "./text_fields.ts";

export interface ItemChange {
  readonly key: string;
  /** "local" for this database's writes, "remote" for imported blocks. */
  readonly source: "local" | "remote";
  /** True when the change left the item deleted. */
  readonly deleted: boolean;
  /**
   * What changed in text fields, when any did: per field, the changes in the order they
   * happened (each at `index`, in UTF-16 code units of the text as it was just before it), so an
   * editor can apply them without comparing texts.
   */
  readonly text?: readonly TextFieldChange[];
}

type Listener = (change: ItemChange) => void;

/**
 * Listener lists are replaced, never changed, on each add or removal: emitting walks a plain
 * array (a Set's iterator is an allocation per change), and a listener added or removed while a
 * change is being emitted takes effect from the next change.
 */
export class ChangeListeners {
  #all: readonly Listener[] = [];
  readonly #byKey = new Map<string, readonly Listener[]>();

  add(listener: Listener): () => void {
    this.#all = [...this.#all, listener];
    return once(() => this.#all = without(this.#all, listener));
  }

  /** Like `add`, but heard before every listener there is or will be (see Repository). */
  addFirst(listener: Listener): () => void {
    this.#all = [listener, ...this.#all];
    return once(() => this.#all = without(this.#all, listener));
  }

  addForKey(key: string, listener: Listener): () => void {
    this.#byKey.set(key, [...this.#byKey.get(key) ?? [], listener]);
    return once(() => {
      const left = without(this.#byKey.get(key)!, listener);
      if (left.length === 0) this.#byKey.delete(key);
      else this.#byKey.set(key, left);
    });
  }

  /** Whether anyone listens: lets a hot path skip building the change it would emit. */
  get active(): boolean {
    return this.#all.length > 0 || this.#byKey.size > 0;
  }

  emit(change: ItemChange): void {
    // A throwing listener must not stop the others, nor undo the write that is already applied.
    const all = this.#all;
    for (let i = 0; i < all.length; i++) callSafely(all[i], change);
    if (this.#byKey.size === 0) return;
    const forKey = this.#byKey.get(change.key);
    if (forKey) { for (let i = 0; i < forKey.length; i++) callSafely(forKey[i], change); }
  }
}

/** `listeners` without the first occurrence of `listener`, as a new array. */
function without(listeners: readonly Listener[], listener: Listener): readonly Listener[] {
  const at = listeners.indexOf(listener);
  return [...listeners.slice(0, at), ...listeners.slice(at + 1)];
}

/** An unsubscribe function that acts on its first call only. */
function once(end: () => void): () => void {
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    end();
  };
}

/** Calls `listener`; what it throws is reported as uncaught, after the caller's work is done. */
export function callSafely<T>(listener: (event: T) => void, event: T): void {
  try {
    listener(event);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}
