/**
 * What the sync rows need from the runtime they measure: processes. Deno and Node start the
 * server and client processes (bench/sync/processes.ts); the browser page has no such host yet,
 * and the sync rows say so. Types only: runs unchanged in every runtime.
 */
import type { HelperProcess } from "./line_channel.ts";

/**
 * "cairn": Cairn's sync server on files; "postgres": one on the PostgreSQL database given;
 * "relay": a raw WebSocket relay, the floor S01 is compared with.
 */
export type ServerKind = "cairn" | "postgres" | "relay";

export interface SyncHost {
  /** A server in its own Deno process, listening on loopback (`database`: for "postgres"). */
  startServer(
    kind: ServerKind,
    database?: string,
  ): Promise<{ process: HelperProcess; url: string }>;
  /** A throwaway PostgreSQL cluster (fsync on), for the rows of servers sharing one. */
  startPostgres(): Promise<{ url: string; stop(): Promise<void> }>;
  /** A client process of the runtime being measured (bench/sync/peer_process.ts). */
  startPeer(): HelperProcess;
  /** Writes frames to a new local file (block_file.ts). */
  saveBlocks(frames: readonly Uint8Array[]): Promise<BlockFile>;
}

export interface BlockFile {
  /** Reads the frames back from the file. */
  load(): Promise<Uint8Array[]>;
  remove(): Promise<void>;
}
