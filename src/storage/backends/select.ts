/** The storage backend for this runtime: files on Deno and Node, OPFS (through a worker) elsewhere. */
import { hasNodeModules } from "../../runtime/platform.ts";
import type { StorageBackend } from "../backend.ts";
import { openFsBackend } from "./fs.ts";
import { openOpfsBackend } from "./opfs.ts";

export function openBackend(path: string): Promise<StorageBackend> {
  return hasNodeModules() ? openFsBackend(path) : openOpfsBackend(path);
}
