/**
 * Counts WebSocket payload bytes at a sync client: a socket factory for the client's seam
 * (`syncWith`) that wraps the socket the client would open anyway (on Deno the `ws` one:
 * runtime/websocket.ts) and adds up every message it sends and receives — all frames both ways,
 * handshake included. It can refuse to connect, so a bench can hold a link offline and then let
 * it reconnect. Runs unchanged on Deno, Node and in Chromium.
 */
import type { SocketFactory, SyncSocket } from "../../src/sync/socket.ts";

export interface ByteCount {
  sent: number;
  received: number;
  /** Messages received. */
  messages: number;
}

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

/** A socket factory over `open` counting into a fresh `CountingSockets`. */
export function countingSockets(
  open: SocketFactory,
): { open: SocketFactory; sockets: CountingSockets } {
  const opened: SyncSocket[] = [];
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
  return {
    sockets,
    open(url, maxFrame) {
      if (sockets.offline) throw new Error("held offline by the bench");
      const socket = new CountingSocket(open(url, maxFrame), sockets.count);
      opened.push(socket);
      return socket;
    },
  };
}

/** The socket the client opened, with every payload counted on its way. */
class CountingSocket implements SyncSocket {
  readonly #inner: SyncSocket;
  readonly #count: ByteCount;
  #onmessage: SyncSocket["onmessage"] = null;

  constructor(inner: SyncSocket, count: ByteCount) {
    this.#inner = inner;
    this.#count = count;
  }

  get binaryType(): string {
    return this.#inner.binaryType;
  }
  set binaryType(type: string) {
    this.#inner.binaryType = type;
  }
  get readyState(): number {
    return this.#inner.readyState;
  }
  get onopen(): SyncSocket["onopen"] {
    return this.#inner.onopen;
  }
  set onopen(listener: SyncSocket["onopen"]) {
    this.#inner.onopen = listener;
  }
  get onclose(): SyncSocket["onclose"] {
    return this.#inner.onclose;
  }
  set onclose(listener: SyncSocket["onclose"]) {
    this.#inner.onclose = listener;
  }
  get onerror(): SyncSocket["onerror"] {
    return this.#inner.onerror;
  }
  set onerror(listener: SyncSocket["onerror"]) {
    this.#inner.onerror = listener;
  }
  get onmessage(): SyncSocket["onmessage"] {
    return this.#onmessage;
  }
  set onmessage(listener: SyncSocket["onmessage"]) {
    this.#onmessage = listener;
    this.#inner.onmessage = listener && ((event) => {
      this.#count.received += payloadBytes(event.data);
      this.#count.messages++;
      listener(event);
    });
  }

  send(data: Uint8Array): void {
    this.#count.sent += payloadBytes(data);
    this.#inner.send(data);
  }

  close(code?: number, reason?: string): void {
    this.#inner.close(code, reason);
  }
}
