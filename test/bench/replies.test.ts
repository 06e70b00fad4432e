import { test } from "node:test";
import assert from "node:assert/strict";
import { Replies } from "../../bench/sync/replies.ts";

test("replies settle the requests in the order they were sent, posts taking their turn", async () => {
  const sent: string[] = [];
  const replies = new Replies("peer", (text) => sent.push(text));
  const first = replies.request<number>({ op: "a" });
  replies.post({ op: "b" });
  const third = replies.request<string>({ op: "c", i: 3 });
  assert.deepEqual(sent, ['{"op":"a"}', '{"op":"b"}', '{"op":"c","i":3}']);
  replies.settle('{"value":1}');
  replies.settle('{"error":"b went wrong"}');
  replies.settle('{"value":"three"}');
  assert.equal(await first, 1);
  assert.equal(await third, "three");
});

test("an error reply rejects its request, named by the channel; a reply nobody waits for is dropped", async () => {
  const replies = new Replies("relay server", () => {});
  const failing = replies.request({ op: "cpu" });
  replies.settle('{"error":"no such thing"}');
  await assert.rejects(failing, { message: "relay server: no such thing" });
  replies.settle('{"value":5}');
  const next = replies.request({ op: "url" });
  replies.settle('{"value":"ws://x"}');
  assert.equal(await next, "ws://x");
});

test("when the channel goes, every request still waiting fails, and a helper uses the channel", async () => {
  const sent: string[] = [];
  const replies = new Replies("deno client", (text) => sent.push(text));
  let stops = 0;
  const helper = replies.helper(7, () => {
    stops++;
    return Promise.resolve();
  });
  const waiting = [helper.request({ op: "synced" }), helper.request({ op: "drain" })];
  helper.post({ op: "write", i: 1 });
  replies.failAll("exited (1)");
  for (const w of waiting) await assert.rejects(w, { message: "deno client exited (1)" });
  await helper.stop();
  assert.equal(helper.pid, 7);
  assert.equal(stops, 1);
  assert.equal(sent.length, 3);
});
