/**
 * `createSyncServer`: a store (the files store in `dir`, or the one given as `store`), the core
 * and this runtime's WebSocket transport together.
 */
import { CairnError, isCairnError } from "../../core/errors.ts";
import type { AccessRules, Authorize } from "./access.ts";
import { listenDeno } from "./deno_adapter.ts";
import { openFilesStore } from "./files_store.ts";
import { type Listener, listenNode } from "./node_adapter.ts";
import { type ServerLimits, SyncServerCore } from "./server_core.ts";
import type { ConnectionStats } from "./connection.ts";
import type { SyncStore, SyncStoreSource } from "./store.ts";

export interface SyncServerOptions extends ServerLimits {
  /**
   * The directory the server keeps its repositories, access rules and identity in (the files
   * store: one server). Give either `dir` or `store`.
   */
  dir?: string;
  /** Another store, e.g. `postgresStore(url)`: N servers sharing it serve every repository. */
  store?: SyncStoreSource;
  /** Port to listen on (default 8787); 0 picks a free one. */
  port?: number;
  /** Interface to listen on (default "127.0.0.1"). */
  hostname?: string;
  /** Decides every read and write; without it, the built-in rules (`server.access`) do. */
  authorize?: Authorize;
  /** Anyone may read and write every repository: for development only. */
  open?: boolean;
  /**
   * Refuse a writer's first block in a repository unless it names the repository (its `prev`).
   * Blocks name it since 2026-11-27, which binds each chain to its repository: a reader of one
   * cannot replay an author's blocks into another. Chains begun by older Cairn versions name
   * none; by default their first blocks are still taken (so existing data can be synced), and a
   * reader could replay them. Set this where no such data needs to reach the server.
   */
  boundChainsOnly?: boolean;
}

export interface SyncServer {
  /** `ws://host:port`: what clients connect to. */
  readonly url: string;
  readonly port: number;
  /** The built-in access rules (used when there is no `authorize` hook and `open` is not set). */
  readonly access: AccessRules;
  /**
   * Applies changed rights to the clients already connected, on one repository or every one:
   * call it when the answers of your `authorize` hook change. A client that may no longer read
   * is sent `denied` and nothing more of it; one that may no longer write has its pushes
   * refused; one that may now read or write is told so. Changes through `access` apply at once
   * without it.
   */
  reauthorize(repository?: string): void;
  /** Sends goaway to every client, sends their pending acks, closes them and the store. */
  close(): Promise<void>;
  /** @internal Per-connection socket buffering, and open repositories: for tests. */
  stats(): { connections: ConnectionStats[]; openRepositories: number };
}

export async function createSyncServer(options: SyncServerOptions): Promise<SyncServer> {
  const hostname = options?.hostname ?? "127.0.0.1";
  const store = await openStore(options);
  let core: SyncServerCore;
  try {
    core = await SyncServerCore.create(store, options);
  } catch (err) {
    await store.close();
    throw err;
  }
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  const port = options.port ?? 8787;
  let listener: Listener;
  try {
    const listen = "Deno" in globalThis ? listenDeno : listenNode;
    listener = await listen(core, port, hostname);
  } catch (err) {
    await core.close(); // closes the store
    // A port in use, a host that does not resolve: what the runtime says, under a stable code.
    if (isCairnError(err)) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new CairnError("E_IO", `the sync server cannot listen on ${host}:${port}: ${reason}`, {
      cause: err,
    });
  }
  let closing: Promise<void> | undefined;
  return {
    url: `ws://${host}:${listener.port}`,
    port: listener.port,
    access: core.access,
    reauthorize: (repository) => core.reauthorize(repository),
    close: () =>
      closing ??= (async () => {
        await core.close();
        await listener.close();
      })(),
    stats: () => core.stats(),
  };
}

function openStore(options: SyncServerOptions): Promise<SyncStore> {
  const { dir, store } = options ?? {};
  if (store !== undefined) {
    if (dir !== undefined) {
      throw new CairnError("E_BAD_ARGUMENT", "createSyncServer takes a dir or a store, not both");
    }
    if (typeof store?.open !== "function") {
      throw new CairnError("E_BAD_ARGUMENT", "store must be made by a store function");
    }
    return store.open();
  }
  if (typeof dir !== "string" || dir === "") {
    throw new CairnError("E_BAD_ARGUMENT", "createSyncServer needs a dir to keep its data in");
  }
  return openFilesStore(dir);
}
