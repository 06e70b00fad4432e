/**
 * The sync rows' processes for a client that cannot start any (the bench page): the runner
 * (bench/drivers/browser.ts) holds a `SyncHost` that starts them and answers the page's calls
 * through `bridgeCalls`; the page's `bridgedSyncHost` turns each process into a handle it drives
 * with those calls. Calls are JSON, one function exposed to the page; replies keep the order of
 * each process's requests because the runner hands them on in the order they come. Runs
 * unchanged on Deno, Node and in Chromium.
 */
import type { BlockFile, ServerKind, SyncHost } from "./host.ts";
import type { HelperProcess, Request } from "./line_channel.ts";

export type BridgeCall =
  | { op: "startServer"; kind: ServerKind }
  | { op: "startPeer" }
  | { op: "request" | "post"; id: number; message: Request }
  | { op: "stop"; id: number };

/** The function the page calls (one process id, a reply value, or null). */
export type BridgeFunction = (call: BridgeCall) => Promise<unknown>;

/** The runner's side: every process `host` starts, by id; the answer to each call. */
export function bridgeCalls(host: SyncHost): BridgeFunction {
  const processes = new Map<number, HelperProcess>();
  let ids = 0;
  const add = (helper: HelperProcess) => {
    processes.set(++ids, helper);
    return ids;
  };
  const find = (id: number) => {
    const helper = processes.get(id);
    if (!helper) throw new Error(`sync bridge: no process ${id}`);
    return helper;
  };
  return async (call) => {
    switch (call.op) {
      case "startServer": {
        const { process, url } = await host.startServer(call.kind);
        return { id: add(process), url };
      }
      case "startPeer":
        return { id: add(host.startPeer()) };
      case "request":
        return (await find(call.id).request(call.message)) ?? null;
      case "post":
        find(call.id).post(call.message);
        return null;
      case "stop":
        await find(call.id).stop();
        processes.delete(call.id);
        return null;
      default:
        throw new Error(`sync bridge: unknown call ${(call as { op: string }).op}`);
    }
  };
}

/** A process the runner started, driven from here. */
function bridgedProcess(call: BridgeFunction, id: number): HelperProcess {
  let stopped: Promise<void> | undefined;
  return {
    pid: id,
    request: <T>(message: Request) => call({ op: "request", id, message }) as Promise<T>,
    post: (message) => void call({ op: "post", id, message }),
    stop: () => stopped ??= call({ op: "stop", id }).then(() => {}),
  };
}

/**
 * The page's side: servers and client processes started by the runner through `call`; block
 * files where the page keeps them (`saveBlocks`); `ownPeer`, the page's own clients, if given.
 */
export function bridgedSyncHost(
  call: BridgeFunction,
  saveBlocks: (frames: readonly Uint8Array[]) => Promise<BlockFile>,
  ownPeer?: () => HelperProcess,
): SyncHost {
  return {
    async startServer(kind) {
      const { id, url } = await call({ op: "startServer", kind }) as { id: number; url: string };
      return { process: bridgedProcess(call, id), url };
    },
    startPeer() {
      // The id comes back later; requests wait for it, in the order they were made.
      const started = call({ op: "startPeer" }) as Promise<{ id: number }>;
      const helper = started.then(({ id }) => bridgedProcess(call, id));
      return {
        pid: 0,
        request: async (message) => (await helper).request(message),
        post(message) {
          helper.then((h) => h.post(message));
        },
        stop: async () => (await helper).stop(),
      };
    },
    saveBlocks,
    ownPeer,
  };
}
