/**
 * What the sync rows (S01–S04) share: the fields of every such row, the process host they need
 * (Deno and Node start processes; the bench page has the runner start them), and a server with
 * one client process.
 */
import type { TextCtx } from "../contenders/text.ts";
import { NotApplicable } from "../lib/types.ts";
import type { ServerKind, SyncHost } from "../sync/host.ts";
import type { HelperProcess } from "../sync/line_channel.ts";

/** The fields every sync row has: Cairn's default profile, no baseline unless a row adds one. */
export const SYNC_ROW = {
  family: "sync",
  contenders: ["cairn"],
  baselines: [],
} as const;

export function syncHost(ctx: TextCtx): SyncHost {
  if (!ctx.syncHost) {
    throw new NotApplicable(
      "the bench page runs the sync rows only when the runner drives it: it starts the server " +
        "and the other clients' processes",
    );
  }
  return ctx.syncHost;
}

/** A server process and a client process of the runtime measured, not yet linked. */
export interface ServerAndPeer {
  server: HelperProcess;
  url: string;
  peer: HelperProcess;
  stop(): Promise<void>;
}

export async function serverAndPeer(host: SyncHost, kind: ServerKind): Promise<ServerAndPeer> {
  const { process: server, url } = await host.startServer(kind);
  const peer = host.startPeer();
  return {
    server,
    url,
    peer,
    stop: async () => {
      await peer.stop();
      await server.stop();
    },
  };
}
