/**
 * The PostgreSQL driver, `pg` (node-postgres), loaded only when a PostgreSQL store is opened:
 * applications on the files store never load it, and it is an optional peer dependency. Picked
 * over `postgres` (postgres.js) by bench/micro/postgres_drivers.ts (docs/deploy.md).
 */
import { CairnError } from "../../core/errors.ts";

/** What the store asks of a connection (a pooled client or the listener's own). */
export interface PostgresClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

export interface PooledClient extends PostgresClient {
  release(err?: Error | boolean): void;
}

export interface PostgresPool extends PostgresClient {
  connect(): Promise<PooledClient>;
  end(): Promise<void>;
}

/** A connection of its own (LISTEN needs one that stays open). */
export interface PostgresConnection extends PostgresClient {
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(
    event: "notification",
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  on(event: "error" | "end", listener: (err?: Error) => void): unknown;
}

/**
 * Runs `body` in a transaction on a pooled connection: COMMIT after it. When it throws, a
 * refusal of the input (a CairnError: the connection is sound) is rolled back and the connection
 * goes back to the pool; any other failure (a lost connection, a query that timed out) drops the
 * connection, which ends the transaction too. A ROLLBACK there waited behind the query that had
 * not answered, for a second timeout.
 */
export async function inTransaction<T>(
  pool: PostgresPool,
  body: (client: PooledClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let dropped: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    if (err instanceof CairnError) {
      await client.query("ROLLBACK").catch((rollback) => (dropped = rollback));
    } else dropped = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(dropped);
  }
}

/**
 * How long a server's session may sit idle inside a transaction before PostgreSQL ends it. A
 * push holds its repository's row lock for milliseconds; a server frozen or cut off inside one
 * (a paused VM, a partition) would hold it, and stall every server's pushes to that repository,
 * until TCP noticed (two hours by default). Ended, its lock is freed and its own push is retried.
 */
export const IDLE_IN_TRANSACTION_MS = 30_000;

/**
 * How long a query may go unanswered before its connection is taken as gone (and dropped; the
 * step that ran it is retried on another). A PostgreSQL host frozen or cut off answers nothing
 * and closes nothing, and pushes waited on it for as long as it stayed so (until TCP noticed:
 * two hours by default). Longer than a wait for a row lock, which another server's session
 * holds at most until IDLE_IN_TRANSACTION_MS ends it.
 */
export const QUERY_TIMEOUT_MS = 45_000;

/** How long opening a connection, or waiting for a free one of the pool, may take. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** The bounds above; tests ask for shorter ones. */
export interface PostgresTimeouts {
  idleInTransactionMs: number;
  queryTimeoutMs: number;
  connectTimeoutMs: number;
}

export const POSTGRES_TIMEOUTS: PostgresTimeouts = {
  idleInTransactionMs: IDLE_IN_TRANSACTION_MS,
  queryTimeoutMs: QUERY_TIMEOUT_MS,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
};

export interface PostgresDriver {
  pool(url: string, max: number, timeouts?: Partial<PostgresTimeouts>): PostgresPool;
  connection(url: string, timeouts?: Partial<PostgresTimeouts>): PostgresConnection;
}

export async function loadDriver(): Promise<PostgresDriver> {
  let pg;
  try {
    // A variable specifier keeps bundlers from pulling the driver into builds that never use it.
    const name = "pg";
    pg = (await import(name)).default;
  } catch (err) {
    throw new CairnError(
      "E_BAD_ARGUMENT",
      "the PostgreSQL store needs the pg package: npm install pg",
      { cause: err },
    );
  }
  return {
    pool: (url, max, timeouts) => {
      const { idleInTransactionMs, queryTimeoutMs, connectTimeoutMs } = {
        ...POSTGRES_TIMEOUTS,
        ...timeouts,
      };
      return lenientPool(
        new pg.Pool({
          connectionString: url,
          max,
          idle_in_transaction_session_timeout: idleInTransactionMs,
          query_timeout: queryTimeoutMs,
          connectionTimeoutMillis: connectTimeoutMs,
          keepAlive: true,
        }),
      );
    },
    connection: (url, timeouts) => {
      const { queryTimeoutMs, connectTimeoutMs } = { ...POSTGRES_TIMEOUTS, ...timeouts };
      const connection = new pg.Client({
        connectionString: url,
        query_timeout: queryTimeoutMs,
        connectionTimeoutMillis: connectTimeoutMs,
        keepAlive: true,
      });
      // Lost while no query runs: node-postgres emits "error", fatal to the process when
      // nobody listens. The listener's own handler (added once listening) reconnects.
      connection.on("error", () => {});
      return connection;
    },
  };
}

interface DriverClient extends PooledClient {
  on(event: "error", listener: () => void): unknown;
  off(event: "error", listener: () => void): unknown;
}

/**
 * A connection lost (PostgreSQL restarted) emits "error" when no query of it runs: idle in the
 * pool, or checked out between two statements. Nobody listening would end the process; the
 * next query on it fails instead, and the transaction is retried on another.
 */
function lenientPool(
  pool: PostgresPool & { on(event: "error", listener: () => void): unknown },
): PostgresPool {
  const ignore = () => {};
  pool.on("error", ignore);
  return {
    query: (text, values) => pool.query(text, values),
    end: () => pool.end(),
    connect: async () => {
      const client = await pool.connect() as DriverClient;
      client.on("error", ignore);
      return {
        query: (text, values) => client.query(text, values),
        release: (err) => {
          client.off("error", ignore);
          client.release(err);
        },
      };
    },
  };
}
