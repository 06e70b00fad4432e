/**
 * Runs the `cairndb` command as a child process on Deno (src/cli.ts) or Node (the built
 * dist/cli.js, as `npx cairndb` runs it), with the given standard input, and collects its exit
 * code and output. Tests run it on both runtimes whichever runs the test: Node needs a build.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { childCommand, type ChildRuntime } from "./child_process.ts";

export const CLI_RUNTIMES: readonly ChildRuntime[] = ["deno", "node"];

const CLI_SCRIPT: Record<ChildRuntime, string> = { deno: "src/cli.ts", node: "dist/cli.js" };

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(
  runtime: ChildRuntime,
  args: readonly string[],
  input = "",
): Promise<CliRun> {
  const [command, commandArgs] = childCommand(runtime, CLI_SCRIPT[runtime], args);
  const child = spawn(command, commandArgs, { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => (stdout += chunk));
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Every file of a directory with its bytes, to prove that a command changed nothing. The writer
 * lock's file is listed but never read: opening and closing it in a process that holds the lock
 * would drop the lock (POSIX locks belong to the process), and nothing is ever written to it.
 */
export async function directoryContents(directory: string): Promise<Record<string, Uint8Array>> {
  const contents: Record<string, Uint8Array> = {};
  for (const name of (await readdir(directory)).sort()) {
    contents[name] = name === "writer.lock"
      ? new Uint8Array(0)
      : new Uint8Array(await readFile(join(directory, name)));
  }
  return contents;
}
