/**
 * The requesting side of the sync rows' request channels (a helper's stdin and stdout, a client
 * process's control socket): replies come in the order of the requests, each `{value}` or
 * `{error}`. Runs unchanged on Deno, Node and in Chromium.
 */
import type { HelperProcess, Request } from "./line_channel.ts";

interface Waiting {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

const IGNORED: Waiting = { resolve() {}, reject() {} };

/** Requests sent with `send` (one JSON text each), their replies given to `settle`. */
export class Replies {
  readonly #waiting: Waiting[] = [];
  readonly #label: string;
  readonly #send: (text: string) => void;

  constructor(label: string, send: (text: string) => void) {
    this.#label = label;
    this.#send = send;
  }

  /** A request whose reply is not awaited (it is still read, in order). */
  post(message: Request): void {
    this.#waiting.push(IGNORED);
    this.#send(JSON.stringify(message));
  }

  request<T>(message: Request): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ resolve: resolve as (value: unknown) => void, reject });
      this.#send(JSON.stringify(message));
    });
  }

  /** One reply, as JSON text: settles the oldest request still waiting. */
  settle(text: string): void {
    const reply = JSON.parse(text);
    const w = this.#waiting.shift();
    if (!w) return;
    if ("error" in reply) w.reject(new Error(`${this.#label}: ${reply.error}`));
    else w.resolve(reply.value);
  }

  /** The channel is gone: every request still waiting fails with `reason`. */
  failAll(reason: string): void {
    for (const w of this.#waiting.splice(0)) w.reject(new Error(`${this.#label} ${reason}`));
  }

  /** A helper process on this channel, ended by `stop`. */
  helper(pid: number, stop: () => Promise<void>): HelperProcess {
    return {
      pid,
      post: (message) => this.post(message),
      request: (message) => this.request(message),
      stop,
    };
  }
}
