/**
 * What a sync rows' client process does, request by request (bench/sync/peer_process.ts serves
 * them over its stdin; bench/sync/own_peer.ts in the bench page's own process). Runs unchanged
 * on Deno, Node and in Chromium. The requests:
 *
 * - `open {url, transport}`: "cairn" — an in-memory database (signed, the default profile) with
 *   the bench repository, linked by `sync` and synced (replies its session's public key); "raw"
 *   — a bare WebSocket to the relay.
 * - `write {i, bytes}`: Cairn creates item i (sealed into its own block this tick and pushed);
 *   raw sends one binary message of `bytes` bytes. Replies at once, without waiting for an ack.
 * - `bulk {from, n}`: n items in one tick (one write, sealed in capped blocks), then `synced`.
 * - `separate {from, n}`: n items, each sealed into its own block, then `synced`; the loop
 *   lets the event loop run every `YIELD_EVERY` writes, as an app writing over time would, so
 *   the link pushes as it goes (without it nothing is sent until the loop ends).
 * - `sessions {url, from, n, sessions}`: n items written by `sessions` databases of their own
 *   (each a new session, its share in one tick), whose blocks one more database imports and
 *   pushes: the server holds blocks of `sessions` authors. (Linking each session itself would
 *   have it catch up on everything written before it: quadratic in the sessions.)
 * - `synced`: waits until the server holds every block written here.
 * - `clients {url, count, writers, name}`, `fanOut {ms, intervalMs?}`, `drain {items}`: S02's
 *   many clients in this process (fan_out_clients.ts); with `intervalMs` the writers are paced.
 */
import { Cairn, type RepositoryHandle, sync, type SyncLink } from "../../src/mod.ts";
import { ItemSchema, REPO_PATH } from "../contenders/cairn.ts";
import { itemKey, itemValues } from "../lib/items.ts";
import { FanOutClients } from "./fan_out_clients.ts";
import type { Request } from "./line_channel.ts";
import { type ClientWebSocket, openClientWebSocket } from "../../src/runtime/websocket.ts";
import { DEFAULT_MAX_FRAME } from "../../src/sync/protocol.ts";

interface CairnPeer {
  db: Cairn;
  repo: RepositoryHandle;
  link: SyncLink;
}

async function openCairn(url: string): Promise<CairnPeer> {
  const db = await Cairn.open({ schemas: [ItemSchema] });
  const repo = await db.open(REPO_PATH);
  return { db, repo, link: await linked(db, url) };
}

async function closeCairn(peer: CairnPeer): Promise<void> {
  await peer.link.close();
  await peer.db.close();
}

/** The socket the sync client opens (runtime/websocket.ts): the floor travels as Cairn does. */
function openRaw(url: string): Promise<ClientWebSocket> {
  const socket = openClientWebSocket(url, DEFAULT_MAX_FRAME);
  socket.binaryType = "arraybuffer";
  return new Promise((resolve, reject) => {
    socket.onopen = () => resolve(socket);
    socket.onerror = () => reject(new Error(`cannot connect to ${url}`));
  });
}

function create(repo: RepositoryHandle, from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    repo.create(ItemSchema, itemValues(i), { key: itemKey(i) });
  }
}

/** Separate writes between two turns of the event loop. */
const YIELD_EVERY = 100;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

async function writeBySessions(url: string, from: number, n: number, sessions: number) {
  const relay = await Cairn.open({ schemas: [ItemSchema] });
  const relayRepo = await relay.open(REPO_PATH);
  for (let s = 0; s < sessions; s++) {
    const db = await Cairn.open({ schemas: [ItemSchema] });
    const repo = await db.open(REPO_PATH);
    const start = from + Math.floor((n * s) / sessions);
    create(repo, start, from + Math.floor((n * (s + 1)) / sessions) - start);
    await repo.flush();
    await relay.trust(db.session.publicKey);
    await relayRepo.importBlocks(await repo.exportBlocks());
    await db.close();
  }
  await closeCairn({ db: relay, repo: relayRepo, link: await linked(relay, url) });
}

/** A link of `db` to `url`, once the server holds every block `db` has. */
async function linked(db: Cairn, url: string): Promise<SyncLink> {
  const link = sync(db, url);
  await link.synced();
  return link;
}

/** One client process's state: its Cairn link or raw socket, or S02's clients. */
export class PeerRequests {
  #cairn: CairnPeer | undefined;
  #raw: ClientWebSocket | undefined;
  #fanOut: FanOutClients | undefined;

  #opened(): CairnPeer {
    if (!this.#cairn) throw new Error("open a Cairn link first");
    return this.#cairn;
  }

  #clients(): FanOutClients {
    if (!this.#fanOut) throw new Error("open the clients first");
    return this.#fanOut;
  }

  async handle(message: Request): Promise<unknown> {
    const { from = 0, n = 0 } = message as { from?: number; n?: number };
    switch (message.op) {
      case "open":
        if (message.transport === "raw") this.#raw = await openRaw(message.url as string);
        else {
          this.#cairn = await openCairn(message.url as string);
          return this.#cairn.db.session.publicKey;
        }
        return;
      case "write":
        if (this.#raw) this.#raw.send(new Uint8Array(message.bytes as number));
        else create(this.#opened().repo, message.i as number, 1);
        return;
      case "bulk":
        create(this.#opened().repo, from, n);
        return await this.#opened().link.synced();
      case "separate":
        for (let i = from; i < from + n; i++) {
          create(this.#opened().repo, i, 1);
          await this.#opened().repo.flush();
          if ((i - from) % YIELD_EVERY === YIELD_EVERY - 1) await nextTurn();
        }
        return await this.#opened().link.synced();
      case "sessions":
        return await writeBySessions(message.url as string, from, n, message.sessions as number);
      case "synced":
        return await this.#opened().link.synced();
      case "clients":
        this.#fanOut = new FanOutClients(
          message.writers as number,
          message.name as string,
          message.apart === true,
        );
        return await this.#fanOut.open(message.url as string, message.count as number);
      case "fanOut":
        return message.intervalMs === undefined
          ? await this.#clients().write(message.ms as number)
          : await this.#clients().writePaced(message.ms as number, message.intervalMs as number);
      case "drain":
        return await this.#clients().drain(message.items as number);
      default:
        throw new Error(`unknown request ${message.op}`);
    }
  }

  async close(): Promise<void> {
    this.#raw?.close();
    await this.#fanOut?.close();
    if (this.#cairn) await closeCairn(this.#cairn);
  }
}
