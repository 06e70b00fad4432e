/**
 * The transport-agnostic server: its store, its open repositories, access decisions and live
 * connections. Adapters (deno_adapter.ts, node_adapter.ts) hand it sockets; tests can hand it
 * fakes.
 */
import { CairnError } from "../../core/errors.ts";
import type { CryptoSuite } from "../../core/signing.ts";
import { checkRepositoryPath } from "../../core/repository_path.ts";
import { cryptoSuite } from "../../runtime/crypto_suite.ts";
import { DEFAULT_MAX_FRAME } from "../protocol.ts";
import { type AccessOptions, AccessRules, makeDecider } from "./access.ts";
import { Connection, type ConnectionConfig, type ConnectionStats } from "./connection.ts";
import { Repositories } from "./repositories.ts";
import type { SocketHandlers, SyncSocket } from "./socket.ts";
import type { SyncStore } from "./store.ts";

export interface ServerLimits {
  /** Largest frame either side may send (default 1 MiB). */
  maxFrame?: number;
  /** Ping interval; a connection silent for three is closed (default 15 s). */
  heartbeatMs?: number;
  /** Time a client has to complete the handshake (default 10 s). */
  handshakeTimeoutMs?: number;
  /** Repositories without subscribers or pushes for this long are closed (default 60 s). */
  idleCloseMs?: number;
  /** Socket bytes buffered past which a client is sent nothing more until it drains (4 MiB). */
  highWaterMark?: number;
  /**
   * Repositories one connection may be subscribed to at once (default 1,000): each holds a
   * repository open on the server. A subscribe past it is denied (`E_TOO_LARGE`).
   */
  maxSubscriptions?: number;
}

export interface ServerCoreOptions extends ServerLimits, AccessOptions {
  /**
   * Refuse a writer's first block in a repository unless it names the repository (its `prev`).
   * Blocks name it since 2026-11-27, which binds each chain to its repository: a reader of one
   * cannot replay an author's blocks into another. Chains begun by older Cairn versions name
   * none; by default their first blocks are still taken (so existing data can be synced), and a
   * reader could replay them. Set this where no such data needs to reach the server.
   */
  boundChainsOnly?: boolean;
}

export class SyncServerCore {
  readonly access: AccessRules;
  readonly #store: SyncStore;
  readonly #repositories: Repositories;
  readonly #connections = new Set<Connection>();
  readonly #config: ConnectionConfig;
  readonly #suite: CryptoSuite;
  readonly #options: ServerCoreOptions;
  #closing: Promise<void> | undefined;

  private constructor(
    store: SyncStore,
    access: AccessRules,
    suite: CryptoSuite,
    options: ServerCoreOptions,
  ) {
    this.#store = store;
    this.access = access;
    this.#suite = suite;
    this.#options = options;
    this.#repositories = new Repositories(store, positive(options.idleCloseMs, 60_000));
    access.onChange((repository) => this.reauthorize(repository));
    this.#config = {
      serverId: store.serverId,
      maxFrame: positive(options.maxFrame, DEFAULT_MAX_FRAME),
      heartbeatMs: positive(options.heartbeatMs, 15_000),
      handshakeTimeoutMs: positive(options.handshakeTimeoutMs, 10_000),
      highWaterMark: positive(options.highWaterMark, 4 << 20),
      maxSubscriptions: positive(options.maxSubscriptions, 1_000),
      drainPollMs: 10,
      boundChainsOnly: options.boundChainsOnly === true,
    };
  }

  static async create(store: SyncStore, options: ServerCoreOptions): Promise<SyncServerCore> {
    const access = new AccessRules(store.rules, await store.rules.load());
    return new SyncServerCore(store, access, await cryptoSuite(), options);
  }

  get maxFrame(): number {
    return this.#config.maxFrame;
  }

  /** Starts serving a socket; the adapter feeds the handlers its messages and its close. */
  accept(socket: SyncSocket): SocketHandlers {
    const builtIn = !this.#options.authorize && this.#options.open !== true;
    const decide = makeDecider(this.#options, this.access);
    const connection = new Connection(socket, {
      config: this.#config,
      suite: this.#suite,
      repositories: this.#repositories,
      decide,
      claim: async (repository, publicKey, proven) => {
        if (!builtIn || this.access.rules(repository).owner !== null) return;
        if (await proven()) await this.access.claim(repository, publicKey);
      },
      closed: (closed) => this.#connections.delete(closed),
    });
    if (this.#closing) connection.goAway("the server is stopping", 1000);
    else this.#connections.add(connection);
    return connection;
  }

  /**
   * Asks the access decision again for every open connection, on one repository or all: what
   * an application with an `authorize` hook calls when its answers change (the built-in rules
   * do it themselves on every change).
   */
  reauthorize(repository?: string): void {
    if (repository !== undefined) checkRepositoryPath(repository);
    for (const connection of this.#connections) connection.reauthorize(repository);
  }

  /** @internal Per connection: buffered bytes now and at most (backpressure tests). */
  stats(): { connections: ConnectionStats[]; openRepositories: number } {
    return {
      connections: [...this.#connections].map((connection) => connection.stats),
      openRepositories: this.#repositories.size,
    };
  }

  /** goaway to every client, their pending acks sent, sockets closed, repositories closed. */
  close(retryAfterMs = 1000): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all(
        [...this.#connections].map((c) => c.goAway("the server is stopping", retryAfterMs)),
      );
      await this.#repositories.closeAll();
      await this.#store.close();
    })();
    return this.#closing;
  }
}

function positive(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new CairnError("E_BAD_ARGUMENT", `limits must be positive integers, got ${value}`);
  }
  return value;
}
