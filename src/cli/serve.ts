/**
 * `cairndb serve --dir ./data [--port 8787] [--host 127.0.0.1] [--open]` runs a sync server
 * until SIGINT or SIGTERM, then sends goaway to its clients, lets them drain and exits 0.
 */
import { createSyncServer } from "../sync/server/create_server.ts";
import type { CliIo } from "./io.ts";
import { type Arguments, EXIT, UsageError } from "./usage.ts";

export const SERVE_OPTIONS = ["dir", "port", "host", "open"];
export const SERVE_FLAGS = ["open"];

/** Serves until stopped; the exit comes from the stop handler. */
export async function serve(io: CliIo, args: Arguments): Promise<number | undefined> {
  const dir = args.options.get("dir");
  if (dir === undefined || args.positional.length > 0) {
    throw new UsageError("cairndb serve needs --dir <directory> and no other argument");
  }
  const port = Number(args.options.get("port") ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError("cairndb serve: --port must be a port number");
  }
  const server = await createSyncServer({
    dir,
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
