/**
 * The storage backend of the package's browser builds (scripts/lib/bundles.ts puts this module in
 * the place of select.ts there): OPFS only, so a page does not ship the file backend it never
 * runs. Everywhere else select.ts picks by runtime.
 */
import type { StorageBackend } from "../backend.ts";
import { openOpfsBackend, type OpfsBackendOptions } from "./opfs.ts";

export function openBackend(
  path: string,
  options: OpfsBackendOptions = {},
): Promise<StorageBackend> {
  return openOpfsBackend(path, options);
}
