/**
 * `sync()` in a tab of a stored database shared by several tabs (docs/browser.md, "Many tabs"):
 * only the tab that serves the others holds a connection to the server, from the stored database
 * it serves from; the others show its status and wait on it. Their blocks reach the server
 * because the serving tab persists them into that database, which the connection pushes from;
 * the server's blocks reach them as every block of that database does (the tabs' `blocks`).
 *
 * - **Serving** (the tab that leads): a connection on the stored database, whose status and
 *   errors are this link's, posted to the other tabs (`sync-status`) as they change and when
 *   asked (`sync-ask`); `synced()` of another tab is answered (`sync-wait` → `sync-done`).
 * - **Following**: no socket. The status is the serving tab's, asked for at start and whenever a
 *   tab starts serving; `synced()` waits until this tab's blocks are persisted by the serving tab
 *   (a flush), then until the server holds everything that tab holds.
 * - **Promoted**: a follower granted the lead opens a connection on the storage it now serves
 *   from; one that stops serving goes back to following.
 * - **Alone**: when the serving tab holds no connection to this server (its page did not call
 *   `sync()` with this URL, or not yet, or its connection closed: `sync-absent`), this tab
 *   connects itself, from its own database, until a serving tab reports a connection to the
 *   server (its `sync-status`) or this tab starts serving. Blocks its own connection left
 *   unacknowledged are not lost: the serving tab holds them too, and its connection pushes them.
 */
import { CairnError, isCairnError } from "../core/errors.ts";
import type { Cairn, TabSyncEnvironment } from "../db/database.ts";
import { listenForMessages, type TabChannel } from "../tabs/repository_link.ts";
import type { TabMessage, TabSyncStatus } from "../tabs/tab_messages.ts";
import { EventedLink } from "./link_events.ts";
import { remoteError } from "./remote_error.ts";
import { closedError, type SyncLink } from "./sync_link.ts";

interface Wait {
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * The id of a follower's next `sync-wait`, shared by every link of the page: the serving tab
 * answers by tab, URL and id, so two links to one server numbering their waits alike settled
 * each other's.
 */
let nextWaitId = 1;

export class TabSyncLink extends EventedLink implements SyncLink {
  readonly #url: string;
  readonly #environment: TabSyncEnvironment;
  readonly #connect: (db: Cairn) => SyncLink;
  readonly #channel: TabChannel & { close(): void };
  readonly #stop: (() => void)[] = [];
  /** The connection this tab holds: serving, or alone. */
  #connection: { target: SyncLink; stop: () => void } | undefined;
  #alone = false;
  /** The serving tab's count, while following. */
  #leaderUnacknowledged = 0;
  #lastLeaderError: string | null = null;
  readonly #waits = new Map<number, Wait>();
  /** Connections dropped so far: a wait that ends E_CLOSED across a drop is issued again. */
  #dropped = 0;

  constructor(
    url: string,
    environment: TabSyncEnvironment,
    connect: (db: Cairn) => SyncLink,
  ) {
    super();
    this.#url = url;
    this.#environment = environment;
    this.#connect = connect;
    this.#channel = environment.openChannel();
    // Messages that fail to decode are reported by the tab's coordinator, which hears them too.
    this.#stop.push(listenForMessages(this.#channel, (message) => this.#heard(message), () => {}));
    this.#stop.push(environment.watchHost((host) => this.#hostChanged(host)));
  }

  /** Serving or alone: this tab's connection's count; following: the serving tab's. */
  get unacknowledged(): number {
    return this.#connection?.target.unacknowledged ?? this.#leaderUnacknowledged;
  }

  /**
   * E_CLOSED from a connection this link dropped (the tab stopped serving or being alone, with
   * the wait on it or moved onto it) is a hand-over, not this link closing: the wait is issued
   * again on what serves this tab now. Once the link closes, or if the connection closed on its
   * own, E_CLOSED stands.
   */
  async synced(): Promise<void> {
    for (;;) {
      const dropped = this.#dropped;
      try {
        return await this.#syncedOnce();
      } catch (err) {
        if (!isCairnError(err, "E_CLOSED") || this.#closed() || this.#dropped === dropped) {
          throw err;
        }
      }
    }
  }

  /** One wait, on this tab's connection or on the serving tab. */
  async #syncedOnce(): Promise<void> {
    if (this.#closed()) throw closedError();
    const connected = this.#connected();
    if (connected) return await connected.synced();
    await this.#environment.flush();
    if (this.#closed()) throw closedError();
    // Became the one that connects during the flush.
    const since = this.#connected();
    if (since) return await since.synced();
    const id = nextWaitId++;
    return await new Promise<void>((resolve, reject) => {
      this.#waits.set(id, { resolve, reject });
      this.#post({ type: "sync-wait", from: this.#environment.tab, url: this.#url, id });
    });
  }

  close(): Promise<void> {
    if (this.#closed()) return Promise.resolve();
    this.events.setStatus("closed");
    for (const stop of this.#stop) stop();
    const connection = this.#dropConnection();
    this.#channel.close();
    for (const wait of this.#waits.values()) wait.reject(closedError());
    this.#waits.clear();
    return connection?.close() ?? Promise.resolve();
  }

  #connected(): SyncLink | undefined {
    return this.#connection?.target;
  }

  #closed(): boolean {
    return this.events.status === "closed";
  }

  #hostChanged(host: Cairn | undefined): void {
    if (this.#closed() || (!host && this.#alone)) return;
    this.#alone = false;
    this.#dropConnection()?.close().catch(() => {});
    if (host) {
      this.#useConnection(host, true);
    } else {
      this.events.setStatus("connecting");
      this.#ask();
    }
  }

  /** Connects from `db`; `serving`: answers the other tabs about it too. */
  #useConnection(db: Cairn, serving: boolean): void {
    const target = this.#connect(db);
    const stops = [
      target.on("status", (status) => {
        // A connection this link closes is not this link closing.
        if (status === "closed") return;
        this.events.setStatus(status);
        if (serving) this.#tellStatus();
      }),
      target.on("error", (error) => {
        this.events.report(error);
        if (serving) this.#tellStatus();
      }),
    ];
    if (serving) {
      stops.push(this.#environment.answer(this.#url, {
        tellStatus: () => this.#tellStatus(),
        synced: () => target.synced(),
      }));
    }
    this.#connection = { target, stop: () => stops.forEach((stop) => stop()) };
    if (target.status !== "closed") this.events.setStatus(target.status);
    if (serving) this.#tellStatus();
    // Waits asked of the last serving tab are this connection's now.
    for (const [id, wait] of this.#waits) {
      this.#waits.delete(id);
      target.synced().then(wait.resolve, wait.reject);
    }
  }

  /** Ends the connection's events (and answers); returns it for the caller to close. */
  #dropConnection(): SyncLink | undefined {
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection) this.#dropped++;
    connection?.stop();
    return connection?.target;
  }

  #tellStatus(): void {
    const target = this.#connection?.target;
    if (!target || target.status === "closed") return;
    const error = this.events.lastError;
    this.#post({
      type: "sync-status",
      leader: this.#environment.tab,
      url: this.#url,
      status: target.status as TabSyncStatus,
      unacknowledged: target.unacknowledged,
      error: error ? error.message.slice(0, 4096) : null,
    });
  }

  #ask(): void {
    this.#post({ type: "sync-ask", from: this.#environment.tab, url: this.#url });
  }

  #post(message: TabMessage): void {
    if (!this.#closed()) this.#channel.post(message);
  }

  #heard(message: TabMessage): void {
    if (this.#closed()) return;
    const tab = this.#environment.tab;
    // The serving tab's reports, from the leader this tab knows only: a former leader, thawed
    // and not yet told, would show its old connection's status and end this tab's own one.
    const fromServing = message.type === "sync-status" && message.url === this.#url &&
      this.#environment.isLeader(message.leader);
    if (this.#alone && fromServing) {
      // The serving tab connected after all (its page called sync() after this tab asked).
      this.#alone = false;
      this.#dropConnection()?.close().catch(() => {});
    }
    if (this.#connection) return;
    if (message.type === "serving") {
      // A new tab serves: ask it, and hand it the waits the last one left unanswered.
      this.#ask();
      for (const id of this.#waits.keys()) {
        this.#post({ type: "sync-wait", from: tab, url: this.#url, id });
      }
    } else if (fromServing) {
      this.#leaderUnacknowledged = message.unacknowledged;
      if (message.error !== null && message.error !== this.#lastLeaderError) {
        this.events.report(leaderError(message.error));
      }
      this.#lastLeaderError = message.error;
      this.events.setStatus(message.status);
    } else if (message.type === "sync-absent" && message.to === tab && message.url === this.#url) {
      this.#alone = true;
      this.#useConnection(this.#environment.own, false);
    } else if (message.type === "sync-done" && message.to === tab && message.url === this.#url) {
      const wait = this.#waits.get(message.id);
      if (!wait) return;
      this.#waits.delete(message.id);
      if (message.error === null) wait.resolve();
      else wait.reject(leaderError(message.error));
    }
  }
}

/** An error the serving tab reported ("CODE: message"), with its code when it is one of ours. */
function leaderError(text: string): CairnError {
  const match = /^(E_[A-Z_]+): ([\s\S]*)$/.exec(text);
  return match
    ? remoteError(match[1], match[2], "the serving tab's sync link")
    : new CairnError("E_PROTOCOL", `the serving tab's sync link: ${text}`);
}
