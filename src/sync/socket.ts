/**
 * The WebSocket a sync client talks through: the part of the standard WebSocket API it uses, so
 * tests can hand it a scripted socket instead of a real one (test/harness/fake_sync_server.ts).
 */
import { CairnError } from "../core/errors.ts";
import { type ClientWebSocket, openClientWebSocket } from "../runtime/websocket.ts";

export type SyncSocket = ClientWebSocket;

/** WebSocket.OPEN. */
export const SOCKET_OPEN = 1;

/** Opens a socket to `url` that may refuse messages over `maxFrame` bytes. */
export type SocketFactory = (url: string, maxFrame: number) => SyncSocket;

/**
 * The runtime's WebSocket (on Deno, one with TCP_NODELAY: runtime/websocket.ts). Any error of
 * its constructor (a page's security policy, say) is passed on as it is: only a runtime without
 * one is said to have none.
 */
export const openWebSocket: SocketFactory = (url, maxFrame) => {
  if (!("WebSocket" in globalThis)) {
    throw new CairnError("E_BAD_ARGUMENT", "sync: this runtime has no WebSocket");
  }
  return openClientWebSocket(url, maxFrame);
};
