/**
 * Serves the sync server core on Node: `ws` on a `node:http` server (Node has a WebSocket client
 * but no server). Both are imported through a variable specifier when a server starts, so a
 * browser bundle of Cairn neither includes nor fails on them.
 */
import type * as NodeHttp from "node:http";
import type * as Ws from "ws";
import type { SyncServerCore } from "./server_core.ts";

const NODE_HTTP = "node:http";
const WS = "ws";

/** A listening transport. */
export interface Listener {
  readonly port: number;
  close(): Promise<void>;
}

export async function listenNode(
  core: SyncServerCore,
  port: number,
  hostname: string,
): Promise<Listener> {
  const http: typeof NodeHttp = await import(NODE_HTTP);
  const { WebSocketServer }: typeof Ws = await import(WS);
  const server = http.createServer((_request, response) => {
    response.writeHead(426, { "content-type": "text/plain" });
    response.end("Cairn sync server: connect with a WebSocket\n");
  });
  // Listening first: ws passes on the server's errors as its own, and a port in use would be an
  // unhandled error event (the process ends) instead of this promise's rejection.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // ws closes a connection whose message exceeds maxPayload with 1009 before buffering it.
  const wss = new WebSocketServer({ server, maxPayload: core.maxFrame });
  wss.on("connection", (socket) => {
    const handlers = core.accept({
      send: (bytes) => socket.send(bytes),
      close: (code, reason) => socket.close(code, reason),
      get bufferedAmount() {
        return socket.bufferedAmount;
      },
    });
    socket.on("message", (data, isBinary) => {
      const bytes = data as Buffer;
      handlers.message(isBinary ? bytes : bytes.toString("utf8"));
    });
    socket.on("close", () => handlers.closed());
    socket.on("error", () => {});
  });
  const address = server.address() as { port: number };
  return {
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
