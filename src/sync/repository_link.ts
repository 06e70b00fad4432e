/**
 * One repository's side of a sync link: what survives sockets (its cursor, its unacknowledged
 * blocks) and what each socket starts afresh (subscription, trusted writers, write right) — a
 * new socket must not inherit what the last one's server was believed to know.
 */
import { toBase64Url } from "../core/bytes.ts";
import { CairnError } from "../core/errors.ts";
import type { Repository, VersionVector } from "../repo/repository.ts";
import type { Cursor } from "./protocol.ts";
import { type OutgoingBlock, PushQueue } from "./push_queue.ts";

/** Where a repository's subscription stands on the current socket. */
export type SubscriptionPhase =
  /** Not subscribed (no socket, or the handshake is not done). */
  | "idle"
  /** Subscribed; catch-up not finished. */
  | "catching-up"
  /** Caught up; the blocks the server lacked are being pushed (see `settled`). */
  | "synced"
  /** Reading refused by the server: left alone until the next socket. */
  | "denied";

/** The most writers of one repository a client keeps trusted. */
export const MAX_WRITERS = 100_000;

export class RepositoryLink {
  readonly repo: Repository;
  readonly queue = new PushQueue();
  /** The server's cursor for this repository, once known; forgotten on `reset`, see gaveUpBlock. */
  cursor: Cursor | undefined;
  /** Stops listening to the repository's blocks. */
  readonly unlisten: () => void;

  phase: SubscriptionPhase = "idle";
  /** Whether the server said this session may write (its `members` frame). */
  canWrite = false;
  /**
   * The blocks queued when the server said it was caught up (`synced`): what it lacked, written
   * offline or before a restart. Tracked by block, not by push: a push that waits for room in the
   * window, or a block refused for a while and sent again, is still owed.
   */
  #owed: OutgoingBlock[] = [];
  /** Where the owed blocks not yet settled start: they mostly settle in order. */
  #owedFrom = 0;
  /** The writers the server listed (base64url), which the repository trusts (see members). */
  #writers = new Set<string>();
  /** The next `members` lists every writer (a subscription by version vector), not the new. */
  #fullListNext = false;
  /**
   * The version vector this link subscribed with, or "every" when it subscribed with neither a
   * cursor nor a vector (see heldAtSubscribe); undefined by cursor.
   */
  #subscribedWith: VersionVector | "every" | undefined;
  /** Reading was refused with E_IO (the server's store failed): subscribed again later. */
  unreadable = false;

  /** Reading was refused for a reason no retry mends (not E_IO): nothing is waited for. */
  get refusedReading(): boolean {
    return this.phase === "denied" && !this.unreadable;
  }
  /** Whether the client reported, on this socket, that it may not push what it holds. */
  toldCannotWrite = false;
  /**
   * A block from the server was refused: the server's cursor would skip it for good, so the
   * next subscription is by version vector (which asks for whatever is missing) and the cursor
   * is not kept until then.
   */
  missedBlocks = false;
  /** A push is queued for the end of this tick (local blocks of one tick go in one push). */
  pushScheduled = false;

  constructor(repo: Repository, unlisten: () => void) {
    this.repo = repo;
    this.unlisten = unlisten;
  }

  get path(): string {
    return this.repo.path;
  }

  /** The server's catch-up is over: from now on, what it lacked is owed to it. */
  caughtUp(): void {
    this.phase = "synced";
    this.#owed = this.queue.blocks();
    this.#owedFrom = 0;
  }

  /**
   * Caught up, and every block the server lacked then acknowledged — but those that wait for the
   * right to write, and all when this session may not write (both reported, not waited for).
   */
  get settled(): boolean {
    if (this.phase !== "synced") return false;
    if (!this.canWrite) return true;
    const owed = this.#owed;
    while (this.#owedFrom < owed.length && owed[this.#owedFrom].done) this.#owedFrom++;
    for (let i = this.#owedFrom; i < owed.length; i++) {
      if (!owed[i].done && !this.queue.waitsForRight(owed[i])) return false;
    }
    return true;
  }

  /**
   * A block the server lacks was given up (refused for good, or too large for a frame): a
   * subscription by cursor would never offer it again, one by version vector does (its catch-up
   * pushes whatever the server lacks), so the cursor is forgotten.
   */
  gaveUpBlock(): void {
    this.cursor = undefined;
  }

  /** A new socket: not subscribed, nothing in flight, the right to write not yet known. */
  startSocket(): void {
    this.phase = "idle";
    this.canWrite = false;
    this.toldCannotWrite = false;
    this.#owed = [];
    this.#owedFrom = 0;
    this.queue.unsendAll();
  }

  /**
   * Subscribed by a version vector (or by neither it nor a cursor: "every"): the server lists
   * every writer again (the set is replaced); by cursor (undefined) only those added after it
   * (the set grows).
   */
  subscribed(vector: VersionVector | "every" | undefined): void {
    this.startSocket();
    this.phase = "catching-up";
    this.unreadable = false;
    this.#subscribedWith = vector;
    this.#fullListNext = vector !== undefined;
    if (vector !== undefined) this.missedBlocks = false;
  }

  /**
   * What the server holds, for this client's export of what it lacks, from the vector of its
   * `synced` (`told`): that is its entries for the sessions this link's vector named (a server
   * lists only those); a session this client holds that its vector did not name came since,
   * from this server or from elsewhere, and then was queued for the server as it came, so it
   * counts as held. Subscribed with neither, the server's vector is taken as it is.
   */
  heldAtSubscribe(told: VersionVector): VersionVector {
    const named = this.#subscribedWith;
    if (named === "every" || named === undefined) return told;
    const held = this.repo.versionVector();
    for (const session in held) {
      if (Object.hasOwn(named, session)) held[session] = told[session] ?? 0;
    }
    return held;
  }

  /**
   * The server's `members`: writers to trust (all of them, or those added; see subscribed).
   * The repository trusts exactly these, on top of the database's own trust. E_PROTOCOL past
   * MAX_WRITERS: a server listing key after key would hold this client's memory without bound.
   */
  members(writers: readonly Uint8Array[], canWrite: boolean): void {
    if (this.#fullListNext) this.#writers = new Set();
    this.#fullListNext = false;
    this.repo.trustWriters(this.#writers);
    for (const key of writers) {
      this.#writers.add(toBase64Url(key));
      if (this.#writers.size > MAX_WRITERS) {
        this.cursor = undefined; // the next subscription, by version vector, lists them anew
        throw new CairnError(
          "E_PROTOCOL",
          `sync ${this.path}: the server lists over ${MAX_WRITERS} writers, more than a client keeps`,
        );
      }
    }
    this.canWrite = canWrite;
  }
}
