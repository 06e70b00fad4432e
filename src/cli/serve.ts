/**
 * `cairndb serve --dir ./data | --store postgres://… [--port 8787] [--host 127.0.0.1] [--open]`
 * runs a sync server (on files in a directory, or on PostgreSQL shared with other servers)
 * until SIGINT or SIGTERM, then sends goaway to its clients, lets them drain and exits 0.
 */
import { createSyncServer } from "../sync/server/create_server.ts";
import { postgresStore } from "../sync/server/postgres_store.ts";
import type { CliIo } from "./io.ts";
import { type Arguments, EXIT, UsageError } from "./usage.ts";

export const SERVE_OPTIONS = ["dir", "store", "port", "host", "open"];
export const SERVE_FLAGS = ["open"];

/** Serves until stopped; the exit comes from the stop handler. */
export async function serve(io: CliIo, args: Arguments): Promise<number | undefined> {
  const dir = args.options.get("dir");
  const store = args.options.get("store");
  if ((dir === undefined) === (store === undefined) || args.positional.length > 0) {
    throw new UsageError(
      "cairndb serve needs --dir <directory> or --store postgres://…, and no other argument",
    );
  }
  if (store !== undefined && !/^postgres(ql)?:\/\//.test(store)) {
    throw new UsageError("cairndb serve: --store must be a postgres:// URL");
  }
  const port = Number(args.options.get("port") ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError("cairndb serve: --port must be a port number");
  }
  const server = await createSyncServer({
    ...(store === undefined ? { dir } : { store: postgresStore(store) }),
    port,
    hostname: args.options.get("host") ?? "127.0.0.1",
    open: args.options.has("open"),
  });
  await io.out(`${server.url}\n`);
  let stopping = false;
  io.onStop(() => {
    if (stopping) return;
    stopping = true;
    server.close().then(async () => {
      await io.out("stopped\n");
      io.exit(EXIT.ok);
    }, (err) => {
      io.error(String(err));
      io.exit(EXIT.failed);
    });
  });
  return undefined;
}
