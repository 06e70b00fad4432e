/**
 * Request and reply between a bench process and the helper processes it starts (the sync server,
 * client processes): one JSON object a line on the child's stdin, one reply a line on its stdout
 * (prefixed, so stray output passes through). Replies come in the order of the requests.
 * Deno and Node only (node:child_process, node:process).
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { Replies } from "./replies.ts";

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
  const replies = new Replies(label, (text) => child.stdin!.write(text + "\n"));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  child.on("exit", (code) => replies.failAll(`exited (${code})`));
  let buffered = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (line.startsWith(REPLY_PREFIX)) replies.settle(line.slice(REPLY_PREFIX.length));
      else if (line.trim()) console.error(`[${label}] ${line}`);
    }
  });
  return replies.helper(child.pid!, async () => {
    if (!child.stdin!.writableEnded) child.stdin!.end();
    await exited;
  });
}

/** Answers one request, the reply (as JSON text) to `reply`, in the order requests came. */
export type Answer = (message: Request, reply: (text: string) => void) => void;

/**
 * The child's side: answers each request line with `handle`, one at a time, in order; exits
 * when stdin closes (after `onEnd`). Returns the answering function, for requests that come
 * another way (a control socket) to join the same queue.
 */
export function serveRequests(
  handle: (message: Request) => unknown,
  onEnd: () => Promise<void>,
): Answer {
  let buffered = "";
  let queue = Promise.resolve();
  const answer: Answer = (message, reply) => {
    queue = queue.then(async () => {
      try {
        reply(JSON.stringify({ value: (await handle(message)) ?? null }));
      } catch (err) {
        reply(JSON.stringify({ error: String((err as Error)?.stack ?? err) }));
      }
    });
  };
  const toStdout = (text: string) => process.stdout.write(`${REPLY_PREFIX}${text}\n`);
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      answer(JSON.parse(buffered.slice(0, end)) as Request, toStdout);
      buffered = buffered.slice(end + 1);
    }
  });
  process.stdin.on("end", () => {
    queue = queue.then(onEnd).then(() => process.exit(0));
  });
  return answer;
}
