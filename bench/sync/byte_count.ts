/**
 * Counts WebSocket payload bytes at a client: a subclass of the runtime's WebSocket, installed as
 * `globalThis.WebSocket` (the sync client looks it up at each connect), that adds up every
 * message it sends and receives — all frames both ways, handshake included — and can refuse to
 * connect, so a bench can hold a link offline and then let it reconnect.
 * Runs unchanged on Deno, Node and in Chromium.
 */

export interface ByteCount {
  sent: number;
  received: number;
  /** Messages received. */
  messages: number;
}

/** The part of the WebSocket constructor this module uses. */
// deno-lint-ignore no-explicit-any
export type WebSocketClass = new (url: string | URL, protocols?: any) => WebSocket;

export interface CountingSockets {
  readonly count: ByteCount;
  /** While true, opening a socket throws (the client reports it and retries with backoff). */
  offline: boolean;
  /** Closes every socket opened so far that is still open. */
  dropAll(): void;
  /** Sets the count to zero. */
  reset(): void;
}

/** Size of a message's payload: binary as is, text as UTF-8. */
export function payloadBytes(data: unknown): number {
  if (typeof data === "string") return new TextEncoder().encode(data).byteLength;
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  if (data instanceof Blob) return data.size;
  return 0;
}

/** A WebSocket class counting into a fresh `CountingSockets`, over `base`. */
export function countingWebSocket(
  base: WebSocketClass,
): { WebSocket: WebSocketClass; sockets: CountingSockets } {
  const opened: WebSocket[] = [];
  const sockets: CountingSockets = {
    count: { sent: 0, received: 0, messages: 0 },
    offline: false,
    dropAll() {
      for (const socket of opened.splice(0)) socket.close();
    },
    reset() {
      Object.assign(sockets.count, { sent: 0, received: 0, messages: 0 });
    },
  };
  class CountingWebSocket extends base {
    // deno-lint-ignore no-explicit-any
    constructor(url: string | URL, protocols?: any) {
      if (sockets.offline) throw new Error("held offline by the bench");
      super(url, protocols);
      opened.push(this);
      this.addEventListener("message", (event) => {
        sockets.count.received += payloadBytes((event as MessageEvent).data);
        sockets.count.messages++;
      });
    }

    override send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
      sockets.count.sent += payloadBytes(data);
      super.send(data);
    }
  }
  return { WebSocket: CountingWebSocket, sockets };
}
