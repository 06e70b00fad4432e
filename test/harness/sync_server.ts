/**
 * A sync server on a free port for server tests (Deno and Node): over `options.dir` when given,
 * else over a scratch directory removed after `run`.
 */
import { createSyncServer, type SyncServer, type SyncServerOptions } from "../../src/server.ts";
import { withTempDirectory } from "./temp_directory.ts";

export async function withSyncServer(
  options: Partial<SyncServerOptions>,
  run: (server: SyncServer) => Promise<void>,
): Promise<void> {
  const { dir } = options;
  if (dir === undefined) {
    return await withTempDirectory(
      "sync",
      (scratch) => withSyncServer({ ...options, dir: scratch }, run),
    );
  }
  const server = await createSyncServer({ port: 0, ...options, dir });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}
