/** Change listeners of a repository: all changes, or one key's. Called synchronously. */

export interface ItemChange {
  readonly key: string;
  /** "local" for this database's writes, "remote" for imported blocks. */
  readonly source: "local" | "remote";
  /** True when the change left the item deleted. */
  readonly deleted: boolean;
}

type Listener = (change: ItemChange) => void;

export class ChangeListeners {
  readonly #all = new Set<Listener>();
  readonly #byKey = new Map<string, Set<Listener>>();

  add(listener: Listener): () => void {
    this.#all.add(listener);
    return () => this.#all.delete(listener);
  }

  addForKey(key: string, listener: Listener): () => void {
    let set = this.#byKey.get(key);
    if (!set) this.#byKey.set(key, set = new Set());
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#byKey.delete(key);
    };
  }

  /** Whether anyone listens: lets a hot path skip building the change it would emit. */
  get active(): boolean {
    return this.#all.size > 0 || this.#byKey.size > 0;
  }

  emit(change: ItemChange): void {
    if (!this.active) return;
    // A throwing listener must not stop the others, nor undo the write that is already applied.
    for (const listener of this.#all) callSafely(listener, change);
    const forKey = this.#byKey.get(change.key);
    if (forKey) { for (const listener of forKey) callSafely(listener, change); }
  }
}

function callSafely(listener: Listener, change: ItemChange): void {
  try {
    listener(change);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}
