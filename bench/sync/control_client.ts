/**
 * The requesting side of a client process's control socket (control_socket.ts): requests as
 * messages, replies in their order, over the socket a sync client opens (runtime/websocket.ts).
 * Runs unchanged on Deno, Node and in Chromium.
 */
import { openClientWebSocket } from "../../src/runtime/websocket.ts";

/** Control replies carry a run's samples: far larger than a sync frame may be. */
const CONTROL_MESSAGE_LIMIT = 256 << 20;
import type { HelperProcess } from "./line_channel.ts";
import { Replies } from "./replies.ts";

/** A process driven through its control socket at `url`; `stop` ends the process itself. */
export function controlSocket(
  url: string,
  label: string,
  stop: () => Promise<void>,
): Promise<HelperProcess> {
  const socket = openClientWebSocket(url, CONTROL_MESSAGE_LIMIT);
  const replies = new Replies(label, (text) => socket.send(new TextEncoder().encode(text)));
  socket.onmessage = ({ data }) => replies.settle(String(data));
  socket.onclose = () => replies.failAll("control socket closed");
  let stopped: Promise<void> | undefined;
  return new Promise((resolve, reject) => {
    socket.onerror = () => reject(new Error(`${label}: cannot connect to ${url}`));
    socket.onopen = () =>
      resolve(replies.helper(0, () =>
        stopped ??= (async () => {
          socket.close();
          await stop();
        })()));
  });
}
