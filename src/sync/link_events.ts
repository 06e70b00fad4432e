/** What a sync link tells the app: its status as it changes, and every error, as events. */
import { CairnError } from "../core/errors.ts";

export type SyncStatus = "connecting" | "catching-up" | "synced" | "offline" | "closed";

export class LinkEvents {
  #status: SyncStatus = "connecting";
  #lastError: CairnError | undefined;
  readonly #statusListeners = new Set<(status: SyncStatus) => void>();
  readonly #errorListeners = new Set<(error: CairnError) => void>();

  get status(): SyncStatus {
    return this.#status;
  }

  get lastError(): CairnError | undefined {
    return this.#lastError;
  }

  /** Each call is a subscription of its own; returns the function that ends it. */
  on(event: unknown, listener: unknown): () => void {
    if (typeof listener !== "function") {
      throw new CairnError("E_BAD_ARGUMENT", "sync link: on() takes a function");
    }
    const listeners: Set<(value: never) => void> | undefined = event === "status"
      ? this.#statusListeners
      : event === "error"
      ? this.#errorListeners
      : undefined;
    if (!listeners) {
      throw new CairnError("E_BAD_ARGUMENT", `sync link: no event ${String(event)}`);
    }
    const own = (value: never) => listener(value);
    listeners.add(own);
    return () => listeners.delete(own);
  }

  setStatus(status: SyncStatus): void {
    if (this.#status === status) return;
    this.#status = status;
    for (const listener of [...this.#statusListeners]) callSafely(listener, status);
  }

  report(error: CairnError): void {
    this.#lastError = error;
    for (const listener of [...this.#errorListeners]) callSafely(listener, error);
  }
}

/** What every sync link shows the app (client.ts, tab_sync.ts): status, last error, listeners. */
export abstract class EventedLink {
  protected readonly events = new LinkEvents();

  get status(): SyncStatus {
    return this.events.status;
  }

  get lastError(): CairnError | undefined {
    return this.events.lastError;
  }

  on(event: "status", listener: (status: SyncStatus) => void): () => void;
  on(event: "error", listener: (error: CairnError) => void): () => void;
  on(event: "status" | "error", listener: (value: never) => void): () => void {
    return this.events.on(event, listener);
  }
}

/** A listener that throws stops neither the others nor the link; its error is rethrown apart. */
function callSafely<T>(listener: (value: T) => void, value: T): void {
  try {
    listener(value);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}
