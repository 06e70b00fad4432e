/**
 * A scripted sync server for client tests in every runtime (no sockets): the client is given a
 * socket factory whose sockets end here, and a test reads the frames the client sent and sends
 * the frames (or raw bytes) it chooses, as a real server would or as a malicious one might.
 */
import type { SyncSocket } from "../../src/sync/socket.ts";
import {
  decodeFrame,
  encodeFrame,
  type Frame,
  proofMessage,
  PROTOCOL_VERSION,
} from "../../src/sync/protocol.ts";
import { cryptoSuite } from "../../src/runtime/crypto_suite.ts";

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/** A queue whose reader waits for the next item. */
class Mailbox<T> {
  readonly #items: T[] = [];
  readonly #readers: ((item: T) => void)[] = [];

  put(item: T): void {
    const reader = this.#readers.shift();
    if (reader) reader(item);
    else this.#items.push(item);
  }

  take(): Promise<T> {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift()!);
    return new Promise((resolve) => this.#readers.push(resolve));
  }

  get waiting(): number {
    return this.#items.length;
  }
}

/** The client's end: what the code under test holds. */
class FakeSocket implements SyncSocket {
  binaryType = "blob";
  readyState = CONNECTING;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { readonly data: unknown }) => void) | null = null;
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  readonly #server: FakeConnection;

  constructor(server: FakeConnection) {
    this.#server = server;
  }

  send(data: Uint8Array): void {
    if (this.readyState !== OPEN) throw new Error("send on a socket that is not open");
    this.#server.fromClient(data.slice());
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.#server.closedBy("client", code, reason);
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }
}

/** The server's end of one connection. */
export class FakeConnection {
  readonly url: string;
  readonly socket: FakeSocket;
  readonly #frames = new Mailbox<Uint8Array>();
  #closed: { by: "client" | "server"; code: number; reason: string } | undefined;

  constructor(url: string) {
    this.url = url;
    this.socket = new FakeSocket(this);
  }

  fromClient(bytes: Uint8Array): void {
    this.#frames.put(bytes);
  }

  closedBy(by: "client" | "server", code: number, reason: string): void {
    this.#closed ??= { by, code, reason };
  }

  /** How the connection ended, once it has. */
  get closed(): { by: "client" | "server"; code: number; reason: string } | undefined {
    return this.#closed;
  }

  /** Frames the client sent that no `next()` has read yet. */
  get unread(): number {
    return this.#frames.waiting;
  }

  /** Opens the socket (the client then sends `hello`). */
  open(): void {
    this.socket.readyState = OPEN;
    this.socket.onopen?.({});
  }

  /** The next frame the client sends, decoded (its byte fields as plain Uint8Arrays). */
  async next(): Promise<Frame> {
    return plainBytes(decodeFrame(await this.#frames.take(), Infinity));
  }

  /** The frames the client has sent that no `next()` has read, read now. */
  async unreadFrames(): Promise<Frame[]> {
    const frames: Frame[] = [];
    while (this.#frames.waiting > 0) frames.push(await this.next());
    return frames;
  }

  /** The next frame the client sends, which must be of `type`. */
  async expect<T extends Frame["type"]>(type: T): Promise<Extract<Frame, { type: T }>> {
    const frame = await this.next();
    if (frame.type !== type) {
      throw new Error(`expected a ${type} frame from the client, got ${JSON.stringify(frame)}`);
    }
    return frame as Extract<Frame, { type: T }>;
  }

  send(frame: Frame): void {
    this.sendRaw(encodeFrame(frame));
  }

  /** Delivers bytes (or a text message) as they are, after the current tick. */
  sendRaw(data: Uint8Array | string): void {
    const message = typeof data === "string"
      ? data
      : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    if (this.socket.readyState !== OPEN) return;
    // Delivered even if the server closes meanwhile (sent first, it arrives first); not once
    // the client has closed its end.
    queueMicrotask(() => {
      if (this.#closed?.by !== "client") this.socket.onmessage?.({ data: message });
    });
  }

  /** The server closes the connection. */
  close(code = 1000, reason = ""): void {
    if (this.socket.readyState === CLOSED) return;
    this.socket.readyState = CLOSED;
    this.closedBy("server", code, reason);
    queueMicrotask(() => this.socket.onclose?.({ code, reason }));
  }

  /**
   * Plays the server's side of the handshake, checking the client's proof; resolves with the
   * client's `hello`.
   */
  async handshake(
    limits = { maxFrame: 1 << 20, heartbeatMs: 15_000 },
    serverId = "fake-server",
  ): Promise<Extract<Frame, { type: "hello" }>> {
    const hello = await this.expect("hello");
    const nonce = crypto.getRandomValues(new Uint8Array(32));
    this.send({ type: "challenge", version: PROTOCOL_VERSION, serverId, nonce, limits });
    const { signature } = await this.expect("prove");
    const suite = await cryptoSuite();
    const message = proofMessage(nonce, serverId, hello.session);
    if (!await suite.ed25519.verify(hello.publicKey, signature, message)) {
      throw new Error("the client's proof does not verify");
    }
    this.send({ type: "welcome" });
    return hello;
  }
}

/**
 * `value` with every byte array a plain Uint8Array: the decoder may give Node Buffers, which
 * deepEqual tells apart from the Uint8Arrays they are compared with.
 */
function plainBytes<T>(value: T): T {
  if (value instanceof Uint8Array) return new Uint8Array(value) as T;
  if (Array.isArray(value)) return value.map(plainBytes) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [key, plainBytes(field)]),
    ) as T;
  }
  return value;
}

/** Hands out a FakeConnection for each socket the client opens. */
export class FakeSyncServer {
  readonly #connections = new Mailbox<FakeConnection>();
  /** Every connection made so far. */
  readonly made: FakeConnection[] = [];

  /** The socket factory to give the client. */
  readonly socket = (url: string): SyncSocket => {
    const connection = new FakeConnection(url);
    this.made.push(connection);
    this.#connections.put(connection);
    return connection.socket;
  };

  /** The next connection the client makes, opened. */
  async accept(): Promise<FakeConnection> {
    const connection = await this.#connections.take();
    connection.open();
    return connection;
  }
}

/**
 * Timers a test advances by hand: the client's backoff and heartbeat delays become values a test
 * can read and fire, with no wall time involved.
 */
export class ManualTimers {
  #next = 1;
  readonly #pending = new Map<number, { at: number; callback: () => void; ms: number }>();
  #now = 0;

  readonly setTimeout = (callback: () => void, ms: number): unknown => {
    const id = this.#next++;
    this.#pending.set(id, { at: this.#now + ms, callback, ms });
    return id;
  };

  readonly clearTimeout = (handle: unknown): void => {
    this.#pending.delete(handle as number);
  };

  /** The delays of the timers now pending, in the order they were set. */
  delays(): number[] {
    return [...this.#pending.values()].map((timer) => timer.ms);
  }

  /** Moves time on by `ms`, running each timer due by then in turn, the one due first first. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      const due = [...this.#pending.values()].filter((timer) => timer.at <= until);
      if (due.length === 0) break;
      this.runNext();
    }
    this.#now = until;
  }

  /** Runs the timer due first (time moves to it); returns the delay it was set with. */
  runNext(): number {
    let first: [number, { at: number; callback: () => void; ms: number }] | undefined;
    for (const entry of this.#pending) if (!first || entry[1].at < first[1].at) first = entry;
    if (!first) throw new Error("no timer is pending");
    this.#pending.delete(first[0]);
    this.#now = first[1].at;
    first[1].callback();
    return first[1].ms;
  }
}
