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
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** A connection of its own (LISTEN needs one that stays open). */
export interface PostgresConnection extends PostgresClient {
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: "notification", listener: (message: { payload?: string }) => void): unknown;
  on(event: "error" | "end", listener: (err?: Error) => void): unknown;
}

export interface PostgresDriver {
  pool(url: string, max: number): PostgresPool;
  connection(url: string): PostgresConnection;
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
    pool: (url, max) => new pg.Pool({ connectionString: url, max }),
    connection: (url) => new pg.Client({ connectionString: url }),
  };
}
