/**
 * Starts the sync rows' processes from Deno or Node: the server always in Deno (as
 * `cairndb/server` is most often run), clients in the runtime being measured — Deno runs the
 * client's TypeScript, Node its bundle (bench/drivers/build.ts). The runner starts every runtime
 * in the project's root, which the paths below are relative to.
 */
import process from "node:process";
import type { ServerKind, SyncHost } from "./host.ts";
import { startHelper } from "./line_channel.ts";

const DENO = "./node_modules/.bin/deno";
export const NODE_PEER_BUNDLE = "build/bench/sync_peer.mjs";

export function processSyncHost(runtime: "deno" | "node"): SyncHost {
  return {
    async startServer(kind: ServerKind) {
      const helper = startHelper(
        DENO,
        ["run", "-A", "bench/sync/server_process.ts", kind],
        `${kind} server`,
      );
      return { process: helper, url: await helper.request<string>({ op: "url" }) };
    },
    startPeer() {
      return runtime === "deno"
        ? startHelper(DENO, ["run", "-A", "bench/sync/peer_process.ts"], "deno client")
        : startHelper(
          process.execPath,
          ["--disable-warning=ExperimentalWarning", NODE_PEER_BUNDLE],
          "node client",
        );
    },
  };
}
