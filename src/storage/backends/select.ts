/** The storage backend for this runtime: files on Deno and Node, OPFS (through a worker) elsewhere. */
import type { StorageBackend } from "../backend.ts";
import { openFsBackend } from "./fs.ts";
import { openOpfsBackend } from "./opfs.ts";

export function openBackend(path: string): Promise<StorageBackend> {
  const isServer = "Deno" in globalThis ||
    typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions
        ?.node === "string";
  return isServer ? openFsBackend(path) : openOpfsBackend(path);
}
