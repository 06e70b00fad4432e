/**
 * The rows of sync servers sharing one PostgreSQL (issue #17), on a throwaway cluster with fsync
 * on, servers in Deno processes of their own:
 * - S05: a write through server A appears in a live query of a client of server B;
 * - S06: pushes per second into one repository and into many, through 1 and 3 servers.
 */
import type { TextCtx } from "../contenders/text.ts";
import { countLabel } from "../lib/format.ts";
import { side, type TextWorkload, type Variant } from "../lib/types.ts";
import type { SyncHost } from "../sync/host.ts";
import type { HelperProcess } from "../sync/line_channel.ts";
import type { BenchWorkload } from "./common.ts";
import { SYNC_ROW, syncHost } from "./sync_common.ts";
import { split } from "./sync_fanout.ts";
import { type Latency, liveQueryPair, timed } from "./sync_latency.ts";

/** A cluster and `count` servers on it; `stop` ends them all. */
async function sharedServers(
  host: SyncHost,
  count: number,
): Promise<{ urls: string[]; stop(): Promise<void> }> {
  const cluster = await host.startPostgres();
  const servers: HelperProcess[] = [];
  try {
    const urls: string[] = [];
    for (let i = 0; i < count; i++) {
      const { process, url } = await host.startServer("postgres", cluster.url);
      servers.push(process);
      urls.push(url);
    }
    return {
      urls,
      stop: async () => {
        await Promise.all(servers.map((server) => server.stop()));
        await cluster.stop();
      },
    };
  } catch (err) {
    await Promise.all(servers.map((server) => server.stop()));
    await cluster.stop();
    throw err;
  }
}

function writes(quick: boolean): number {
  return quick ? 100 : 1_000;
}

const S05: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S05.v1",
  title: "Write to live query, across two servers sharing PostgreSQL",
  unit: "ms",
  better: "lower",
  scale: "us",
  variants: (quick): Variant[] => [
    { label: `${countLabel(writes(quick))} writes, A → B`, items: 0, writes: writes(quick) },
  ],
  timed: "As S01, but the writer process is a client of server A and the bench process's " +
    "client one of server B, both servers on one PostgreSQL (fsync on): from handing `write i` " +
    "to the writer until B's client's live query shows it — A verifies, commits (row lock, " +
    "insert, head, pg_notify), acks; B hears the notification, reads the new block, verifies " +
    "it into its cache and sends it live. One write at a time; the latency pass keeps every " +
    "write.",
  fairness: "The same processes and path as S01 plus the second server; PostgreSQL runs on the " +
    "same 2-core machine as the servers and both clients.",
  targets: [{ contender: "cairn", atMost: 50 }],
  context: "issue #17 targets p99 ≤ 50 ms on loopback (the p99 is in the latency table).",
  text: side({
    async setup(ctx: TextCtx, variant: Variant): Promise<Latency> {
      const host = syncHost(ctx);
      const servers = await sharedServers(host, 2);
      const peer = host.startPeer();
      const stop = async () => {
        await peer.stop();
        await servers.stop();
      };
      const pair = await liveQueryPair(peer, servers.urls[0], servers.urls[1], stop);
      return { pair, next: 0, writes: variant.writes as number };
    },
    sample: timed,
    async latency(state: Latency): Promise<number[]> {
      const out: number[] = [];
      for (let k = 0; k < state.writes; k++) out.push((await timed(state)) * 1000);
      return out;
    },
    teardown: (state: Latency) => state.pair.close(),
  }),
};

interface Throughput {
  peers: HelperProcess[];
  ms: number;
  stop(): Promise<void>;
}

/** Writers in S06, each a client writing and waiting for its ack, again and again. */
function writers(quick: boolean): number {
  return quick ? 6 : 12;
}

const S06: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S06.v1",
  title: "Push throughput on PostgreSQL, 1 and 3 servers",
  unit: "ops/s",
  better: "higher",
  scale: "ms",
  variants: (quick): Variant[] =>
    [1, 3].flatMap((servers) =>
      (["one", "many"] as const).map((repositories) => ({
        label: `${servers} server${servers > 1 ? "s" : ""}, ${
          repositories === "one" ? "one repository" : "a repository per writer"
        }`,
        items: 0,
        servers,
        repositories,
        writers: writers(quick),
        ms: quick ? 300 : 2_000,
      }))
    ),
  timed: "Writers (in-memory databases, signed, each with its own link), one client process " +
    "per server with an even share of them, each writer linked to its process's server; all " +
    "servers on one PostgreSQL (fsync on). Each writer writes one item and waits for its ack, " +
    "again and again, for 2 s (quick: 0.3 s), into one shared repository or into a repository " +
    "of its own. A sample: the pushes acknowledged in that time, per second.",
  fairness: "Every process (PostgreSQL, servers, clients, the bench) shares the machine's 2 " +
    "cores, so 3 servers show the cost of coordination through PostgreSQL, not the gain of " +
    "more machines.",
  context: "issue #17 asks how pushes scale with servers and where the limit is (each push " +
    "commits with pg_notify, which serializes commits on a global lock).",
  text: side({
    async setup(ctx: TextCtx, variant: Variant): Promise<Throughput> {
      const host = syncHost(ctx);
      const count = variant.servers as number;
      const servers = await sharedServers(host, count);
      const peers = servers.urls.map(() => host.startPeer());
      const shares = split(variant.writers as number, count);
      await Promise.all(peers.map((peer, p) =>
        peer.request({
          op: "clients",
          url: servers.urls[p],
          count: shares[p],
          writers: shares[p],
          name: `p${p}`,
          apart: variant.repositories === "many",
        })
      ));
      return {
        peers,
        ms: variant.ms as number,
        stop: async () => {
          await Promise.all(peers.map((peer) => peer.stop()));
          await servers.stop();
        },
      };
    },
    async sample(state: Throughput): Promise<number> {
      const writes = await Promise.all(
        state.peers.map((peer) => peer.request<number>({ op: "fanOut", ms: state.ms })),
      );
      return writes.reduce((sum, w) => sum + w, 0) / (state.ms / 1000);
    },
    teardown: (state: Throughput) => state.stop(),
  }),
};

export const SYNC_POSTGRES: readonly BenchWorkload[] = [S05, S06];
