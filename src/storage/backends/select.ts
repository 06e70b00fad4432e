/** The storage backend for this runtime: files on Deno and Node, OPFS (through a worker) elsewhere. */
import { hasNodeModules } from "../../runtime/platform.ts";
import type { StorageBackend } from "../backend.ts";
import { openFsBackend } from "./fs.ts";
import { openOpfsBackend, type OpfsBackendOptions } from "./opfs.ts";

/** `options` matter only in the browser (OPFS); files on Deno and Node need none. */
export function openBackend(
  path: string,
  options: OpfsBackendOptions = {},
): Promise<StorageBackend> {
  return hasNodeModules() ? openFsBackend(path) : openOpfsBackend(path, options);
}
