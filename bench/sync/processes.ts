/**
 * Starts the sync rows' processes from Deno or Node: the server always in Deno (as
 * `cairndb/server` is most often run), clients in the runtime being measured — Deno runs the
 * client's TypeScript, Node its bundle (bench/drivers/build.ts). The runner starts every runtime
 * in the project's root, which the paths below are relative to.
 */
import process from "node:process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeBlockFile, encodeBlockFile } from "./block_file.ts";
import type { ServerKind, SyncHost } from "./host.ts";
import { type HelperProcess, startHelper } from "./line_channel.ts";
import { startPostgres } from "../../scripts/lib/postgres.ts";

const DENO = "./node_modules/.bin/deno";
export const NODE_PEER_BUNDLE = "build/bench/sync_peer.mjs";

/** A host that also stops, at the end of the run, the processes rows kept for later rows. */
export interface ProcessSyncHost extends SyncHost {
  stopAll(): Promise<void>;
}

export function processSyncHost(runtime: "deno" | "node"): ProcessSyncHost {
  const started = new Set<HelperProcess>();
  const start = (command: string, args: string[], label: string): HelperProcess => {
    const helper = startHelper(command, args, label);
    started.add(helper);
    return helper;
  };
  return {
    async startServer(kind: ServerKind, database?: string) {
      const helper = start(
        DENO,
        ["run", "-A", "bench/sync/server_process.ts", kind, ...(database ? [database] : [])],
        `${kind} server`,
      );
      return { process: helper, url: await helper.request<string>({ op: "url" }) };
    },
    async startPostgres() {
      const cluster = await startPostgres({ fsync: true });
      return { url: cluster.url, stop: () => cluster.dispose() };
    },
    startPeer() {
      return runtime === "deno"
        ? start(DENO, ["run", "-A", "bench/sync/peer_process.ts"], "deno client")
        : start(
          process.execPath,
          ["--disable-warning=ExperimentalWarning", NODE_PEER_BUNDLE],
          "node client",
        );
    },
    async stopAll() {
      await Promise.all([...started].map((helper) => helper.stop()));
      started.clear();
    },
    async saveBlocks(frames) {
      const dir = await mkdtemp(join(tmpdir(), "cairn-blocks-"));
      const path = join(dir, "blocks.bin");
      await writeFile(path, encodeBlockFile(frames));
      return {
        load: async () => decodeBlockFile(new Uint8Array(await readFile(path))),
        remove: () => rm(dir, { recursive: true, force: true }),
      };
    },
  };
}
