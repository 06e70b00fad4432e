/**
 * The sync client: keeps a database's repositories in sync with a server over one WebSocket
 * (docs/sync.md). It subscribes each repository from its cursor (or its version vector), imports
 * what the server sends through `importBlocks` — so every block is verified, against exactly the
 * writers the server lists — and pushes every block that enters the repository from elsewhere,
 * keeping each until the server acknowledges it, across reconnects.
 */
import { CairnError, isCairnError } from "../core/errors.ts";
import { Cairn, signAsSession, tabSyncEnvironment, watchRepositories } from "../db/database.ts";
import { fromBase64Url } from "../core/bytes.ts";
import type { Repository } from "../repo/repository.ts";
import { Backoff } from "./backoff.ts";
import {
  type CheckedSyncOptions,
  checkSyncOptions,
  MIN_MAX_FRAME,
  type SyncOptions,
} from "./options.ts";
import {
  binCost,
  CLOSE,
  decodeFrame,
  encodeFrame,
  type Frame,
  frameOverhead,
  groupFrames,
  proofMessage,
  PROTOCOL_VERSION,
  PUSH_WINDOW_FRAMES,
} from "./protocol.ts";
import { EventedLink } from "./link_events.ts";
import { closedError, type SyncLink } from "./sync_link.ts";
import { remoteError } from "./remote_error.ts";
import { RepositoryLink } from "./repository_link.ts";
import { openWebSocket, SOCKET_OPEN, type SocketFactory, type SyncSocket } from "./socket.ts";
import { type OutgoingBlock } from "./push_queue.ts";
import { onWake } from "./wake.ts";
import { TabSyncLink } from "./tab_sync.ts";

export type { SyncOptions } from "./options.ts";

export type { SyncStatus } from "./link_events.ts";

export type { SyncLink } from "./sync_link.ts";

/** @internal What tests replace: the socket, timers and random numbers. */
export interface SyncSeams {
  readonly socket: SocketFactory;
  readonly setTimeout: (callback: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
  readonly random: () => number;
  /** Calls `callback` when the network may be back (online, page visible); returns the stop. */
  readonly wake: (callback: () => void) => () => void;
}

const DEFAULT_SEAMS: SyncSeams = {
  socket: openWebSocket,
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as number),
  random: Math.random,
  wake: onWake,
};

/** Credit granted per repository when subscribing, and kept topped up as blocks are applied. */
const CREDIT_BYTES = 4 << 20;
/** Heartbeat interval assumed until the server announces its own. */
const DEFAULT_HEARTBEAT_MS = 15_000;
/** The shortest heartbeat interval the client's watchdog goes by. */
const MIN_HEARTBEAT_MS = 1000;
/** The longest: a server's longer interval would leave a dead socket unnoticed for hours. */
const MAX_HEARTBEAT_MS = 10 * 60_000;
/** How long a caught-up connection stays up before a drop of it starts the backoff over. */
const STABLE_AFTER_MS = 10_000;
/** The longest delay a server's `goaway` may ask for before the client comes back. */
const MAX_RETRY_AFTER_MS = 60 * 60_000;
/** setTimeout's largest delay: it fires a longer one at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Silence (in heartbeat intervals) after which the socket is taken as dead. */
const SILENT_INTERVALS = 3;
/**
 * How long (in heartbeat intervals) pushes may wait in flight with none acknowledged before the
 * socket is given up: a server that keeps it alive but withholds acks would hold them for good.
 */
const UNACKED_INTERVALS = 8;

/**
 * Syncs `db` with the server at `url` (ws:// or wss://) until `close()`.
 *
 * @example
 * ```ts
 * const link = sync(db, "ws://127.0.0.1:8787");
 * link.on("error", (err) => console.warn(err.code, err.message));
 * await link.synced();
 * ```
 */
export function sync(db: Cairn, url: string, options?: SyncOptions): SyncLink {
  return syncWith(db, url, options, {});
}

/** @internal sync() with some of its seams replaced (tests). */
export function syncWith(
  db: Cairn,
  url: string,
  options: SyncOptions | undefined,
  seams: Partial<SyncSeams>,
): SyncLink {
  if (!(db instanceof Cairn)) {
    throw new CairnError("E_BAD_ARGUMENT", "sync: the first argument is a Cairn database");
  }
  const checked = checkSyncOptions(url, options);
  if (db.trusted) {
    throw new CairnError("E_BAD_ARGUMENT", "sync: a trusted-mode database signs no block");
  }
  const connect = (from: Cairn) =>
    new SyncClient(from, url, checked, { ...DEFAULT_SEAMS, ...seams });
  // In a tab of a database shared by several, only the tab that serves the others connects.
  const tabs = tabSyncEnvironment(db);
  return tabs ? new TabSyncLink(url, tabs, connect) : connect(db);
}

/** One socket's state: replaced whole on every reconnect. */
interface Connection {
  readonly socket: SyncSocket;
  phase: "opening" | "challenged" | "open";
  /** The largest frame to send: the lower of ours and the server's. */
  sendLimit: number;
  heartbeatMs: number;
  /** Frames are handled one at a time, in order (imports are asynchronous). */
  inbox: Promise<void>;
  /** Bytes of the frames waiting in the inbox (received, not yet handled): see #inboxCap. */
  inboxBytes: number;
  nextPushId: number;
  /** Each push sent and not yet acknowledged, by id. */
  readonly pushesInFlight: Map<number, InFlightPush>;
  watchdog: unknown;
  /** Gives the socket up when no push in flight is acknowledged in time (see #armAckWatch). */
  ackWatch: unknown;
  /** Sends again the blocks refused for a reason that may pass (see #armRetry). */
  retryTimer: unknown;
  /** Subscribes again to the repositories the server could not read (see #armResubscribe). */
  resubscribeTimer: unknown;
  /** Starts the backoff over once the connection has stayed up, caught up (see #synced). */
  stableTimer: unknown;
  /** Paths unsubscribed on this socket: opened again, they need a new one (#reconnectNow). */
  readonly unsubscribed: Set<string>;
  /** Set by `goaway`: the delay it asked for before reconnecting (see #scheduleReconnect). */
  retryAfterMs?: number;
  ended: boolean;
}

/**
 * A push sent and not yet acknowledged. Those of repositories still linked add up to at most
 * PUSH_WINDOW_FRAMES frames of sendLimit (protocol.ts), or one push.
 */
interface InFlightPush {
  readonly link: RepositoryLink;
  readonly bytes: number;
}

interface Waiter {
  readonly waited: Map<RepositoryLink, readonly OutgoingBlock[]>;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

class SyncClient extends EventedLink implements SyncLink {
  readonly #db: Cairn;
  readonly #url: string;
  readonly #options: CheckedSyncOptions;
  readonly #seams: SyncSeams;
  readonly #backoff: Backoff;
  /** Delays between sending again blocks refused for a reason that may pass. */
  readonly #retryBackoff: Backoff;
  readonly #resubscribeBackoff: Backoff;
  readonly #links = new Map<string, RepositoryLink>();
  #waiters: Waiter[] = [];
  #connection: Connection | undefined;
  #reconnectTimer: unknown;
  readonly #unwatch: () => void;
  readonly #stopWaking: () => void;

  constructor(db: Cairn, url: string, options: CheckedSyncOptions, seams: SyncSeams) {
    super();
    this.#db = db;
    this.#url = url;
    this.#options = options;
    this.#seams = seams;
    this.#backoff = new Backoff(options.backoff, seams.random);
    this.#retryBackoff = new Backoff(options.backoff, seams.random);
    this.#resubscribeBackoff = new Backoff(options.backoff, seams.random);
    this.#unwatch = watchRepositories(db, {
      opened: (repo) => this.#opened(repo),
      closed: (repo) => this.#closed(repo),
      // A link of a closed database would go on connecting with nothing to sync.
      ended: () => void this.close(),
    });
    this.#stopWaking = seams.wake(() => this.#wake());
    this.#connect();
  }

  get unacknowledged(): number {
    let count = 0;
    for (const link of this.#links.values()) count += link.queue.size;
    return count;
  }

  async synced(): Promise<void> {
    if (this.#isClosed()) throw closedError();
    // Writes of this tick are sealed first: the listener queues their blocks.
    await Promise.all([...this.#links.values()].map((link) => link.repo.flush()));
    const waited = new Map<RepositoryLink, readonly OutgoingBlock[]>();
    for (const link of this.#links.values()) waited.set(link, link.queue.blocks());
    // close() may have run during the flush.
    if (this.#isClosed()) throw closedError();
    return new Promise((resolve, reject) => {
      this.#waiters.push({ waited, resolve, reject });
      this.#checkWaiters();
    });
  }

  #isClosed(): boolean {
    return this.events.status === "closed";
  }

  close(): Promise<void> {
    if (this.#isClosed()) return Promise.resolve();
    this.events.setStatus("closed");
    this.#unwatch();
    this.#stopWaking();
    this.#seams.clearTimeout(this.#reconnectTimer);
    const connection = this.#connection;
    if (connection) this.#end(connection, 1000, "closed by the client");
    for (const link of this.#links.values()) link.unlisten();
    this.#links.clear();
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(closedError());
    return Promise.resolve();
  }

  // ── repositories ─────────────────────────────────────────────────────────────────────────

  #opened(repo: Repository): void {
    const wanted = this.#options.repositories;
    if (wanted && !wanted.has(repo.path)) return;
    const unlisten = repo.onBlock((block) => {
      // What this link's server sent is not sent back to it.
      if (block.origin === this) return;
      const link = this.#links.get(repo.path);
      if (link?.repo !== repo) return;
      link.queue.add(block.session, block.seq, block.bytes());
      this.#schedulePush(link);
    });
    const link = new RepositoryLink(repo, unlisten);
    this.#links.set(repo.path, link);
    const connection = this.#connection;
    if (connection?.phase !== "open") return;
    if (connection.unsubscribed.has(repo.path)) this.#reconnectNow(connection);
    else this.#subscribe(connection, link);
  }

  #closed(repo: Repository): void {
    const link = this.#links.get(repo.path);
    if (link?.repo !== repo) return;
    link.unlisten();
    this.#links.delete(repo.path);
    const connection = this.#connection;
    if (connection?.phase === "open") {
      this.#send(connection, { type: "unsubscribe", repo: repo.path });
      connection.unsubscribed.add(repo.path);
    }
    this.#updateStatus();
  }

  // ── the socket ───────────────────────────────────────────────────────────────────────────

  #connect(): void {
    this.#reconnectTimer = undefined;
    this.events.setStatus("connecting");
    let socket: SyncSocket;
    try {
      socket = this.#seams.socket(this.#url, this.#options.maxFrame);
    } catch (err) {
      this.events.report(asCairnError(err, "E_IO", "cannot open a WebSocket"));
      this.#scheduleReconnect();
      return;
    }
    socket.binaryType = "arraybuffer";
    const connection: Connection = {
      socket,
      phase: "opening",
      sendLimit: this.#options.maxFrame,
      heartbeatMs: DEFAULT_HEARTBEAT_MS,
      inbox: Promise.resolve(),
      inboxBytes: 0,
      nextPushId: 1,
      pushesInFlight: new Map(),
      watchdog: undefined,
      ackWatch: undefined,
      resubscribeTimer: undefined,
      retryTimer: undefined,
      stableTimer: undefined,
      unsubscribed: new Set(),
      ended: false,
    };
    this.#connection = connection;
    for (const link of this.#links.values()) link.startSocket();
    socket.onopen = () => {
      if (connection.ended) return;
      this.#send(connection, {
        type: "hello",
        versions: [PROTOCOL_VERSION],
        session: this.#db.session.id,
        publicKey: fromBase64Url(this.#db.session.publicKey)!,
        token: this.#options.token,
      });
    };
    socket.onmessage = (event) => this.#message(connection, event.data);
    socket.onclose = () => this.#dropped(connection);
    // A close follows. An Error (not an error event) is one the socket could not even be made
    // for (runtime/websocket.ts: `ws` failed to load, or refused the URL), or a message it
    // refused (over maxFrame): said, as no retry will mend it.
    socket.onerror = (event) => {
      if (event instanceof Error) this.events.report(asCairnError(event, "E_IO", "sync: socket"));
    };
    this.#armWatchdog(connection);
  }

  /**
   * Nothing heard for a few heartbeat intervals (or the handshake's next step not taken in that
   * time): the socket is dead, whatever it says.
   */
  #armWatchdog(connection: Connection): void {
    this.#seams.clearTimeout(connection.watchdog);
    connection.watchdog = this.#setTimer(() => {
      if (connection.ended) return;
      const silentMs = SILENT_INTERVALS * connection.heartbeatMs;
      this.#giveUp(
        connection,
        connection.phase === "open"
          ? `sync: nothing heard from the server for ${silentMs} ms`
          : `sync: the server did not take the handshake's next step within ${silentMs} ms`,
        "heartbeat timeout",
      );
    }, SILENT_INTERVALS * connection.heartbeatMs);
  }

  /** The server is taken as gone (E_IO `message` reported, close 4004): a new socket follows. */
  #giveUp(connection: Connection, message: string, reason: string): void {
    this.events.report(new CairnError("E_IO", message));
    this.#end(connection, CLOSE.heartbeat, reason);
    this.#dropped(connection);
  }

  #message(connection: Connection, data: unknown): void {
    if (connection.ended) return;
    // Before the handshake is done only its own steps count (challenge, welcome): a server that
    // answers pings forever and never welcomes would keep the link "connecting" for good.
    if (connection.phase === "open") this.#armWatchdog(connection);
    let frame: Frame;
    let size: number;
    try {
      if (!(data instanceof ArrayBuffer)) {
        throw new CairnError("E_PROTOCOL", "sync: the server sent a text message");
      }
      const bytes = new Uint8Array(data);
      size = bytes.length;
      frame = decodeFrame(bytes, this.#options.maxFrame);
    } catch (err) {
      this.#fail(connection, err);
      return;
    }
    // Answered at once, not behind imports: a pong is a sign of life, and the close that
    // follows a goaway may come before the frames queued ahead of it are handled.
    if (frame.type === "ping") {
      this.#send(connection, { type: "pong", n: frame.n });
      return;
    }
    if (frame.type === "goaway") {
      connection.retryAfterMs = frame.retryAfterMs;
      return;
    }
    this.#enqueue(connection, frame, size);
  }

  /**
   * Queues a frame behind those not handled yet; a server that sends more than the inbox may
   * hold (faster than its blocks are verified, or past the credit granted) is cut off.
   */
  #enqueue(connection: Connection, frame: Frame, size: number): void {
    connection.inboxBytes += size;
    if (connection.inboxBytes > this.#inboxCap()) {
      this.#fail(
        connection,
        new CairnError(
          "E_PROTOCOL",
          `sync: the server sent more than the client can take (over ${this.#inboxCap()} ` +
            "bytes waiting to be handled)",
        ),
      );
      return;
    }
    connection.inbox = connection.inbox
      .then(() => {
        connection.inboxBytes -= size;
        return connection.ended ? undefined : this.#handle(connection, frame, size);
      })
      .catch((err) => this.#fail(connection, err));
  }

  /**
   * The most the inbox may hold. A server that keeps to its credit has at most CREDIT_BYTES of
   * `blocks` outstanding per repository; twice that leaves as much again for `live` frames (not
   * credit-paced, but sent only as fast as writers write) and a couple of frames of slack for
   * the small ones (members, synced, acks). A burst beyond it is a server that floods.
   */
  #inboxCap(): number {
    return 2 * CREDIT_BYTES * Math.max(1, this.#links.size) + 2 * this.#options.maxFrame;
  }

  /** A frame that breaks the protocol (or could not be handled): report, close, reconnect. */
  #fail(connection: Connection, err: unknown): void {
    if (connection.ended) return;
    this.events.report(asCairnError(err, "E_PROTOCOL", "sync: the server's frame"));
    this.#end(connection, CLOSE.protocol, "protocol error");
    this.#dropped(connection);
  }

  #end(connection: Connection, code: number, reason: string): void {
    if (connection.ended) return;
    connection.ended = true;
    this.#stopTimers(connection);
    try {
      connection.socket.close(code, reason);
    } catch {
      // Closing a socket that is closing already: nothing to do.
    }
  }

  /**
   * A path unsubscribed on this socket was opened again. Frames of its earlier subscription may
   * still come (the server sent them before it read the unsubscribe: blocks, members, a synced
   * the new subscription would take for its own), and nothing tells them apart: a new socket
   * carries none. Not a failure: no backoff.
   */
  #reconnectNow(connection: Connection): void {
    this.#end(connection, 1000, "a repository was opened again");
    this.#forget(connection);
    this.#connect();
  }

  /** The socket is gone (closed by either side, or given up): reconnect unless closed. */
  #dropped(connection: Connection): void {
    if (this.#connection !== connection) return;
    this.#forget(connection);
    if (this.#isClosed()) return;
    this.events.setStatus("offline");
    this.#scheduleReconnect(connection.retryAfterMs);
  }

  /** The current socket is done with: nothing of it is kept, every link starts afresh. */
  #forget(connection: Connection): void {
    connection.ended = true;
    this.#stopTimers(connection);
    this.#connection = undefined;
    for (const link of this.#links.values()) link.startSocket();
  }

  /**
   * Every drop counts as a failure, one after a `goaway` too: a server that sends each connection
   * away cannot make the client spin. The delay a `goaway` asked for is kept when longer, up to
   * an hour.
   */
  #scheduleReconnect(retryAfterMs = 0): void {
    const delay = Math.max(this.#backoff.next(), Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
    this.#reconnectTimer = this.#setTimer(() => this.#connect(), delay);
  }

  /** A timer of the seams, never longer than setTimeout can wait (a backoff's maxMs may be). */
  #setTimer(callback: () => void, ms: number): unknown {
    return this.#seams.setTimeout(callback, Math.min(ms, MAX_TIMER_MS));
  }

  #stopTimers(connection: Connection): void {
    this.#seams.clearTimeout(connection.watchdog);
    this.#seams.clearTimeout(connection.ackWatch);
    this.#seams.clearTimeout(connection.resubscribeTimer);
    this.#seams.clearTimeout(connection.retryTimer);
    this.#seams.clearTimeout(connection.stableTimer);
  }

  /** The network may be back: try now rather than at the end of the backoff. */
  #wake(): void {
    if (this.events.status !== "offline" || this.#reconnectTimer === undefined) return;
    this.#seams.clearTimeout(this.#reconnectTimer);
    this.#connect();
  }

  #send(connection: Connection, frame: Frame): void {
    this.#sendEncoded(connection, encodeFrame(frame));
  }

  #sendEncoded(connection: Connection, bytes: Uint8Array): void {
    if (connection.ended || connection.socket.readyState !== SOCKET_OPEN) return;
    connection.socket.send(bytes);
  }

  // ── frames ───────────────────────────────────────────────────────────────────────────────

  async #handle(connection: Connection, frame: Frame, size: number): Promise<void> {
    switch (frame.type) {
      case "challenge":
        return await this.#challenged(connection, frame);
      case "welcome":
        return this.#welcomed(connection);
      case "pong":
        return;
      case "error":
        this.events.report(remoteError(frame.code, frame.message, "sync: the server"));
        this.#end(connection, 1000, "server error");
        this.#dropped(connection);
        return;
    }
    if (connection.phase !== "open") throw outOfOrder(frame);
    switch (frame.type) {
      case "members":
        return this.#members(connection, frame);
      case "blocks":
        return await this.#blocks(connection, frame.repo, frame.frames, size);
      case "synced":
        return await this.#synced(connection, frame);
      case "live":
        return await this.#live(frame);
      case "ack":
        return this.#acked(connection, frame);
      case "denied":
        return this.#denied(connection, frame);
      case "reset":
        return this.#reset(connection, frame.repo);
      default:
        throw outOfOrder(frame);
    }
  }

  async #challenged(
    connection: Connection,
    frame: Extract<Frame, { type: "challenge" }>,
  ): Promise<void> {
    if (connection.phase !== "opening") throw outOfOrder(frame);
    if (frame.version !== PROTOCOL_VERSION) {
      throw new CairnError("E_PROTOCOL", `sync: the server chose version ${frame.version}`);
    }
    // Limits a client could not live with: frames too small to carry a block (it would drop
    // every push as too large), a heartbeat so short that the link never stays up (or so long
    // that a dead socket goes unnoticed: that one is capped).
    if (frame.limits.maxFrame < MIN_MAX_FRAME) {
      throw new CairnError("E_PROTOCOL", `sync: the server's maxFrame ${frame.limits.maxFrame}`);
    }
    // Its catch-up and live frames may be that large, and this client would refuse the first
    // one that is, on every socket: said now, plainly.
    if (frame.limits.maxFrame > this.#options.maxFrame) {
      throw new CairnError(
        "E_TOO_LARGE",
        `sync: the server sends frames of up to ${frame.limits.maxFrame} bytes, over this ` +
          `client's maxFrame (${this.#options.maxFrame}): give sync() a maxFrame of at least that`,
      );
    }
    connection.phase = "challenged";
    connection.sendLimit = Math.min(this.#options.maxFrame, frame.limits.maxFrame);
    connection.heartbeatMs = Math.min(
      MAX_HEARTBEAT_MS,
      Math.max(MIN_HEARTBEAT_MS, frame.limits.heartbeatMs),
    );
    this.#armWatchdog(connection);
    const message = proofMessage(frame.nonce, frame.serverId, this.#db.session.id);
    this.#send(connection, { type: "prove", signature: await signAsSession(this.#db, message) });
  }

  #welcomed(connection: Connection): void {
    if (connection.phase !== "challenged") throw outOfOrder({ type: "welcome" });
    connection.phase = "open";
    this.#armWatchdog(connection);
    for (const link of this.#links.values()) this.#subscribe(connection, link);
    this.#updateStatus();
  }

  #subscribe(connection: Connection, link: RepositoryLink): void {
    const cursor = link.cursor ?? null;
    let frame: Frame = {
      type: "subscribe",
      repo: link.path,
      cursor,
      versionVector: cursor === null ? link.repo.versionVector() : null,
    };
    let bytes = encodeFrame(frame);
    // A vector of more sessions than a frame holds: subscribed with neither, this client is sent
    // every block (those it holds are duplicates) and pushes all it holds.
    if (bytes.length > connection.sendLimit) {
      frame = { ...frame, versionVector: null };
      bytes = encodeFrame(frame);
    }
    link.subscribed(frame.versionVector ?? (cursor === null ? "every" : undefined));
    this.#sendEncoded(connection, bytes);
    this.#send(connection, { type: "credit", repo: link.path, bytes: CREDIT_BYTES });
    this.#updateStatus();
  }

  #linkOf(repo: string): RepositoryLink | undefined {
    // Frames for a repository unsubscribed meanwhile are late, not wrong: they are dropped.
    return this.#links.get(repo);
  }

  async #blocks(
    connection: Connection,
    repo: string,
    frames: Uint8Array[],
    size: number,
  ): Promise<void> {
    const link = this.#linkOf(repo);
    if (!link) return;
    await this.#import(link, frames);
    // What was applied is room for more.
    this.#send(connection, { type: "credit", repo, bytes: size });
  }

  async #live(frame: Extract<Frame, { type: "live" }>): Promise<void> {
    const link = this.#linkOf(frame.repo);
    if (!link) return;
    await this.#import(link, frame.frames);
    if (link.cursor && !link.missedBlocks) link.cursor = [link.cursor[0], frame.position];
  }

  /** Imports the server's blocks, every one verified; a refused one is reported, never pushed. */
  async #import(link: RepositoryLink, frames: Uint8Array[]): Promise<void> {
    let report;
    try {
      report = await link.repo.importBlocks(frames, this);
    } catch (err) {
      if (!isCairnError(err)) throw err;
      this.events.report(err); // the repository closed meanwhile
      return;
    }
    if (report.rejected.length > 0) {
      link.missedBlocks = true;
      link.cursor = undefined;
    }
    for (const { error } of report.rejected) {
      this.events.report(
        new CairnError(error.code, `sync ${link.path}: a block from the server: ${error.message}`, {
          cause: error,
        }),
      );
    }
  }

  async #synced(
    connection: Connection,
    frame: Extract<Frame, { type: "synced" }>,
  ): Promise<void> {
    const link = this.#linkOf(frame.repo);
    if (!link || link.phase !== "catching-up") return;
    if (frame.versionVector) {
      // The server said what it holds of what this client held when it subscribed: the rest of
      // that is pushed (written offline, or before a restart), in causal order. What came since
      // came from this server, or was queued for it as it came.
      const missing = await link.repo.exportNamedBlocks(
        link.heldAtSubscribe(frame.versionVector),
      );
      if (connection.ended) return;
      link.queue.adoptServerState(frame.versionVector, missing);
    }
    // Only now: a later subscription by this cursor trusts the queue to hold all the server
    // lacks, which is true once the blocks missing from the server's vector are queued. (Kept
    // before that, a socket lost during the export left a cursor and an empty queue: blocks
    // written before an app restart were never pushed.)
    if (!link.missedBlocks) link.cursor = frame.cursor;
    link.caughtUp();
    if (![...this.#links.values()].some((other) => other.unreadable)) {
      this.#resubscribeBackoff.reset();
    }
    // The connection worked once every repository caught up on it and it stayed up a while: a
    // socket that one of them keeps failing (a frame too large for this client, say), or a
    // server that drops every client right after its catch-up, still backs off.
    if (![...this.#links.values()].some((other) => other.phase === "catching-up")) {
      connection.stableTimer ??= this.#setTimer(() => this.#backoff.reset(), STABLE_AFTER_MS);
    }
    this.#push(connection, link);
    this.#updateStatus();
  }

  #acked(connection: Connection, frame: Extract<Frame, { type: "ack" }>): void {
    const push = connection.pushesInFlight.get(frame.id);
    if (!push || push.link.path !== frame.repo) {
      throw new CairnError("E_PROTOCOL", `sync: an ack for push ${frame.id}, never sent`);
    }
    connection.pushesInFlight.delete(frame.id);
    this.#seams.clearTimeout(connection.ackWatch);
    connection.ackWatch = undefined;
    const { link } = push;
    // A push sent before its repository closed, or subscribed again (reset), is acknowledged
    // late: its blocks are queued (or exported) again and settle with a later push.
    if (this.#isCurrent(link) && link.queue.has(frame.id)) this.#settle(connection, link, frame);
    // The window has room again: what waited for it goes.
    for (const waiting of this.#links.values()) {
      if (waiting.phase === "synced") this.#push(connection, waiting);
    }
    if (connection.pushesInFlight.size > 0) this.#armAckWatch(connection);
    this.#updateStatus();
  }

  /**
   * While pushes are in flight, one must be acknowledged within UNACKED_INTERVALS heartbeats (from
   * the first sent, or the last ack): otherwise the server is taken as withholding them, and the
   * socket is dropped (the blocks go again on the next one). A server that answers pings but
   * never acks kept a link, and synced(), waiting for good.
   */
  #armAckWatch(connection: Connection): void {
    if (connection.ackWatch !== undefined) return;
    const waitMs = UNACKED_INTERVALS * connection.heartbeatMs;
    connection.ackWatch = this.#setTimer(() => {
      if (connection.ended) return;
      const message = `sync: the server acknowledged no push for ${waitMs} ms`;
      this.#giveUp(connection, message, "pushes not acknowledged");
    }, waitMs);
  }

  /** Settles a push by its ack: refusals reported, the blocks that may pass retried later. */
  #settle(
    connection: Connection,
    link: RepositoryLink,
    frame: Extract<Frame, { type: "ack" }>,
  ): void {
    const refused = link.queue.settle(frame.id, frame.rejected);
    for (const { block, code, message } of refused) {
      this.events.report(
        remoteError(
          code,
          message,
          `sync ${link.path}: block ${block.session}/${block.seq} refused by the server`,
        ),
      );
    }
    // A refused block that is done was refused for good: the server lacks it (see gaveUpBlock).
    if (refused.some(({ block }) => block.done)) link.gaveUpBlock();
    if (link.queue.waitsForRetry) this.#armRetry(connection);
    else if (![...this.#links.values()].some((other) => other.queue.waitsForRetry)) {
      this.#retryBackoff.reset();
    }
  }

  /**
   * Blocks refused for a reason that may pass go again after a backoff delay, or with the next
   * local write if it comes first: synced() waits for them, and no write may ever come.
   */
  #armRetry(connection: Connection): void {
    if (connection.retryTimer !== undefined) return;
    connection.retryTimer = this.#setTimer(() => {
      connection.retryTimer = undefined;
      for (const link of this.#links.values()) this.#pushWithRetries(link);
    }, this.#retryBackoff.next());
  }

  #members(connection: Connection, frame: Extract<Frame, { type: "members" }>): void {
    const link = this.#linkOf(frame.repo);
    if (!link) return;
    const couldWrite = link.canWrite;
    link.members(frame.writers, frame.canWrite);
    // Granted while subscribed, this session or a writer whose blocks it passes on (imported
    // from elsewhere): what waited for the right goes now.
    const granted = !couldWrite || frame.writers.length > 0;
    if (granted && link.canWrite && link.phase === "synced") {
      link.toldCannotWrite = false;
      link.queue.resend("right");
      this.#push(connection, link);
      this.#updateStatus();
    }
  }

  #denied(connection: Connection, frame: Extract<Frame, { type: "denied" }>): void {
    const link = this.#linkOf(frame.repo);
    if (!link) return;
    const about = `sync ${link.path}: ${frame.right === "read" ? "reading" : "writing"} refused`;
    if (frame.right === "read") {
      link.phase = "denied";
      // The server could not read the repository (its store failed): asked again later.
      link.unreadable = frame.code === "E_IO";
      if (link.unreadable) this.#armResubscribe(connection);
    } else {
      // Nothing more is pushed. Pushes already sent are still answered by acks (the server
      // decided on them before): those settle them, and what they refuse for want of the
      // right stays queued (push_queue.ts) for when it is granted.
      link.canWrite = false;
    }
    this.events.report(remoteError(frame.code, frame.message, about));
    if (connection.ended) return;
    this.#updateStatus();
  }

  /**
   * Subscribes again, after a backoff delay, to the repositories the server could not read: a
   * store that failed may come back, and until then the other repositories keep the socket.
   */
  #armResubscribe(connection: Connection): void {
    if (connection.resubscribeTimer !== undefined) return;
    connection.resubscribeTimer = this.#setTimer(() => {
      connection.resubscribeTimer = undefined;
      for (const link of this.#links.values()) {
        if (link.phase === "denied" && link.unreadable) this.#subscribe(connection, link);
      }
    }, this.#resubscribeBackoff.next());
  }

  #reset(connection: Connection, repo: string): void {
    const link = this.#linkOf(repo);
    if (!link) return;
    link.cursor = undefined;
    this.#subscribe(connection, link);
  }

  // ── pushing ──────────────────────────────────────────────────────────────────────────────

  /** Blocks entered during this tick are pushed together at its end. */
  #schedulePush(link: RepositoryLink): void {
    if (link.pushScheduled) return;
    link.pushScheduled = true;
    queueMicrotask(() => {
      link.pushScheduled = false;
      this.#pushWithRetries(link);
    });
  }

  /** Pushes the link's blocks not sent yet, those held for a retry first (in their order). */
  #pushWithRetries(link: RepositoryLink): void {
    const connection = this.#connection;
    if (!connection || !this.#isCurrent(link) || link.phase !== "synced") return;
    link.queue.resend("retry");
    this.#push(connection, link);
  }

  /** Whether `link` is still the one of its repository (not closed, nor closed and reopened). */
  #isCurrent(link: RepositoryLink): boolean {
    return this.#links.get(link.path) === link;
  }

  /**
   * Sends the queued blocks not yet in a push on this socket, in pushes of at most a frame each,
   * while the pushes waiting for their ack add up to at most PUSH_WINDOW_FRAMES frames (small
   * pushes fly freely; a backlog goes a few frames at a time).
   */
  #push(connection: Connection, link: RepositoryLink): void {
    if (connection.ended || !this.#isCurrent(link)) return;
    if (!link.canWrite) {
      // Kept for a later socket, where the right may have been granted; said once per socket.
      if (link.queue.size > 0 && !link.toldCannotWrite) {
        link.toldCannotWrite = true;
        this.events.report(
          new CairnError(
            "E_FORBIDDEN",
            `sync ${link.path}: the server does not let this session write; ` +
              `${link.queue.size} blocks wait`,
          ),
        );
      }
      return;
    }
    const overhead = frameOverhead(link.path);
    const sendable: OutgoingBlock[] = [];
    for (const block of link.queue.unsent()) {
      if (binCost(block.bytes.length) + overhead <= connection.sendLimit) sendable.push(block);
      else {
        link.queue.drop(block);
        link.gaveUpBlock();
        this.events.report(
          new CairnError(
            "E_TOO_LARGE",
            `sync ${link.path}: block ${block.session}/${block.seq} (${block.bytes.length} ` +
              `bytes) does not fit a frame of ${connection.sendLimit} bytes`,
          ),
        );
      }
    }
    let at = 0;
    const window = PUSH_WINDOW_FRAMES * connection.sendLimit;
    let inFlight = this.#bytesInFlight(connection);
    for (const group of groupFrames(sendable.map((b) => b.bytes), connection.sendLimit, overhead)) {
      const bytes = group.reduce((sum, frame) => sum + binCost(frame.length), overhead);
      if (inFlight > 0 && inFlight + bytes > window) break;
      const id = connection.nextPushId++;
      connection.pushesInFlight.set(id, { link, bytes });
      inFlight += bytes;
      const blocks = sendable.slice(at, at + group.length);
      at += group.length;
      link.queue.sent(id, blocks);
      this.#send(connection, { type: "push", repo: link.path, id, frames: group });
      this.#armAckWatch(connection);
    }
  }

  /** What fills the push window: pushes in flight, but for those of repositories since closed. */
  #bytesInFlight(connection: Connection): number {
    let bytes = 0;
    for (const push of connection.pushesInFlight.values()) {
      if (this.#isCurrent(push.link)) bytes += push.bytes;
    }
    return bytes;
  }

  // ── status, errors, waiters ──────────────────────────────────────────────────────────────

  /**
   * The status the links' phases give, and the synced() calls it lets resolve: every change
   * that may settle one comes here (an ack, a catch-up, a refusal, a repository closed, none
   * linked at all).
   */
  #updateStatus(): void {
    const connection = this.#connection;
    if (this.#isClosed() || connection?.phase !== "open") return;
    // A repository the server could not read is not caught up: it is asked for again.
    const caughtUp = [...this.#links.values()].every((link) => link.settled || link.refusedReading);
    this.events.setStatus(caughtUp ? "synced" : "catching-up");
    this.#checkWaiters();
  }

  /** Resolves the synced() calls whose blocks are all settled, once caught up. */
  #checkWaiters(): void {
    if (this.events.status !== "synced" || this.#waiters.length === 0) return;
    this.#waiters = this.#waiters.filter((waiter) => {
      for (const [link, blocks] of waiter.waited) {
        if (!this.#isCurrent(link) || link.refusedReading) continue;
        if (!link.canWrite) continue; // refused writing: reported, not waited for
        if (blocks.some((block) => !block.done && !link.queue.waitsForRight(block))) return true;
      }
      waiter.resolve();
      return false;
    });
  }
}

function outOfOrder(frame: { type: string }): CairnError {
  return new CairnError("E_PROTOCOL", `sync: unexpected ${frame.type} frame from the server`);
}

function asCairnError(err: unknown, code: "E_PROTOCOL" | "E_IO", about: string): CairnError {
  if (isCairnError(err)) return err;
  return new CairnError(code, `${about}: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
  });
}
