/**
 * A fresh database directory on this runtime's real storage backend, for tests that run
 * everywhere: a temporary directory through node:fs on Deno and Node, an OPFS directory in the
 * browser. Removed after `run`, whatever it left behind.
 *
 * node:os and node:fs are imported through a variable, as the fs backend does, so the browser
 * bundle of the tests neither resolves nor ships them.
 */
import { hasNodeModules } from "../../src/runtime/platform.ts";
import type { StorageBackend } from "../../src/storage/backend.ts";
import { openBackend } from "../../src/storage/backends/select.ts";

const NODE_OS = "node:os";
const NODE_FS = "node:fs/promises";

export async function withScratchBackend(
  prefix: string,
  run: (backend: StorageBackend, path: string) => Promise<void>,
): Promise<void> {
  const name = `cairn-${prefix}-${crypto.randomUUID()}`;
  const path = hasNodeModules()
    ? `${(await import(NODE_OS)).tmpdir()}/${name}`
    : `cairn-test/${name}`;
  const backend = await openBackend(path);
  try {
    await run(backend, path);
  } finally {
    await backend.close().catch(() => {});
    await removeDirectory(path);
  }
}

async function removeDirectory(path: string): Promise<void> {
  if (hasNodeModules()) {
    const fs: { rm(path: string, options: object): Promise<void> } = await import(NODE_FS);
    await fs.rm(path, { recursive: true, force: true });
    return;
  }
  const [parent, name] = path.split("/");
  const root = await navigator.storage.getDirectory();
  const directory = await root.getDirectoryHandle(parent);
  await directory.removeEntry(name, { recursive: true }).catch(() => {});
}
