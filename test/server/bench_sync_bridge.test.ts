/**
 * The bench page's sync bridge over real processes (run on Deno and on Node): the runner's
 * process host (bench/sync/processes.ts) behind `bridgeCalls`, driven through `bridgedSyncHost`
 * as the page drives it, starts a Cairn sync server and a Deno client process; what the client
 * writes reaches a client here, and the server answers for its CPU time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { bridgeCalls, bridgedSyncHost } from "../../bench/sync/host_bridge.ts";
import { openObserver } from "../../bench/sync/observer.ts";
import { processSyncHost } from "../../bench/sync/processes.ts";

test(
  "through the bridge, a client process's writes reach a client here via the server it started",
  {
    timeout: 60_000,
  },
  async () => {
    const runner = processSyncHost("deno");
    const page = bridgedSyncHost(
      bridgeCalls(runner),
      () => Promise.reject(new Error("no block files in this test")),
    );
    try {
      const { process: server, url } = await page.startServer("cairn");
      assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+/);
      const peer = page.startPeer();
      const key = await peer.request<string>({ op: "open", url, transport: "cairn" });
      assert.equal(typeof key, "string");
      for (let i = 0; i < 3; i++) peer.post({ op: "write", i });
      await peer.request({ op: "synced" });
      const observer = await openObserver(url);
      try {
        await observer.link.synced();
        await observer.holds(3);
        assert.equal(observer.repo.count(), 3);
        assert.ok(observer.sockets.count.received > 0);
      } finally {
        await observer.close();
      }
      assert.ok(await server.request<number>({ op: "cpu" }) > 0);
      await peer.stop();
      await server.stop();
    } finally {
      await runner.stopAll();
    }
  },
);
