/**
 * The `cairndb` command. `cairndb serve --dir ./data [--port 8787] [--host 127.0.0.1] [--open]`
 * runs a sync server until SIGINT or SIGTERM, then sends goaway to its clients, lets them drain
 * and exits 0. Runs on Node (`npx cairndb`, the built dist/cli.js) and on Deno (`deno task serve`).
 */
import { createSyncServer } from "./server.ts";

const USAGE = `usage: cairndb serve --dir <directory> [--port 8787] [--host 127.0.0.1] [--open]

  --dir    where the server keeps its repositories, access rules and identity
  --port   port to listen on (0 picks a free one)
  --host   interface to listen on
  --open   anyone may read and write every repository (development only)`;

interface Runtime {
  args: string[];
  print(line: string): void;
  onStop(stop: () => void): void;
  exit(code: number): never;
}

async function runtime(): Promise<Runtime> {
  const deno = (globalThis as {
    Deno?: {
      args: string[];
      addSignalListener(signal: string, listener: () => void): void;
      exit(code: number): never;
    };
  }).Deno;
  if (deno) {
    return {
      args: deno.args,
      print: (line) => console.log(line),
      onStop: (stop) => {
        deno.addSignalListener("SIGINT", stop);
        deno.addSignalListener("SIGTERM", stop);
      },
      exit: (code) => deno.exit(code),
    };
  }
  const NODE_PROCESS = "node:process";
  const { default: process }: { default: typeof import("node:process") } = await import(
    NODE_PROCESS
  );
  return {
    args: process.argv.slice(2),
    print: (line) => console.log(line),
    onStop: (stop) => {
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    },
    exit: (code) => process.exit(code),
  };
}

/** `--name value` options and `--flag` switches after the command. */
function parse(args: string[]): { command: string | undefined; options: Map<string, string> } {
  const [command, ...rest] = args;
  const options = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const name = rest[i];
    if (!name.startsWith("--")) throw new Error(`unexpected argument ${name}`);
    if (name === "--open") options.set("open", "true");
    else if (i + 1 < rest.length) options.set(name.slice(2), rest[++i]);
    else throw new Error(`${name} needs a value`);
  }
  return { command, options };
}

async function main(): Promise<void> {
  const rt = await runtime();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rt.args);
  } catch (err) {
    rt.print(`${(err as Error).message}\n${USAGE}`);
    return rt.exit(2);
  }
  const { command, options } = parsed;
  const dir = options.get("dir");
  const unknown = [...options.keys()].filter((k) => !["dir", "port", "host", "open"].includes(k));
  if (command !== "serve" || dir === undefined || unknown.length > 0) {
    rt.print(USAGE);
    return rt.exit(2);
  }
  const port = Number(options.get("port") ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    rt.print(`--port must be a port number\n${USAGE}`);
    rt.exit(2);
  }
  const server = await createSyncServer({
    dir,
    port,
    hostname: options.get("host") ?? "127.0.0.1",
    open: options.has("open"),
  });
  rt.print(server.url);
  let stopping = false;
  rt.onStop(() => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => {
      rt.print("stopped");
      rt.exit(0);
    }, (err) => {
      console.error(err);
      rt.exit(1);
    });
  });
}

await main();
