/**
 * The client the sync rows time, in the bench's own process (the runtime being measured): an
 * in-memory Cairn database (signed, default profile) with the bench repository, linked to a
 * server through a WebSocket that counts its payload bytes (byte_count.ts). Only one observer
 * is open at a time: it installs its counting WebSocket as `globalThis.WebSocket` until closed.
 */
import { Cairn, type RepositoryHandle, sync, type SyncLink } from "../../src/mod.ts";
import { ItemSchema, REPO_PATH } from "../contenders/cairn.ts";
import { type CountingSockets, countingWebSocket, type WebSocketClass } from "./byte_count.ts";

export interface Observer {
  db: Cairn;
  repo: RepositoryHandle;
  link: SyncLink;
  sockets: CountingSockets;
  /** Resolves once the repository holds at least `count` items. */
  holds(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function openObserver(url: string): Promise<Observer> {
  const global = globalThis as { WebSocket: WebSocketClass };
  const original = global.WebSocket;
  const { WebSocket, sockets } = countingWebSocket(original);
  global.WebSocket = WebSocket;
  const db = await Cairn.open({ schemas: [ItemSchema] });
  const repo = await db.open(REPO_PATH);
  // Reconnect at once when a row lets a dropped link back online.
  const link = sync(db, url, { backoff: { initialMs: 1, maxMs: 1 } });
  return {
    db,
    repo,
    link,
    sockets,
    holds: (count) =>
      new Promise((resolve) => {
        if (repo.count() >= count) return resolve();
        const off = repo.on("change", () => {
          if (repo.count() < count) return;
          off();
          resolve();
        });
      }),
    async close() {
      await link.close();
      await db.close();
      global.WebSocket = original;
    },
  };
}
