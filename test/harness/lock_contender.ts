/**
 * A long-lived child process that opens and closes one database when told to
 * (test/fixtures/lock_contender.mjs), for the writer-lock tests: a round of a trial costs a line
 * on each contender's stdin instead of a process start.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { runtimeCommand } from "./runtime_command.ts";

const SCRIPT = "test/fixtures/lock_contender.mjs";

export class Contender {
  readonly pid: number;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: string[] = [];
  readonly #waiting: { resolve(line: string): void; reject(err: Error): void }[] = [];
  readonly #exited: Promise<void>;
  #gone: Error | undefined;

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.pid = child.pid!;
    this.#child = child;
    let buffered = "";
    let errors = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const waiter = this.#waiting.shift();
        if (waiter) waiter.resolve(line);
        else this.#lines.push(line);
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (errors += chunk));
    this.#exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        this.#gone = new Error(`contender ${this.pid} exited (${signal ?? code}): ${errors}`);
        for (const waiter of this.#waiting.splice(0)) waiter.reject(this.#gone);
        resolve();
      });
    });
  }

  /** Starts a contender for the database at `directory`, once it is ready for commands. */
  static async start(directory: string): Promise<Contender> {
    const [command, args] = runtimeCommand(SCRIPT, [directory]);
    const contender = new Contender(spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] }));
    const ready = await contender.next();
    if (ready !== `ready ${contender.pid}`) throw new Error(`contender said ${ready}`);
    return contender;
  }

  /** The next line the contender prints. */
  next(): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.#gone) return Promise.reject(this.#gone);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Sends "open" or "close" without waiting for the answer (see `next`). */
  send(command: "open" | "close"): void {
    this.#child.stdin.write(`${command}\n`);
  }

  async ask(command: "open" | "close"): Promise<string> {
    const answer = this.next();
    this.send(command);
    return await answer;
  }

  /** Kills it with SIGKILL; resolves once it has exited and been reaped (its pid is then free). */
  async kill(): Promise<void> {
    if (!this.#gone) this.#child.kill("SIGKILL");
    await this.#exited;
  }
}
