/**
 * Serves the sync server core on Deno: `Deno.serve`, and `Deno.upgradeWebSocket` for each
 * request that asks for a WebSocket. The few Deno APIs used are typed here, so the package's
 * declarations build without Deno's types.
 */
import type { SocketHandlers } from "./socket.ts";
import type { SyncServerCore } from "./server_core.ts";
import type { Listener } from "./node_adapter.ts";

interface DenoWebSocket {
  binaryType: string;
  readonly bufferedAmount: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: (() => void) | null;
  onmessage: ((event: { data: ArrayBuffer | string }) => void) | null;
  onclose: (() => void) | null;
  onerror: (() => void) | null;
}

interface DenoServe {
  serve(
    options: {
      port: number;
      hostname: string;
      onListen(address: { port: number }): void;
    },
    handler: (request: Request) => Response,
  ): { shutdown(): Promise<void>; finished: Promise<void> };
  upgradeWebSocket(
    request: Request,
    options: { idleTimeout: number },
  ): { socket: DenoWebSocket; response: Response };
}

export function listenDeno(
  core: SyncServerCore,
  port: number,
  hostname: string,
): Promise<Listener> {
  const deno = (globalThis as unknown as { Deno: DenoServe }).Deno;
  return new Promise((resolve) => {
    const server = deno.serve({
      port,
      hostname,
      onListen: (address) => resolve({ port: address.port, close: () => server.shutdown() }),
    }, (request) => {
      if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        return new Response("Cairn sync server: connect with a WebSocket\n", { status: 426 });
      }
      // Heartbeats are the protocol's (ping frames), not Deno's.
      const { socket, response } = deno.upgradeWebSocket(request, { idleTimeout: 0 });
      socket.binaryType = "arraybuffer";
      let handlers: SocketHandlers | undefined;
      socket.onopen = () => {
        handlers = core.accept({
          send: (bytes) => socket.send(bytes),
          close: (code, reason) => socket.close(code, reason),
          get bufferedAmount() {
            return socket.bufferedAmount;
          },
        });
      };
      socket.onmessage = (event) => {
        const { data } = event;
        handlers?.message(typeof data === "string" ? data : new Uint8Array(data));
      };
      socket.onclose = () => handlers?.closed();
      socket.onerror = () => {};
      return response;
    });
  });
}
