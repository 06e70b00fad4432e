/**
 * The rows of sync servers sharing one PostgreSQL (issue #17), on a throwaway cluster with fsync
 * on, servers in Deno processes of their own:
 * - S05: a write through server A appears in a live query of a client of server B;
 * - S06: pushes per second into one repository and into many, through 1 and 3 servers;
 * - S07: S03 on PostgreSQL: a new client catches up through a server that never held the
 *   repository, so the server reads it from PostgreSQL first;
 * - S07b: that client's first push, which waits for the server to verify the repository.
 */
import { ItemSchema } from "../contenders/cairn.ts";
import type { TextCtx } from "../contenders/text.ts";
import { itemValues } from "../lib/items.ts";
import { countLabel } from "../lib/format.ts";
import { side, type TextWorkload, type Variant } from "../lib/types.ts";
import type { SyncHost } from "../sync/host.ts";
import type { HelperProcess } from "../sync/line_channel.ts";
import { type BenchWorkload, big, itemsLabel } from "./common.ts";
import { now } from "../lib/timer.ts";
import { caughtUp } from "./sync_catchup.ts";
import { SYNC_ROW, syncHost } from "./sync_common.ts";
import { split } from "./sync_fanout.ts";
import { everyWrite, type Latency, liveQueryPair, timed, writes } from "./sync_latency.ts";

interface SharedServers {
  urls: string[];
  /** The cluster's URL, for more servers. */
  database: string;
  stop(): Promise<void>;
}

/** A cluster and `count` servers on it; `stop` ends them all. */
async function sharedServers(host: SyncHost, count: number): Promise<SharedServers> {
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
      database: cluster.url,
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
    latency: everyWrite,
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

interface ColdCatchUp {
  host: SyncHost;
  servers: SharedServers;
  peer: HelperProcess;
  items: number;
  /** S07b's samples so far: each pushes an item of its own. */
  pushes: number;
}

const S07: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S07.v1",
  title: "Catch-up of a new client from PostgreSQL, through a server that never held it",
  unit: "ms",
  better: "lower",
  scale: "long",
  variants: coldVariants,
  timed: "As S03 (bulk-written repository), but the repository was written through server A " +
    "on PostgreSQL and the new client is linked to server B, a process started for the sample " +
    "(before the clock) that has never opened the repository: B reads every block's row from " +
    "PostgreSQL and serves the client's catch-up (as in S03) from them (B verifies the blocks " +
    "again only before its first push, not timed here); the clock stops when the client has " +
    "every item.",
  fairness: "S03's figure for the same items is one server on files that holds the repository " +
    "in memory already; the difference is the cold read through PostgreSQL.",
  targets: [{ contender: "cairn", atMost: 1_000 }],
  context: "issue #17 asks for S03 on PostgreSQL.",
  text: throughNewServer(async (state, url) => {
    const start = now();
    const observer = await caughtUp(url, state.items);
    const ms = now() - start;
    await observer.close();
    return ms;
  }),
};

const S07_PUSH: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S07b.v1",
  title: "First push through a server that just opened the repository from PostgreSQL",
  unit: "ms",
  better: "lower",
  scale: "long",
  variants: coldVariants,
  timed: "S07's new client, caught up through server B (outside the clock), writes one item; " +
    "timed from the write until B acknowledges it. B opened the repository for the catch-up " +
    "from PostgreSQL's rows without verifying its blocks; it verifies them all into its cache " +
    "before the first push it takes, so this write waits for that, then for B's transaction.",
  fairness: "S07 leaves this out: the verification a server did at open, before the catch-up, " +
    "it now does at the first push. Every later push finds the cache verified (S05, S06).",
  context: "Where the verification S07 used to wait for went (issue #17's S07).",
  text: throughNewServer(async (state, url) => {
    const observer = await caughtUp(url, state.items);
    const start = now();
    observer.repo.create(ItemSchema, itemValues(state.pushes), { key: `push ${state.pushes++}` });
    await observer.link.synced();
    const ms = now() - start;
    await observer.close();
    return ms;
  }),
};

function coldVariants(quick: boolean): Variant[] {
  return [{ label: `${itemsLabel(big(quick))}, 1 bulk write`, items: big(quick) }];
}

/** A cluster, server A on it, and a client process that wrote `variant.items` items through A. */
async function coldRepository(ctx: TextCtx, variant: Variant): Promise<ColdCatchUp> {
  const host = syncHost(ctx);
  const servers = await sharedServers(host, 1);
  const peer = host.startPeer();
  await peer.request({ op: "open", url: servers.urls[0], transport: "cairn" });
  await peer.request({ op: "bulk", from: 0, n: variant.items });
  return { host, servers, peer, items: variant.items, pushes: 0 };
}

/** S07's sides: each sample starts a server on the cluster that has never opened the repository. */
function throughNewServer(measure: (state: ColdCatchUp, serverUrl: string) => Promise<number>) {
  return side({
    setup: coldRepository,
    async sample(state: ColdCatchUp): Promise<number> {
      const { process, url } = await state.host.startServer("postgres", state.servers.database);
      try {
        return await measure(state, url);
      } finally {
        await process.stop();
      }
    },
    teardown: closeColdRepository,
  });
}

async function closeColdRepository(state: ColdCatchUp): Promise<void> {
  await state.peer.stop();
  await state.servers.stop();
}

export const SYNC_POSTGRES: readonly BenchWorkload[] = [S05, S06, S07, S07_PUSH];
