/**
 * A fixture script run as a child process on Deno or Node (whichever the test asks for, not only
 * the one running the test), with its output read line by line. On Node the fixture's "cairndb"
 * imports resolve to the built package (dist/), so tests that start Node children need a build.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export type ChildRuntime = "deno" | "node";

const COMMANDS: Record<ChildRuntime, [string, string[]]> = {
  deno: ["./node_modules/.bin/deno", ["run", "-A"]],
  node: ["./node_modules/.bin/node", []],
};

/** The command and arguments that run `script` with `args` on `runtime`. */
export function childCommand(
  runtime: ChildRuntime,
  script: string,
  args: readonly string[],
): [string, string[]] {
  const [command, prefix] = COMMANDS[runtime];
  return [command, [...prefix, script, ...args]];
}

export class Child {
  readonly #process: ChildProcess;
  readonly #lines: string[] = [];
  #waiting: (() => void) | undefined;
  readonly exited: Promise<number | null>;
  #stderr = "";

  constructor(runtime: ChildRuntime, script: string, args: readonly string[]) {
    const [command, commandArgs] = childCommand(runtime, script, args);
    this.#process = spawn(command, commandArgs, {
      stdio: ["pipe", "pipe", "pipe"],
    });
    createInterface({ input: this.#process.stdout! }).on("line", (line) => {
      this.#lines.push(line);
      this.#waiting?.();
    });
    this.#process.stderr!.on("data", (chunk) => (this.#stderr += String(chunk)));
    this.exited = new Promise((resolve) => {
      this.#process.on("exit", (code) => {
        this.#waiting?.();
        resolve(code);
      });
    });
  }

  /** The rest of the first output line that is `prefix`, or starts with it and a space. */
  async line(prefix: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.#lines.find((line) => line === prefix || line.startsWith(`${prefix} `));
      if (found !== undefined) return found.slice(prefix.length + 1);
      if (this.#process.exitCode !== null || Date.now() > deadline) {
        throw new Error(
          `the child printed no "${prefix}" line (exit ${this.#process.exitCode}):\n` +
            `${this.#lines.join("\n")}\n${this.#stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** What the child wrote to standard error so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Asks the child to stop (SIGTERM): fixtures that serve stop cleanly on it. */
  terminate(): void {
    this.#process.kill("SIGTERM");
  }

  kill(): void {
    if (this.#process.exitCode === null) this.#process.kill("SIGKILL");
  }
}
