import { test } from "node:test";
import assert from "node:assert/strict";
import { bridgeCalls, bridgedSyncHost } from "../../bench/sync/host_bridge.ts";
import type { BlockFile, ServerKind, SyncHost } from "../../bench/sync/host.ts";
import type { HelperProcess, Request } from "../../bench/sync/line_channel.ts";

/** A process stand-in: logs every message, answers `echo` with its field and `none` with nothing. */
class FakeProcess implements HelperProcess {
  readonly pid = 42;
  readonly log: string[] = [];
  stops = 0;
  readonly #name: string;
  constructor(name: string) {
    this.#name = name;
  }
  request<T>(message: Request): Promise<T> {
    this.log.push(`request ${message.op}`);
    if (message.op === "fail") return Promise.reject(new Error(`${this.#name} failed`));
    return Promise.resolve((message.op === "echo" ? message.value : undefined) as T);
  }
  post(message: Request): void {
    this.log.push(`post ${message.op}`);
  }
  stop(): Promise<void> {
    this.stops++;
    return Promise.resolve();
  }
}

function fakeHost() {
  const started: FakeProcess[] = [];
  const clusters: { url: string; stopped: boolean }[] = [];
  const host: SyncHost = {
    startServer(kind: ServerKind, database?: string) {
      const process = new FakeProcess(`${kind} server`);
      started.push(process);
      return Promise.resolve({
        process,
        url: `ws://127.0.0.1:9/${kind}${database ? `/${database}` : ""}`,
      });
    },
    startPostgres() {
      const cluster = { url: `postgres://cluster-${clusters.length}`, stopped: false };
      clusters.push(cluster);
      return Promise.resolve({
        url: cluster.url,
        stop: () => Promise.resolve(void (cluster.stopped = true)),
      });
    },
    startPeer() {
      const process = new FakeProcess("peer");
      started.push(process);
      return process;
    },
    saveBlocks: () => Promise.reject(new Error("the runner keeps no block files")),
  };
  return { host, started, clusters };
}

const pageFile: BlockFile = { load: () => Promise.resolve([]), remove: () => Promise.resolve() };

/** The page's host over the runner's, the calls passing through JSON as the page binding does. */
function bridged(host: SyncHost): SyncHost {
  const calls = bridgeCalls(host);
  return bridgedSyncHost(
    async (call) => JSON.parse(JSON.stringify(await calls(JSON.parse(JSON.stringify(call))))),
    { saveBlocks: () => Promise.resolve(pageFile) },
  );
}

test("a bridged server is the runner's: its URL, its replies, its stop", async () => {
  const { host, started } = fakeHost();
  const { process, url } = await bridged(host).startServer("relay");
  assert.equal(url, "ws://127.0.0.1:9/relay");
  assert.equal(await process.request({ op: "echo", value: 1234 }), 1234);
  assert.equal(await process.request({ op: "none" }), null);
  await assert.rejects(process.request({ op: "fail" }), /relay server failed/);
  await process.stop();
  await process.stop();
  assert.equal(started.length, 1);
  assert.deepEqual(started[0].log, ["request echo", "request none", "request fail"]);
  assert.equal(started[0].stops, 1);
});

test("a bridged peer gets posts and requests in the order they were made, before it started", async () => {
  const { host, started } = fakeHost();
  const peer = bridged(host).startPeer();
  peer.post({ op: "write" });
  const reply = peer.request({ op: "echo", value: "k" });
  peer.post({ op: "write" });
  assert.equal(await reply, "k");
  assert.equal(await peer.request({ op: "echo", value: [1, 2] }).then(JSON.stringify), "[1,2]");
  await peer.stop();
  assert.deepEqual(started[0].log, ["post write", "request echo", "post write", "request echo"]);
  assert.equal(started[0].stops, 1);
});

test("the bridge refuses a process it does not hold, or no longer holds", async () => {
  const { host } = fakeHost();
  const calls = bridgeCalls(host);
  await assert.rejects(calls({ op: "request", id: 7, message: { op: "url" } }), /no process 7/);
  const { id } = await calls({ op: "startPeer" }) as { id: number };
  await calls({ op: "stop", id });
  await assert.rejects(calls({ op: "post", id, message: { op: "write" } }), /no process/);
});

test("block files stay with the page: the bridged host saves them where it was told", async () => {
  const { host } = fakeHost();
  assert.equal(await bridged(host).saveBlocks([new Uint8Array(3)]), pageFile);
});

test("a bridged PostgreSQL cluster is the runner's: its URL for the servers, and its stop", async () => {
  const { host, started, clusters } = fakeHost();
  const page = bridged(host);
  const [first, second] = [await page.startPostgres(), await page.startPostgres()];
  assert.deepEqual([first.url, second.url], ["postgres://cluster-0", "postgres://cluster-1"]);
  const server = await page.startServer("postgres", second.url);
  assert.equal(server.url, "ws://127.0.0.1:9/postgres/postgres://cluster-1");
  assert.equal(started.length, 1);
  await second.stop();
  assert.deepEqual(clusters.map((c) => c.stopped), [false, true]);
  await first.stop();
  assert.deepEqual(clusters.map((c) => c.stopped), [true, true]);
});
