/**
 * The one thing the server core needs from a WebSocket, so it runs over Deno's, over Node's `ws`,
 * or over a fake in tests. An adapter hands each socket to `SyncServerCore.accept` and feeds the
 * returned handlers its messages and its close.
 */
export interface SyncSocket {
  send(bytes: Uint8Array): void;
  close(code: number, reason: string): void;
  /** Bytes queued by send and not yet handed to the network. */
  readonly bufferedAmount: number;
}

export interface SocketHandlers {
  /** A message: binary as bytes, text as a string. */
  message(data: Uint8Array | string): void;
  /** The socket closed, by either side. */
  closed(): void;
}
