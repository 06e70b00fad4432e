/**
 * A tiny static file server on 127.0.0.1 for the browser test and bench pages. It sends
 * COOP/COEP headers so pages get cross-origin isolation (SharedArrayBuffer, OPFS VFS options),
 * and serves only files below the project root.
 */
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
  return new Promise((ready) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port,
      onListen: ({ port }) =>
        ready({ origin: `http://127.0.0.1:${port}`, close: () => server.shutdown() }),
    }, async (request) => {
      const path = decodeURIComponent(new URL(request.url).pathname);
      const file = normalize(join(base, path.endsWith("/") ? `${path}index.html` : path));
      if (!file.startsWith(base)) return new Response("forbidden", { status: 403 });
      try {
        const body = await Deno.readFile(file);
        return new Response(body, {
          headers: {
            "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
            "cross-origin-opener-policy": "same-origin",
            "cross-origin-embedder-policy": "require-corp",
            "cache-control": "no-store",
          },
        });
      } catch {
        return new Response("not found", { status: 404 });
      }
    });
  });
}
