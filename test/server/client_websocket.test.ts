/**
 * The sync client's WebSocket (runtime/websocket.ts): on Deno a `ws` socket behind the standard
 * interface (Deno's own client leaves Nagle's algorithm on), elsewhere the global one. Both open,
 * carry binary messages both ways as ArrayBuffers, and close with the code given; a socket
 * closed before it opened reports one close and never connects.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { isCairnError } from "../../src/core/errors.ts";
import { openClientWebSocket } from "../../src/runtime/websocket.ts";

async function withEchoServer(run: (url: string, connections: () => number) => Promise<void>) {
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  let connections = 0;
  wss.on("connection", (socket) => {
    connections++;
    socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  try {
    await run(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`, () => connections);
  } finally {
    for (const client of wss.clients) client.terminate();
    await new Promise((resolve) => wss.close(resolve));
    await new Promise((resolve) => http.close(resolve));
  }
}

test("the client WebSocket carries binary messages both ways and closes with its code", async () => {
  await withEchoServer(async (url) => {
    const socket = openClientWebSocket(url, 1 << 20);
    socket.binaryType = "arraybuffer";
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    assert.equal(socket.readyState, 1);
    const payload = new Uint8Array(30_000).map((_, i) => i % 251);
    const echoed = new Promise<unknown>((resolve) => (socket.onmessage = (e) => resolve(e.data)));
    socket.send(payload);
    const data = await echoed;
    assert.ok(data instanceof ArrayBuffer);
    assert.deepEqual(new Uint8Array(data), payload);
    const closed = new Promise<number>((resolve) => (socket.onclose = (e) => resolve(e.code)));
    socket.close(4000, "done");
    assert.equal(await closed, 4000);
  });
});

test("a client WebSocket closed before it opened reports one close and never connects", async () => {
  await withEchoServer(async (url, connections) => {
    const socket = openClientWebSocket(url, 1 << 20);
    let closes = 0;
    let opened = false;
    socket.onopen = () => (opened = true);
    socket.onclose = () => closes++;
    socket.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(closes, 1);
    assert.equal(opened, false);
    if ("Deno" in globalThis) {
      // The `ws` socket is never made: closed for good at once, and the server never hears of it.
      assert.equal(socket.readyState, 3);
      assert.equal(connections(), 0);
    } else {
      // Node's global WebSocket closes as the standard says: its handshake may still be finishing.
      assert.ok(socket.readyState >= 2, `readyState ${socket.readyState}`);
    }
  });
});

test(
  "on Deno, a URL that `ws` refuses is the socket's error and close, not an unhandled rejection",
  {
    skip: !("Deno" in globalThis),
  },
  async () => {
    // new URL() takes it (so sync() does); ws only speaks ws:, wss:, http:, https:, ws+unix:.
    const socket = openClientWebSocket("ftp://sync.test/", 1 << 20);
    const errors: unknown[] = [];
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      socket.onclose = resolve;
    });
    socket.onerror = (event) => errors.push(event);
    const { code } = await closed;
    assert.equal(code, 1006);
    assert.ok(errors[0] instanceof SyntaxError);
    assert.equal(socket.readyState, 3);
    socket.close(); // nothing more to close, and no second close event
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(errors.length, 1);
  },
);

test(
  "on Deno, a message over maxFrame is refused before it is buffered whole (1009, E_TOO_LARGE), and no compression is offered",
  {
    skip: !("Deno" in globalThis),
  },
  async () => {
    const http = createServer();
    // A server that would compress: a few KiB on the wire could inflate to any size.
    const wss = new WebSocketServer({ server: http, perMessageDeflate: true });
    const offered: (string | undefined)[] = [];
    const closes: number[] = [];
    wss.on("connection", (socket, request) => {
      offered.push(request.headers["sec-websocket-extensions"]);
      socket.on("close", (code) => closes.push(code));
      socket.send(new Uint8Array(1024), { binary: true });
      socket.send(new Uint8Array((1 << 20) + 1), { binary: true });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
      const socket = openClientWebSocket(url, 1 << 20);
      socket.binaryType = "arraybuffer";
      const sizes: number[] = [];
      const errors: unknown[] = [];
      socket.onerror = (event) => errors.push(event);
      // Ends at the close, or at once should the message over the limit come through.
      await new Promise((resolve) => {
        socket.onclose = resolve;
        socket.onmessage = (event) => {
          sizes.push((event.data as ArrayBuffer).byteLength);
          if (sizes.length > 1) resolve(undefined);
        };
      });
      assert.deepEqual(sizes, [1024], "the small message came; the one over the limit not");
      assert.ok(isCairnError(errors[0], "E_TOO_LARGE"), String(errors[0]));
      while (closes.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.deepEqual(closes, [1009], "the client told the server why");
      assert.deepEqual(offered, [undefined]);
    } finally {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await new Promise((resolve) => http.close(resolve));
    }
  },
);
