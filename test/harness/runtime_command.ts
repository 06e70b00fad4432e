/** How a test starts a script as a child process on the runtime that runs the test itself. */
import process from "node:process";

/** The command and arguments that run `script` on this runtime (Deno: `deno run -A`). */
export function runtimeCommand(script: string, args: string[]): [string, string[]] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  return deno
    ? [deno.execPath(), ["run", "-A", script, ...args]]
    : [process.execPath, [script, ...args]];
}
