/**
 * Where the OPFS worker script comes from when the caller names none. Run from sources this is
 * `opfs_worker.js` next to this module. Every bundle the build makes (dist/mod.js,
 * dist/browser/cairn.js, the browser tests) replaces this module with one that carries the built
 * worker inline and serves it from a Blob URL (scripts/lib/bundles.ts, INLINE_OPFS_WORKER), so an
 * app's bundler has no worker file to find or copy: esbuild, for one, does not follow
 * `new Worker(new URL("./opfs_worker.js", import.meta.url))` and the file would be missing.
 */
export function opfsWorkerUrl(): string | URL {
  return new URL("./opfs_worker.js", import.meta.url);
}
