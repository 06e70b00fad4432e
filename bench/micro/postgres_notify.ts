/**
 * What the commit-time NOTIFY costs the PostgreSQL store. A transaction that called pg_notify
 * takes one lock for the whole cluster at commit and holds it until the commit is flushed, so such
 * commits are made one at a time where plain ones share a WAL flush (group commit). This times
 * the store's push transaction (lock the repository row, insert one 1 KiB block, move the head,
 * commit) with and without `pg_notify`, with K connections each pushing into its own repository
 * in a loop, on a throwaway cluster with fsync on (the real cost: the lock is held over the
 * flush). One LISTENing connection, as a server has. Variants alternate round by round; every
 * round is printed, and the median of the rounds per variant.
 * Run: ./node_modules/.bin/deno run -A bench/micro/postgres_notify.ts
 */
import process from "node:process";
import pg from "pg";
import { startPostgres } from "../../scripts/lib/postgres.ts";

const ROUNDS = 5;
const ROUND_MS = 2_000;
const WRITERS = [1, 4, 16];
const BLOCK_BYTES = 1024;

type Client = InstanceType<typeof pg.Client>;

async function push(client: Client, repository: string, notify: boolean): Promise<void> {
  await client.query("BEGIN");
  const { rows } = await client.query(
    "SELECT head FROM repositories WHERE path = $1 FOR UPDATE",
    [repository],
  );
  const head = Number(rows[0].head) + 1;
  await client.query("INSERT INTO blocks VALUES ($1, $2, $3)", [
    repository,
    head,
    crypto.getRandomValues(new Uint8Array(BLOCK_BYTES)),
  ]);
  await client.query("UPDATE repositories SET head = $2 WHERE path = $1", [repository, head]);
  if (notify) await client.query("SELECT pg_notify('cairn_blocks', $1)", [`${head}:${repository}`]);
  await client.query("COMMIT");
}

/** Commits per second of `clients.length` loops pushing for ROUND_MS. */
async function round(clients: Client[], notify: boolean): Promise<number> {
  const end = performance.now() + ROUND_MS;
  let commits = 0;
  await Promise.all(clients.map(async (client, i) => {
    while (performance.now() < end) {
      await push(client, `/r${i}`, notify);
      commits++;
    }
  }));
  return commits / (ROUND_MS / 1000);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const runtime = "Deno" in globalThis ? "Deno" : `Node ${process.versions.node}`;
const cluster = await startPostgres({ fsync: true });
const listener = new pg.Client({ connectionString: cluster.url });
let notified = 0;
const clients: Client[] = [];
try {
  await listener.connect();
  await listener.query(
    "CREATE TABLE repositories (path text PRIMARY KEY, head bigint NOT NULL); " +
      "CREATE TABLE blocks (repository text, position bigint, payload bytea, " +
      "PRIMARY KEY (repository, position))",
  );
  listener.on("notification", () => notified++);
  await listener.query("LISTEN cairn_blocks");
  for (let i = 0; i < Math.max(...WRITERS); i++) {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    await client.query("INSERT INTO repositories VALUES ($1, 0)", [`/r${i}`]);
    clients.push(client);
  }
  console.log(
    `pushes committed per second, fsync on, ${runtime}, ${ROUNDS} rounds of ${ROUND_MS} ms`,
  );
  for (const writers of WRITERS) {
    const rates = { plain: [] as number[], notify: [] as number[] };
    await round(clients.slice(0, writers), false); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      // Alternating which goes first, so drift on the machine does not favour one.
      for (const notify of r % 2 ? [true, false] : [false, true]) {
        rates[notify ? "notify" : "plain"].push(await round(clients.slice(0, writers), notify));
      }
    }
    const [plain, notify] = [median(rates.plain), median(rates.notify)];
    console.log(
      `  ${writers} writer(s): without NOTIFY ${plain.toFixed(0)}/s ` +
        `[${rates.plain.map((x) => x.toFixed(0)).join(", ")}], with NOTIFY ${
          notify.toFixed(0)
        }/s ` +
        `[${rates.notify.map((x) => x.toFixed(0)).join(", ")}]: ${(notify / plain).toFixed(2)}×`,
    );
  }
  console.log(`  (${notified} notifications heard)`);
} finally {
  for (const client of clients) await client.end().catch(() => {});
  await listener.end().catch(() => {});
  await cluster.dispose();
}
