/**
 * A tiny static file server on 127.0.0.1 for the browser test and bench pages. It sends
 * COOP/COEP headers so pages get cross-origin isolation (SharedArrayBuffer, OPFS VFS options),
 * and serves only files below the project root. Written on node:http so that tests running on
 * Node (the bench page test) use it as well as the Deno scripts.
 */
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve } from "node:path";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".map": "application/json",
  ".svg": "image/svg+xml",
};

export interface StaticServer {
  readonly origin: string;
  close(): Promise<void>;
}

export function serveStatic(root: string, port = 0): Promise<StaticServer> {
  const base = resolve(root);
  const server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
    const file = normalize(join(base, path.endsWith("/") ? `${path}index.html` : path));
    if (!file.startsWith(base)) {
      response.writeHead(403).end("forbidden");
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, {
        "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
        "cross-origin-opener-policy": "same-origin",
        "cross-origin-embedder-policy": "require-corp",
        "cache-control": "no-store",
      }).end(body);
    } catch {
      response.writeHead(404).end("not found");
    }
  });
  return new Promise((ready, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      ready({
        origin: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
