import { test } from "node:test";
import assert from "node:assert/strict";
import { ownPeer } from "../../bench/sync/own_peer.ts";
import type { Request } from "../../bench/sync/line_channel.ts";

/** Requests answered after `ms` of their own, each logged as it starts and ends. */
function slowPeer() {
  const log: string[] = [];
  return {
    log,
    async handle(message: Request) {
      log.push(`start ${message.op}`);
      await new Promise((resolve) => setTimeout(resolve, message.ms as number));
      if (message.op === "fail") throw new Error("failed as asked");
      log.push(`end ${message.op}`);
      return message.op;
    },
    close() {
      log.push("close");
      return Promise.resolve();
    },
  };
}

test("the page's own peer answers one request at a time, in order, as a process would", async () => {
  const peer = slowPeer();
  const helper = ownPeer(peer);
  const first = helper.request({ op: "a", ms: 20 });
  helper.post({ op: "b", ms: 0 });
  const failed = helper.request({ op: "fail", ms: 5 });
  const last = helper.request({ op: "c", ms: 0 });
  assert.equal(await first, "a");
  await assert.rejects(failed, /failed as asked/);
  assert.equal(await last, "c");
  assert.deepEqual(peer.log, [
    "start a",
    "end a",
    "start b",
    "end b",
    "start fail",
    "start c",
    "end c",
  ]);
});

test("stopping the own peer closes it after the requests made before, and refuses later ones", async () => {
  const peer = slowPeer();
  const helper = ownPeer(peer);
  const pending = helper.request({ op: "a", ms: 10 });
  const stopped = helper.stop();
  assert.equal(helper.stop(), stopped);
  await stopped;
  assert.equal(await pending, "a");
  await assert.rejects(helper.request({ op: "b", ms: 0 }), /stopped before b/);
  assert.deepEqual(peer.log, ["start a", "end a", "close"]);
});

test("the own peer's real requests: an unknown one, and writes before any link, are refused", async () => {
  const helper = ownPeer();
  await assert.rejects(helper.request({ op: "teleport" }), /unknown request teleport/);
  await assert.rejects(helper.request({ op: "write", i: 0 }), /open a Cairn link first/);
  await assert.rejects(helper.request({ op: "fanOut", ms: 1 }), /open the clients first/);
  await helper.stop();
});
