/**
 * Sync servers on one throwaway PostgreSQL cluster (scripts/lib/postgres.ts), in this process:
 * for the PostgreSQL store's tests on Deno and Node. Every server and the cluster are stopped
 * after `run`, whatever it throws.
 */
import { type PostgresCluster, startPostgres } from "../../scripts/lib/postgres.ts";
import { createSyncServer, postgresStore, type SyncServer } from "../../src/server.ts";

export interface PostgresServers {
  readonly cluster: PostgresCluster;
  /** Starts one more server on the cluster: open to every session unless `rules` is "built-in". */
  server(rules?: "open" | "built-in"): Promise<SyncServer>;
}

export async function withPostgresServers(
  run: (servers: PostgresServers) => Promise<void>,
): Promise<void> {
  const cluster = await startPostgres();
  const started: SyncServer[] = [];
  try {
    await run({
      cluster,
      server: async (rules = "open") => {
        const server = await createSyncServer({
          store: postgresStore(cluster.url),
          port: 0,
          open: rules === "open",
        });
        started.push(server);
        return server;
      },
    });
  } finally {
    for (const server of started) await server.close().catch(() => {});
    await cluster.dispose();
  }
}
