/**
 * A client process's control socket: a WebSocket listener on loopback whose messages are
 * requests, answered in the same queue as those on stdin (line_channel.ts), each reply a message
 * back. It lets the bench page reach the writer of S01 directly, as the Deno and Node benches
 * reach it through its stdin, instead of through the runner. `ws` (Cairn's server dependency)
 * listens, with TCP_NODELAY. Deno and Node only.
 */
import { WebSocketServer } from "ws";
import type { Answer, Request } from "./line_channel.ts";

/** Listens on 127.0.0.1 (a free port); resolves with the socket's URL. */
export function listenForRequests(answer: Answer): Promise<string> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  server.on("connection", (socket) => {
    socket.on("message", (data) => {
      answer(JSON.parse(String(data)) as Request, (text) => socket.send(text));
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      const { port } = server.address() as { port: number };
      resolve(`ws://127.0.0.1:${port}`);
    });
  });
}
