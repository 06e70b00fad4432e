/**
 * Runs the bench in a Deno or Node child process (bench/entry/server.ts; bundled for Node) and
 * feeds its `@@bench` messages to a collector. Other output passes through to the terminal.
 */
import { MESSAGE_PREFIX } from "../entry/prefix.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import type { Message, Settings } from "../lib/types.ts";
import { buildNodeBench } from "./build.ts";
import type { Collector } from "./collect.ts";

const DENO = "./node_modules/.bin/deno";
const NODE = "./node_modules/.bin/node";

export async function runServerRuntime(
  runtime: "deno" | "node",
  settings: Settings,
  collector: Collector,
  echo: (text: string) => void,
): Promise<RuntimeResult> {
  const json = JSON.stringify(settings);
  const [cmd, args] = runtime === "deno"
    ? [DENO, ["run", "-A", "--v8-flags=--expose-gc", "bench/entry/server.ts", json]]
    : [NODE, [
      "--expose-gc",
      "--disable-warning=ExperimentalWarning",
      await buildNodeBench(),
      json,
    ]];
  const child = new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const [status] = await Promise.all([
    child.status,
    forEachLine(child.stdout, (line) => {
      if (line.startsWith(MESSAGE_PREFIX)) {
        collector.accept(JSON.parse(line.slice(MESSAGE_PREFIX.length)) as Message);
      } else if (line.trim()) echo(`  [${runtime}] ${line}`);
    }),
    forEachLine(child.stderr, (line) => {
      if (line.trim()) echo(`  [${runtime}] ${line}`);
    }),
  ]);
  return collector.finish(status.success ? undefined : `${runtime} exited with ${status.code}`);
}

async function forEachLine(
  stream: ReadableStream<Uint8Array>,
  fn: (line: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      fn(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
  }
  if (buffered) fn(buffered);
}
