/** What `sync()` returns, in one tab or process and in the tabs of a shared database alike. */
import { CairnError } from "../core/errors.ts";
import type { SyncStatus } from "./link_events.ts";

/** A database's connection to a sync server, made by `sync()`. */
export interface SyncLink {
  /**
   * "connecting" (opening a socket, handshake), "catching-up" (some repository is still being
   * sent what it lacks), "synced", "offline" (waiting to reconnect) or "closed".
   */
  readonly status: SyncStatus;
  /** Blocks written here (or imported from elsewhere) that the server has not acknowledged. */
  readonly unacknowledged: number;
  /** The last error reported (also given to "error" listeners). */
  readonly lastError: CairnError | undefined;
  /** Listens to status changes or errors; returns the unsubscribe function. */
  on(event: "status", listener: (status: SyncStatus) => void): () => void;
  on(event: "error", listener: (error: CairnError) => void): () => void;
  /**
   * Resolves when the server holds every block sealed before the call (each acknowledged, so
   * durable there) and every synced repository has caught up. Rejects with E_CLOSED if the link
   * is closed first. A repository the server refuses (reading, or writing) does not hold it up:
   * the refusal is reported as an error.
   */
  synced(): Promise<void>;
  /** Closes the socket and stops syncing; unacknowledged blocks stay in the repositories. */
  close(): Promise<void>;
}

export function closedError(): CairnError {
  return new CairnError("E_CLOSED", "the sync link is closed");
}
