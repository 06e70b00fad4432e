/**
 * S02: fan-out. Many clients in several client processes, ten of them writing as fast as the
 * server acknowledges; every client receives every write. Sustained writes per second, and the
 * delivery latency of every write to every client (its p99 in the latency table).
 */
import type { TextCtx } from "../contenders/text.ts";
import { countLabel } from "../lib/format.ts";
import { side, type TextWorkload, type Variant } from "../lib/types.ts";
import type { HelperProcess } from "../sync/line_channel.ts";
import type { BenchWorkload } from "./common.ts";
import { type ServerAndPeer, serverAndPeer, SYNC_ROW, syncHost } from "./sync_common.ts";

const WRITERS = 10;

/** Client processes the clients are spread over. */
function processes(quick: boolean): number {
  return quick ? 2 : 4;
}

/** How long each sample writes. */
function writeMs(quick: boolean): number {
  return quick ? 300 : 2_000;
}

interface FanOut {
  first: ServerAndPeer;
  peers: HelperProcess[];
  ms: number;
  /** Items every client holds so far. */
  items: number;
  warmup: number;
  /** Delivery latencies of the samples (not the warm-up), µs. */
  latencies: number[];
}

/** `total` split over `parts` as evenly as can be, the larger shares first. */
export function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, p) => Math.floor((total + parts - 1 - p) / parts));
}

const S02: TextWorkload<TextCtx> = {
  ...SYNC_ROW,
  id: "S02.v1",
  title: "Fan-out: 10 writers to every client",
  unit: "ops/s",
  better: "higher",
  scale: "ms",
  variants: (quick): Variant[] =>
    (quick ? [10, 20] : [10, 100, 500]).map((clients) => ({
      label: `${countLabel(clients)} clients in ${processes(quick)} processes`,
      items: 0,
      clients,
      processes: processes(quick),
      ms: writeMs(quick),
    })),
  timed: "Clients (in-memory databases, signed, each with its own link) spread evenly over " +
    "client processes of the runtime measured; 10 of them (spread the same way) each write one " +
    "item and wait for the server's ack, again and again, for 2 s (quick: 0.3 s). A sample: the " +
    "writes acknowledged in that time, per second. Then every client must hold every item " +
    "before the next sample. Each item carries `Date.now()` at its writing; each client that " +
    "receives it records `Date.now()` minus that: one system clock for every process, in 1 ms " +
    "steps; the latency table has every delivery of every sample (µs).",
  fairness: "The bench process only starts the samples and collects the figures; it holds no " +
    "client. Every client, writer or not, receives every other client's writes.",
  runtimeNotes: {
    browser: "S02 in Chromium: the bench page holds one process's share of the clients (and of " +
      "the writers), in memory; the other processes are Deno client processes. Delivery " +
      "latency compares `Date.now()` taken in the page with that of the Deno processes: the " +
      "same system clock.",
  },
  context: "issue #16 asks for 100 clients, 10 writing, with delivery p99 ≤ 50 ms (read from " +
    "the latency table), and how it grows from 10 to 100 to 500 clients.",
  text: side({
    async setup(ctx: TextCtx, variant: Variant, plan): Promise<FanOut> {
      const host = syncHost(ctx);
      const first = await serverAndPeer(host, "cairn");
      const count = variant.processes as number;
      // In the bench page, the page holds one process's share of the clients.
      const own = host.ownPeer ? [host.ownPeer()] : [];
      const others = Array.from({ length: count - 1 - own.length }, () => host.startPeer());
      const peers = [first.peer, ...own, ...others];
      const clients = split(variant.clients as number, count);
      const writers = split(WRITERS, count);
      await Promise.all(peers.map((peer, p) =>
        peer.request({
          op: "clients",
          url: first.url,
          count: clients[p],
          writers: Math.min(writers[p], clients[p]),
          name: `p${p}`,
        })
      ));
      return {
        first,
        peers,
        ms: variant.ms as number,
        items: 0,
        warmup: plan.warmup,
        latencies: [],
      };
    },
    async sample(state: FanOut, index: number): Promise<number> {
      const writes = await Promise.all(
        state.peers.map((peer) => peer.request<number>({ op: "fanOut", ms: state.ms })),
      );
      const total = writes.reduce((sum, w) => sum + w, 0);
      state.items += total;
      const latencies = await Promise.all(
        state.peers.map((peer) => peer.request<number[]>({ op: "drain", items: state.items })),
      );
      if (index >= state.warmup) {
        for (const ms of latencies.flat()) state.latencies.push(ms * 1000);
      }
      return total / (state.ms / 1000);
    },
    latency: (state: FanOut) => state.latencies,
    async teardown(state: FanOut): Promise<void> {
      await Promise.all(state.peers.slice(1).map((peer) => peer.stop()));
      await state.first.stop();
    },
  }),
};

export const SYNC_FANOUT: readonly BenchWorkload[] = [S02];
