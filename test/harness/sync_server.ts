/** A sync server on a free port over a scratch directory, for server tests (Deno and Node). */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSyncServer, type SyncServer, type SyncServerOptions } from "../../src/server.ts";

export async function withSyncServer(
  options: Partial<SyncServerOptions>,
  run: (server: SyncServer, dir: string) => Promise<void>,
  { keepDir = false } = {},
): Promise<void> {
  const dir = options.dir ?? await mkdtemp(join(tmpdir(), "cairn-sync-"));
  const server = await createSyncServer({ port: 0, ...options, dir });
  try {
    await run(server, dir);
  } finally {
    await server.close();
    if (options.dir === undefined && !keepDir) await rm(dir, { recursive: true, force: true });
  }
}
