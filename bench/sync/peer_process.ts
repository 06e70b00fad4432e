/**
 * A sync client in a process of its own, in the runtime being benchmarked (Deno runs this file;
 * Node runs it bundled, build/bench/sync_peer.mjs): the requests of peer_requests.ts, one JSON
 * line each on stdin (bench/sync/line_channel.ts). One more, `control`: opens a control socket
 * (control_socket.ts) taking the same requests, and replies its URL.
 */
import { listenForRequests } from "./control_socket.ts";
import { serveRequests } from "./line_channel.ts";
import { PeerRequests } from "./peer_requests.ts";

const peer = new PeerRequests();
const answer = serveRequests(
  (message) => message.op === "control" ? listenForRequests(answer) : peer.handle(message),
  () => peer.close(),
);
