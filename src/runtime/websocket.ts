/**
 * The WebSocket a sync client opens. Browsers and Node 24 have a global one that sends each
 * message at once. Deno's global client leaves Nagle's algorithm on (measured on Deno 2.9: a
 * message of 8–64 KiB waited ~44 ms for the peer's delayed acknowledgement, p50, against 0.1 ms
 * with TCP_NODELAY), so on Deno the `ws` package (Cairn's server dependency, which sets
 * TCP_NODELAY through node:net) carries the socket instead. It loads asynchronously: until then
 * the returned socket is CONNECTING, and it fires the usual events once `ws` has taken over.
 */

import { CairnError } from "../core/errors.ts";

/** The part of the standard WebSocket API a sync client uses. */
export interface ClientWebSocket {
  binaryType: string;
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { readonly data: unknown }) => void) | null;
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

type WebSocketClass = new (url: string) => ClientWebSocket;
/** `ws`'s client: its options bound what a server may make it buffer. */
type WsClass = new (
  url: string,
  options: { maxPayload: number; perMessageDeflate: boolean },
) => ClientWebSocket;

/** A variable, so bundlers leave the import alone and browser bundles never include `ws`. */
const WS_MODULE = "ws";
const CONNECTING = 0;
const CLOSED = 3;

/**
 * A client socket for `url`. Where it is `ws` (Deno), a message over `maxMessage` bytes closes it
 * (1009) before it is buffered whole, and compression is off: a few KiB of compressed zeros
 * inflated to 90 MiB before the size was checked.
 */
export function openClientWebSocket(url: string, maxMessage: number): ClientWebSocket {
  const global = (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
  if ("Deno" in globalThis) return new NoDelaySocket(url, maxMessage);
  if (global === undefined) throw new TypeError("this runtime has no WebSocket");
  return new global(url);
}

/** `ws`'s error event for a message over maxPayload, as the error the sync client reports. */
function refusedMessage(event: unknown, maxMessage: number): CairnError | undefined {
  const code = (event as { error?: { code?: unknown } } | null)?.error?.code;
  if (code !== "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return undefined;
  return new CairnError(
    "E_TOO_LARGE",
    `sync: the server sent a message over this client's maxFrame (${maxMessage} bytes)`,
  );
}

/** A `ws` socket behind the standard interface, made once `ws` has loaded. */
class NoDelaySocket implements ClientWebSocket {
  binaryType = "blob";
  onopen: ClientWebSocket["onopen"] = null;
  onmessage: ClientWebSocket["onmessage"] = null;
  onclose: ClientWebSocket["onclose"] = null;
  onerror: ClientWebSocket["onerror"] = null;
  #socket: ClientWebSocket | undefined;
  /** Set by a close() before `ws` loaded, or a failure to make the socket: none is opened. */
  #closedEarly = false;

  constructor(url: string, maxMessage: number) {
    import(WS_MODULE).then(({ WebSocket }: { WebSocket: WsClass }) => {
      if (this.#closedEarly) return;
      let socket: ClientWebSocket;
      try {
        socket = new WebSocket(url, { maxPayload: maxMessage, perMessageDeflate: false });
      } catch (err) {
        // A URL `ws` refuses (ftp://…): thrown here it would be an unhandled rejection, which
        // ends a Deno process. Said as the socket's error and close instead.
        this.#fail(err, `${WS_MODULE} refused the URL`);
        return;
      }
      socket.binaryType = this.binaryType;
      socket.onopen = (event) => this.onopen?.(event);
      socket.onmessage = (event) => this.onmessage?.(event);
      socket.onclose = (event) => this.onclose?.(event);
      socket.onerror = (event) => this.onerror?.(refusedMessage(event, maxMessage) ?? event);
      this.#socket = socket;
    }, (err) => this.#fail(err, `cannot load ${WS_MODULE}`));
  }

  /** No socket will be: the error, then the close (1006, abnormal) a real socket would fire. */
  #fail(err: unknown, about: string): void {
    this.#closedEarly = true;
    this.onerror?.(err);
    this.onclose?.({ code: 1006, reason: `${about}: ${err}` });
  }

  get readyState(): number {
    if (this.#socket) return this.#socket.readyState;
    return this.#closedEarly ? CLOSED : CONNECTING;
  }

  send(data: Uint8Array): void {
    if (!this.#socket) throw new TypeError("the WebSocket is not open yet");
    this.#socket.send(data);
  }

  close(code?: number, reason?: string): void {
    if (this.#socket) {
      this.#socket.close(code, reason);
      return;
    }
    if (this.#closedEarly) return;
    this.#closedEarly = true;
    queueMicrotask(() => this.onclose?.({ code: code ?? 1005, reason: reason ?? "" }));
  }
}
