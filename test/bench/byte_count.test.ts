import { test } from "node:test";
import assert from "node:assert/strict";
import {
  countingWebSocket,
  payloadBytes,
  type WebSocketClass,
} from "../../bench/sync/byte_count.ts";

/** A WebSocket stand-in: records what is sent, delivers messages on demand, never connects. */
class FakeSocket extends EventTarget {
  sentData: unknown[] = [];
  closed = false;
  send(data: unknown): void {
    this.sentData.push(data);
  }
  close(): void {
    this.closed = true;
  }
  deliver(data: unknown): void {
    this.dispatchEvent(new MessageEvent("message", { data }));
  }
}

test("payloadBytes: binary as is, text as UTF-8", () => {
  assert.equal(payloadBytes(new Uint8Array(7)), 7);
  assert.equal(payloadBytes(new ArrayBuffer(5)), 5);
  assert.equal(payloadBytes(new Uint8Array(10).subarray(2, 5)), 3);
  assert.equal(payloadBytes("é€"), 5);
  assert.equal(payloadBytes(new Blob([new Uint8Array(4)])), 4);
});

test("countingWebSocket counts every message both ways, and reset zeroes it", () => {
  const { WebSocket, sockets } = countingWebSocket(FakeSocket as unknown as WebSocketClass);
  const a = new WebSocket("ws://a") as unknown as FakeSocket;
  const b = new WebSocket("ws://b") as unknown as FakeSocket;
  (a as unknown as WebSocket).send(new Uint8Array(100));
  (b as unknown as WebSocket).send("abc");
  a.deliver(new ArrayBuffer(40));
  b.deliver(new Uint8Array(2));
  assert.deepEqual(sockets.count, { sent: 103, received: 42, messages: 2 });
  assert.equal(a.sentData.length, 1, "the message still goes out");
  sockets.reset();
  assert.deepEqual(sockets.count, { sent: 0, received: 0, messages: 0 });
});

test("countingWebSocket: offline refuses new sockets; dropAll closes the open ones", () => {
  const { WebSocket, sockets } = countingWebSocket(FakeSocket as unknown as WebSocketClass);
  const a = new WebSocket("ws://a") as unknown as FakeSocket;
  sockets.offline = true;
  assert.throws(() => new WebSocket("ws://b"), /offline/);
  sockets.dropAll();
  assert.equal(a.closed, true);
  sockets.offline = false;
  assert.equal((new WebSocket("ws://c") as unknown as FakeSocket).closed, false);
});
