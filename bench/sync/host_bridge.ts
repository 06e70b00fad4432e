/**
 * The sync rows' processes for a client that cannot start any (the bench page): the runner
 * (bench/drivers/browser.ts) holds a `SyncHost` that starts them and answers the page's calls
 * through `bridgeCalls`; the page's `bridgedSyncHost` turns each process into a handle it drives
 * with those calls, or, once started, through its control socket, which spares the hop
 * through the runner. Calls are JSON, one function exposed to the page; replies keep the order
 * of each process's requests because the runner hands them on in the order they come. Runs
 * unchanged on Deno, Node and in Chromium.
 */
import type { BlockFile, ServerKind, SyncHost } from "./host.ts";
import type { HelperProcess, Request } from "./line_channel.ts";

export type BridgeCall =
  | { op: "startServer"; kind: ServerKind; database?: string }
  | { op: "startPostgres" }
  | { op: "stopPostgres"; id: number }
  | { op: "startPeer" }
  | { op: "request" | "post"; id: number; message: Request }
  | { op: "stop"; id: number };

/** The function the page calls (one process id, a reply value, or null). */
export type BridgeFunction = (call: BridgeCall) => Promise<unknown>;

/** The runner's side: every process `host` starts, by id; the answer to each call. */
export function bridgeCalls(host: SyncHost): BridgeFunction {
  const processes = new Map<number, HelperProcess>();
  const clusters = new Map<number, () => Promise<void>>();
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
        const { process, url } = await host.startServer(call.kind, call.database);
        return { id: add(process), url };
      }
      case "startPostgres": {
        const { url, stop } = await host.startPostgres();
        clusters.set(++ids, stop);
        return { id: ids, url };
      }
      case "stopPostgres":
        await clusters.get(call.id)?.();
        clusters.delete(call.id);
        return null;
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
    // As on a process's stdin, a post's failure is not reported: the next request's is.
    post: (message) => void call({ op: "post", id, message }).catch(() => {}),
    stop: () => stopped ??= call({ op: "stop", id }).then(() => {}),
  };
}

/** What stays with the page. */
export interface PageSide {
  /** Block files, where the page keeps them. */
  saveBlocks(frames: readonly Uint8Array[]): Promise<BlockFile>;
  /** The page's own clients, driven as a client process is. */
  ownPeer?(): HelperProcess;
  /**
   * Drives a client process through its control socket at `url` (control_client.ts) rather
   * than through the runner; `stop` ends the process.
   */
  controlSocket?(url: string, label: string, stop: () => Promise<void>): Promise<HelperProcess>;
  /** Where S03's new client keeps its database. */
  catchUpLocation?(): string;
}

/**
 * The page's side: servers and client processes started by the runner through `call`; each
 * client process then driven over its control socket, when the page can open one.
 */
export function bridgedSyncHost(call: BridgeFunction, page: PageSide): SyncHost {
  const startPeer = async (): Promise<HelperProcess> => {
    const { id } = await call({ op: "startPeer" }) as { id: number };
    const viaRunner = bridgedProcess(call, id);
    if (!page.controlSocket) return viaRunner;
    const url = await viaRunner.request<string>({ op: "control" });
    return await page.controlSocket(url, `client process ${id}`, () => viaRunner.stop());
  };
  return {
    async startServer(kind, database) {
      const started = await call({ op: "startServer", kind, database });
      const { id, url } = started as { id: number; url: string };
      return { process: bridgedProcess(call, id), url };
    },
    async startPostgres() {
      const { id, url } = await call({ op: "startPostgres" }) as { id: number; url: string };
      return { url, stop: () => call({ op: "stopPostgres", id }).then(() => {}) };
    },
    startPeer() {
      // The process comes later; requests wait for it, in the order they were made.
      const helper = startPeer();
      return {
        pid: 0,
        request: async (message) => (await helper).request(message),
        post(message) {
          helper.then((h) => h.post(message), () => {});
        },
        stop: async () => (await helper).stop(),
      };
    },
    saveBlocks: (frames) => page.saveBlocks(frames),
    ownPeer: page.ownPeer && (() => page.ownPeer!()),
    catchUpLocation: page.catchUpLocation && (() => page.catchUpLocation!()),
  };
}
