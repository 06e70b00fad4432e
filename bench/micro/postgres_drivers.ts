/**
 * Which PostgreSQL driver the sync server's PostgreSQL store uses: `postgres` (postgres.js) or
 * `pg` (node-postgres), timed on the two statements shapes the store runs, with the same SQL and
 * parameters for both, on a throwaway cluster (fsync off: the driver's cost, not the disk's).
 * - push: BEGIN; lock the repository row; insert N blocks of 1 KiB; update the head; pg_notify;
 *   COMMIT (N = 1 and 16), one after another;
 * - push ×8: eight such transactions in flight at once on eight repositories (pool of 8);
 * - read: 1000 blocks of 1 KiB after a position, in position order.
 * Run: ./node_modules/.bin/deno run -A bench/micro/postgres_drivers.ts
 *      ./node_modules/.bin/node bench/micro/postgres_drivers.ts
 */
import process from "node:process";
import { startPostgres } from "../../scripts/lib/postgres.ts";

const SAMPLES = 300;
const READ_BLOCKS = 1000;
const BLOCK_BYTES = 1024;

/** What both drivers are driven through. */
interface Driver {
  name: string;
  /** Runs `body` in one transaction on one connection. */
  transaction(body: (query: Query) => Promise<void>): Promise<void>;
  query: Query;
  end(): Promise<void>;
}
type Query = (text: string, values?: unknown[]) => Promise<Record<string, unknown>[]>;

async function postgresJs(url: string): Promise<Driver> {
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, { max: 8, onnotice: () => {} });
  const on = (runner: typeof sql): Query => (text, values = []) =>
    runner.unsafe(text, values as never[]) as unknown as Promise<Record<string, unknown>[]>;
  return {
    name: "postgres 3.4",
    transaction: async (body) => {
      await sql.begin((tx) => body(on(tx as unknown as typeof sql)));
    },
    query: on(sql),
    end: () => sql.end(),
  };
}

async function nodePostgres(url: string): Promise<Driver> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  return {
    name: "pg 8.23",
    transaction: async (body) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await body(async (text, values) => (await client.query(text, values)).rows);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      } finally {
        client.release();
      }
    },
    query: async (text, values) => (await pool.query(text, values)).rows,
    end: () => pool.end(),
  };
}

const SCHEMA = `
  CREATE TABLE repositories (path text PRIMARY KEY, head bigint NOT NULL);
  CREATE TABLE blocks (
    repository text NOT NULL, session text NOT NULL, seq bigint NOT NULL,
    hash bytea NOT NULL, payload bytea NOT NULL, position bigint NOT NULL,
    PRIMARY KEY (repository, session, seq), UNIQUE (repository, position));
`;

let sessionCounter = 0;

async function push(driver: Driver, repository: string, blocks: number): Promise<void> {
  const session = `s${sessionCounter++}`;
  await driver.transaction(async (query) => {
    const [{ head }] = await query(
      "SELECT head FROM repositories WHERE path = $1 FOR UPDATE",
      [repository],
    );
    const values: unknown[] = [];
    const rows: string[] = [];
    for (let i = 0; i < blocks; i++) {
      const at = values.length;
      rows.push(`($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6})`);
      values.push(
        repository,
        session,
        i + 1,
        crypto.getRandomValues(new Uint8Array(32)),
        crypto.getRandomValues(new Uint8Array(BLOCK_BYTES)),
        Number(head) + i + 1,
      );
    }
    await query(
      `INSERT INTO blocks (repository, session, seq, hash, payload, position) VALUES ${rows}`,
      values,
    );
    await query("UPDATE repositories SET head = $2 WHERE path = $1", [
      repository,
      Number(head) + blocks,
    ]);
    await query("SELECT pg_notify('cairn_blocks', $1)", [`${repository}:${Number(head) + blocks}`]);
  });
}

async function timed(label: string, samples: number, step: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 20; i++) await step();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await step();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  console.log(`  ${label}: p50 ${at(0.5).toFixed(3)} ms, p99 ${at(0.99).toFixed(3)} ms`);
}

const runtime = "Deno" in globalThis ? "Deno" : `Node ${process.versions.node}`;
const cluster = await startPostgres();
try {
  for (const open of [postgresJs, nodePostgres]) {
    const driver = await open(cluster.url);
    try {
      await driver.query("DROP TABLE IF EXISTS blocks, repositories");
      for (const statement of SCHEMA.split(";").filter((s) => s.trim())) {
        await driver.query(statement);
      }
      const repositories = Array.from({ length: 8 }, (_, i) => `/r${i}`);
      for (const path of repositories) {
        await driver.query("INSERT INTO repositories VALUES ($1, 0)", [path]);
      }
      console.log(`${driver.name} on ${runtime}`);
      await timed("push of 1 block", SAMPLES, () => push(driver, "/r0", 1));
      await timed("push of 16 blocks", SAMPLES, () => push(driver, "/r0", 16));
      await timed(
        "8 pushes of 1 block at once (per batch)",
        SAMPLES,
        () => Promise.all(repositories.map((path) => push(driver, path, 1))).then(() => {}),
      );
      await timed(`read of ${READ_BLOCKS} blocks`, 50, async () => {
        const rows = await driver.query(
          "SELECT position, payload FROM blocks WHERE repository = $1 AND position > $2 " +
            "ORDER BY position LIMIT $3",
          ["/r0", 100, READ_BLOCKS],
        );
        if (rows.length !== READ_BLOCKS) throw new Error(`read ${rows.length} rows`);
      });
    } finally {
      await driver.end();
    }
  }
} finally {
  await cluster.dispose();
}
