/**
 * The connection every server LISTENs on, for two channels: `cairn_blocks`, whose payload is
 * `<head>:<repository>` (sent at the commit of a push), and `cairn_rules`, whose payload is the
 * repository whose access rules a commit changed. When the connection is lost (PostgreSQL
 * restarted, the network cut), it connects again with backoff and LISTENs again, then says so:
 * notifications sent meanwhile are lost, so the store re-reads every repository it has open and
 * every repository's rules. A connection can also die without a word (a NAT or load balancer
 * dropping an idle one, a failover without a reset): it is asked `SELECT 1` every CHECK_MS, and
 * one that leaves a check unanswered until the next is taken for lost.
 */
import type { PostgresConnection } from "./postgres_pool.ts";

export const BLOCKS_CHANNEL = "cairn_blocks";
export const RULES_CHANNEL = "cairn_rules";

const FIRST_RETRY_MS = 50;
const LAST_RETRY_MS = 2_000;
const CHECK_MS = 15_000;

export interface ListenerEvents {
  /** Another push committed `head` as a repository's head. */
  blocks(repository: string, head: number): void;
  /** Another commit changed a repository's access rules. */
  rules(repository: string): void;
  /** Listening again after a lost connection. */
  reconnected(): void;
}

export class StoreListener {
  readonly #connect: () => PostgresConnection;
  readonly #events: ListenerEvents;
  readonly #checkMs: number;
  #connection: PostgresConnection | undefined;
  #closed = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #check: ReturnType<typeof setInterval> | undefined;

  private constructor(
    connect: () => PostgresConnection,
    events: ListenerEvents,
    checkMs: number,
  ) {
    this.#connect = connect;
    this.#events = events;
    this.#checkMs = checkMs;
  }

  /** Resolves once listening (the first connection must succeed). `checkMs`: for tests. */
  static async start(
    connect: () => PostgresConnection,
    events: ListenerEvents,
    checkMs = CHECK_MS,
  ): Promise<StoreListener> {
    const listener = new StoreListener(connect, events, checkMs);
    await listener.#listen();
    return listener;
  }

  async #listen(): Promise<void> {
    const connection = this.#connect();
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      clearInterval(this.#check);
      connection.end().catch(() => {});
      if (this.#connection === connection) this.#connection = undefined;
      this.#reconnect(FIRST_RETRY_MS);
    };
    connection.on("notification", ({ channel, payload = "" }) => {
      if (channel === RULES_CHANNEL) {
        this.#events.rules(payload);
        return;
      }
      const at = payload.indexOf(":");
      if (at > 0) this.#events.blocks(payload.slice(at + 1), Number(payload.slice(0, at)));
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${BLOCKS_CHANNEL}`);
      await connection.query(`LISTEN ${RULES_CHANNEL}`);
    } catch (err) {
      lost = true;
      connection.end().catch(() => {});
      throw err;
    }
    connection.on("error", onLost);
    connection.on("end", onLost);
    if (this.#closed) {
      await connection.end().catch(() => {});
      return;
    }
    this.#connection = connection;
    let checking = false;
    this.#check = setInterval(() => {
      if (checking) return onLost(); // the last check is still unanswered
      checking = true;
      connection.query("SELECT 1").then(() => checking = false, onLost);
    }, this.#checkMs);
  }

  #reconnect(delayMs: number): void {
    if (this.#closed) return;
    this.#retry = setTimeout(async () => {
      try {
        await this.#listen();
      } catch {
        this.#reconnect(Math.min(delayMs * 2, LAST_RETRY_MS));
        return;
      }
      if (!this.#closed) this.#events.reconnected();
    }, delayMs);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#check);
    await this.#connection?.end().catch(() => {});
    this.#connection = undefined;
  }
}
