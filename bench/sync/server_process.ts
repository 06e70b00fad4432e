/**
 * The sync rows' server, in a process of its own (Deno): `deno run -A server_process.ts cairn`
 * runs Cairn's sync server (open: anyone may write) on a fresh directory, `… postgres <url>` one
 * on that PostgreSQL database (the rows of servers sharing one); `… relay` runs the
 * floor S01 is compared with — a raw WebSocket relay on the same `Deno.serve` and
 * `Deno.upgradeWebSocket` the sync server uses, which sends each binary message on to every
 * other connected socket. Requests (bench/sync/line_channel.ts): `url`, `cpu` (this process's
 * user + system CPU time, µs).
 */
import process from "node:process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSyncServer, postgresStore } from "../../src/server.ts";
import { serveRequests } from "./line_channel.ts";

export type ServerKind = "cairn" | "postgres" | "relay";

interface Running {
  url: string;
  close(): Promise<void>;
}

async function postgresServer(database: string): Promise<Running> {
  const server = await createSyncServer({ store: postgresStore(database), port: 0, open: true });
  return { url: server.url, close: () => server.close() };
}

async function cairnServer(): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-syncbench-"));
  const server = await createSyncServer({ dir, port: 0, open: true });
  return {
    url: server.url,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function relayServer(): Promise<Running> {
  const sockets = new Set<WebSocket>();
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({ url: `ws://127.0.0.1:${port}`, close: () => server.shutdown() }),
    }, (request) => {
      const { socket, response } = Deno.upgradeWebSocket(request);
      socket.binaryType = "arraybuffer";
      socket.onopen = () => sockets.add(socket);
      socket.onclose = () => sockets.delete(socket);
      socket.onmessage = (event) => {
        for (const other of sockets) if (other !== socket) other.send(event.data);
      };
      return response;
    });
  });
}

const kind = Deno.args[0] as ServerKind;
const running = kind === "relay"
  ? await relayServer()
  : kind === "postgres"
  ? await postgresServer(Deno.args[1])
  : await cairnServer();
serveRequests((message) => {
  switch (message.op) {
    case "url":
      return running.url;
    case "cpu": {
      const { user, system } = process.cpuUsage();
      return user + system;
    }
    default:
      throw new Error(`unknown request ${message.op}`);
  }
}, () => running.close());
