/**
 * What the sync rows need from the runtime they measure: processes. Deno and Node start the
 * server and client processes (bench/sync/processes.ts); the bench page cannot, so the runner
 * starts them for it (bench/sync/host_bridge.ts). Types only: runs unchanged in every runtime.
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
  /**
   * A client process (bench/sync/peer_process.ts) of the runtime being measured; for the bench
   * page, whose clients cannot have processes of their own, a Deno one.
   */
  startPeer(): HelperProcess;
  /**
   * Where the runtime measured is the page (whose other clients are Deno processes): clients in
   * the page itself, driven as a client process is (bench/sync/own_peer.ts).
   */
  ownPeer?(): HelperProcess;
  /**
   * Where S03's new client keeps its database, a fresh place each time (the bench page: an
   * OPFS directory, as an app would); absent: in memory.
   */
  catchUpLocation?(): string;
  /** Writes frames to a new local file (block_file.ts). */
  saveBlocks(frames: readonly Uint8Array[]): Promise<BlockFile>;
}

export interface BlockFile {
  /** Reads the frames back from the file. */
  load(): Promise<Uint8Array[]>;
  remove(): Promise<void>;
}
