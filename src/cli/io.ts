/**
 * What the commands need from the process, the same on Deno and Node: arguments, standard
 * output and error, standard input, whether standard error is a terminal (for the progress
 * line), signals and the exit. Through node:process, which Deno provides too; imported by a
 * variable name so that bundlers leave it to the runtime.
 */
import type NodeProcess from "node:process";

export interface CliIo {
  readonly args: readonly string[];
  /** Writes to standard output; resolves once the runtime has taken the bytes. */
  out(text: string): Promise<void>;
  /** A line on standard error. */
  error(line: string): void;
  /** All of standard input, as bytes. */
  readInput(): Promise<Uint8Array>;
  /** True when standard error is a terminal: progress is drawn only then. */
  readonly errorIsTerminal: boolean;
  /** Writes to standard error as it is (a progress line redraws itself with "\r"). */
  errorRaw(text: string): void;
  onStop(stop: () => void): void;
  exit(code: number): never;
}

const NODE_PROCESS = "node:process";

export async function processIo(): Promise<CliIo> {
  const { default: process }: { default: typeof NodeProcess } = await import(NODE_PROCESS);
  return {
    args: process.argv.slice(2),
    out: (text) =>
      new Promise((resolve, reject) =>
        process.stdout.write(text, (err) => err ? reject(err) : resolve())
      ),
    error: (line) => process.stderr.write(`${line}\n`),
    errorRaw: (text) => process.stderr.write(text),
    async readInput() {
      const chunks: Uint8Array[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Uint8Array);
      const all = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
      let at = 0;
      for (const chunk of chunks) {
        all.set(chunk, at);
        at += chunk.length;
      }
      return all;
    },
    errorIsTerminal: process.stderr.isTTY === true,
    onStop: (stop) => {
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    },
    exit: (code) => process.exit(code),
  };
}
