/**
 * The client the sync rows time, in the bench's own process (the runtime being measured): a
 * Cairn database (signed, default profile; in memory, or at `path`) with the bench repository,
 * linked to a
 * server through the socket the client opens anyway, its payload bytes counted (byte_count.ts,
 * through the client's socket seam, `syncWith`).
 */
import { Cairn, type RepositoryHandle, type SyncLink } from "../../src/mod.ts";
import { syncWith } from "../../src/sync/client.ts";
import { openWebSocket } from "../../src/sync/socket.ts";
import { ItemSchema, REPO_PATH } from "../contenders/cairn.ts";
import { type CountingSockets, countingSockets } from "./byte_count.ts";

export interface Observer {
  db: Cairn;
  repo: RepositoryHandle;
  link: SyncLink;
  sockets: CountingSockets;
  /** Resolves once the repository holds at least `count` items. */
  holds(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function openObserver(url: string, path?: string): Promise<Observer> {
  const { open, sockets } = countingSockets(openWebSocket);
  const db = await Cairn.open({ schemas: [ItemSchema], path });
  const repo = await db.open(REPO_PATH);
  // Reconnect at once when a row lets a dropped link back online.
  const link = syncWith(db, url, { backoff: { initialMs: 1, maxMs: 1 } }, { socket: open });
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
    },
  };
}
