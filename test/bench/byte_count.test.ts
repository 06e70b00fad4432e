import { test } from "node:test";
import assert from "node:assert/strict";
import { countingSockets, payloadBytes } from "../../bench/sync/byte_count.ts";
import type { SyncSocket } from "../../src/sync/socket.ts";

/** A client socket stand-in: records what is sent, delivers messages on demand, never connects. */
class FakeSocket implements SyncSocket {
  binaryType = "blob";
  readyState = 1;
  onopen: SyncSocket["onopen"] = null;
  onmessage: SyncSocket["onmessage"] = null;
  onclose: SyncSocket["onclose"] = null;
  onerror: SyncSocket["onerror"] = null;
  sentData: unknown[] = [];
  closed = false;
  send(data: Uint8Array): void {
    this.sentData.push(data);
  }
  close(): void {
    this.closed = true;
  }
  deliver(data: unknown): void {
    this.onmessage?.({ data });
  }
}

/** Opens fake sockets and keeps them, so a test can deliver to the one under a counting one. */
function fakes() {
  const made: FakeSocket[] = [];
  return {
    made,
    open: () => {
      const socket = new FakeSocket();
      made.push(socket);
      return socket;
    },
  };
}

test("payloadBytes: binary as is, text as UTF-8", () => {
  assert.equal(payloadBytes(new Uint8Array(7)), 7);
  assert.equal(payloadBytes(new ArrayBuffer(5)), 5);
  assert.equal(payloadBytes(new Uint8Array(10).subarray(2, 5)), 3);
  assert.equal(payloadBytes("é€"), 5);
  assert.equal(payloadBytes(new Blob([new Uint8Array(4)])), 4);
});

test("countingSockets counts every message both ways, passes them on, and reset zeroes it", () => {
  const inner = fakes();
  const { open, sockets } = countingSockets(inner.open);
  const a = open("ws://a", 1 << 20);
  const b = open("ws://b", 1 << 20);
  const received: unknown[] = [];
  a.onmessage = (event) => received.push(event.data);
  b.onmessage = (event) => received.push(event.data);
  a.binaryType = "arraybuffer";
  a.send(new Uint8Array(100));
  b.send(new Uint8Array(3));
  inner.made[0].deliver(new ArrayBuffer(40));
  inner.made[1].deliver(new Uint8Array(2));
  assert.deepEqual(sockets.count, { sent: 103, received: 42, messages: 2 });
  assert.equal(inner.made[0].sentData.length, 1, "the message still goes out");
  assert.equal(received.length, 2, "and what comes in still reaches the client");
  assert.equal(inner.made[0].binaryType, "arraybuffer");
  sockets.reset();
  assert.deepEqual(sockets.count, { sent: 0, received: 0, messages: 0 });
});

test("countingSockets: offline refuses new sockets; dropAll closes the open ones", () => {
  const inner = fakes();
  const { open, sockets } = countingSockets(inner.open);
  open("ws://a", 1 << 20);
  sockets.offline = true;
  assert.throws(() => open("ws://b", 1 << 20), /offline/);
  sockets.dropAll();
  assert.equal(inner.made[0].closed, true);
  sockets.offline = false;
  open("ws://c", 1 << 20);
  assert.equal(inner.made[1].closed, false);
});
