/**
 * Request and reply between a bench process and the helper processes it starts (the sync server,
 * client processes): one JSON object a line on the child's stdin, one reply a line on its stdout
 * (prefixed, so stray output passes through). Replies come in the order of the requests.
 * Deno and Node only (node:child_process, node:process).
 */
import { spawn } from "node:child_process";
import process from "node:process";

export const REPLY_PREFIX = "@@sync ";

export type Request = { op: string; [field: string]: unknown };

/** A helper process, driven by requests. */
export interface HelperProcess {
  readonly pid: number;
  request<T = unknown>(message: Request): Promise<T>;
  /** Sends a request whose reply is not awaited (it is still read, in order). */
  post(message: Request): void;
  /** Ends the process (closing its stdin) and waits for it to exit; again, does nothing. */
  stop(): Promise<void>;
}

export function startHelper(command: string, args: string[], label: string): HelperProcess {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  type Waiting = { resolve(value: unknown): void; reject(error: Error): void };
  const waiting: Waiting[] = [];
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  child.on("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`${label} exited (${code})`));
  });
  let buffered = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (!line.startsWith(REPLY_PREFIX)) {
        if (line.trim()) console.error(`[${label}] ${line}`);
        continue;
      }
      const reply = JSON.parse(line.slice(REPLY_PREFIX.length));
      const w = waiting.shift();
      if (!w) continue;
      if ("error" in reply) w.reject(new Error(`${label}: ${reply.error}`));
      else w.resolve(reply.value);
    }
  });
  const ignored: Waiting = { resolve() {}, reject() {} };
  const post = (message: Request, w: Waiting = ignored) => {
    waiting.push(w);
    child.stdin!.write(JSON.stringify(message) + "\n");
  };
  return {
    pid: child.pid!,
    post: (message) => post(message),
    request: <T>(message: Request) =>
      new Promise<T>((resolve, reject) =>
        post(message, { resolve: resolve as (v: unknown) => void, reject })
      ),
    async stop() {
      if (!child.stdin!.writableEnded) child.stdin!.end();
      await exited;
    },
  };
}

/**
 * The child's side: answers each request line with `handle`, one at a time, in order; exits
 * when stdin closes (after `onEnd`).
 */
export function serveRequests(
  handle: (message: Request) => unknown,
  onEnd: () => Promise<void>,
): void {
  let buffered = "";
  let queue = Promise.resolve();
  const reply = (body: object) => process.stdout.write(`${REPLY_PREFIX}${JSON.stringify(body)}\n`);
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const message = JSON.parse(buffered.slice(0, end)) as Request;
      buffered = buffered.slice(end + 1);
      queue = queue.then(async () => {
        try {
          reply({ value: (await handle(message)) ?? null });
        } catch (err) {
          reply({ error: String((err as Error)?.stack ?? err) });
        }
      });
    }
  });
  process.stdin.on("end", () => {
    queue = queue.then(onEnd).then(() => process.exit(0));
  });
}
