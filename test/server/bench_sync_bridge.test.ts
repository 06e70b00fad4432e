/**
 * The bench page's sync bridge over real processes (run on Deno and on Node): the runner's
 * process host (bench/sync/processes.ts) behind `bridgeCalls`, driven through `bridgedSyncHost`
 * as the page drives it, starts a Cairn sync server and a Deno client process (then driven over
 * its control socket, as the page drives it); what the client writes reaches a client here, and
 * the server answers for its CPU time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { bridgeCalls, bridgedSyncHost } from "../../bench/sync/host_bridge.ts";
import { controlSocket } from "../../bench/sync/control_client.ts";
import { openObserver } from "../../bench/sync/observer.ts";
import { processSyncHost } from "../../bench/sync/processes.ts";

test(
  "through the bridge, a client process's writes reach a client here via the server it started",
  {
    timeout: 60_000,
  },
  async () => {
    const runner = processSyncHost("deno");
    const controlSockets: string[] = [];
    const page = bridgedSyncHost(
      bridgeCalls(runner),
      {
        saveBlocks: () => Promise.reject(new Error("no block files in this test")),
        controlSocket(url, label, stop) {
          controlSockets.push(url);
          return controlSocket(url, label, stop);
        },
      },
    );
    try {
      const { process: server, url } = await page.startServer("cairn");
      assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+/);
      const peer = page.startPeer();
      const key = await peer.request<string>({ op: "open", url, transport: "cairn" });
      assert.equal(typeof key, "string");
      assert.equal(
        controlSockets.length,
        1,
        "the client process is driven over its control socket",
      );
      assert.match(controlSockets[0], /^ws:\/\/127\.0\.0\.1:\d+$/);
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
