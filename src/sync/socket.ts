/**
 * The WebSocket a sync client talks through: the part of the standard WebSocket API it uses, so
 * tests can hand it a scripted socket instead of a real one (test/harness/fake_sync_server.ts).
 */
import { CairnError } from "../core/errors.ts";

export interface SyncSocket {
  binaryType: string;
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { readonly data: unknown }) => void) | null;
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** WebSocket.OPEN. */
export const SOCKET_OPEN = 1;

export type SocketFactory = (url: string) => SyncSocket;

/** The runtime's WebSocket (Deno, Node 24 and browsers have one). */
export const openWebSocket: SocketFactory = (url) => {
  const WebSocketClass = (globalThis as { WebSocket?: new (url: string) => SyncSocket })
    .WebSocket;
  if (WebSocketClass === undefined) {
    throw new CairnError("E_BAD_ARGUMENT", "this runtime has no WebSocket");
  }
  return new WebSocketClass(url);
};
