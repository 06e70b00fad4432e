/**
 * A client "process" inside the measured runtime's own process (the bench page, for S02): the
 * requests of peer_requests.ts answered here, one at a time and in order, behind the same
 * interface as a real client process. Runs unchanged on Deno, Node and in Chromium.
 */
import type { HelperProcess, Request } from "./line_channel.ts";
import { PeerRequests } from "./peer_requests.ts";

export function ownPeer(peer: Pick<PeerRequests, "handle" | "close"> = new PeerRequests()) {
  let queue: Promise<unknown> = Promise.resolve();
  let stopped: Promise<void> | undefined;
  const request = <T>(message: Request): Promise<T> => {
    if (stopped) return Promise.reject(new Error(`own peer: stopped before ${message.op}`));
    const reply = queue.then(() => peer.handle(message));
    queue = reply.catch(() => {});
    return reply as Promise<T>;
  };
  const helper: HelperProcess = {
    pid: 0,
    request,
    post: (message) => void request(message).catch(() => {}),
    stop() {
      stopped ??= queue.then(() => peer.close());
      return stopped;
    },
  };
  return helper;
}
