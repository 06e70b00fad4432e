/**
 * What Cairn and the text engines need of a Deno or Node process: storage places under one
 * directory, file sizes, memory in use, the trace files and GC. The bench's server entry and
 * bench/profile.ts share it.
 */
import process from "node:process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { TextPlatform } from "../contenders/text.ts";

/** Full GC when the process runs with --expose-gc; nothing otherwise. */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Storage places are new directories under `root`; the process must run in the project's root. */
export function localPlatform(root: string): TextPlatform {
  let locations = 0;
  return {
    storageLocation: () => join(root, `cairn-${++locations}`),
    heapBytes: () => {
      gc();
      // `external` counts ArrayBuffer contents (Cairn keeps a checkpoint's bytes and columns there).
      const { heapUsed, external } = process.memoryUsage();
      return Promise.resolve(heapUsed + external);
    },
    fileSizes: (location) =>
      Promise.resolve(
        Object.fromEntries(
          readdirSync(location).map((name) => [name, statSync(join(location, name)).size]),
        ),
      ),
    readData: (file) => Promise.resolve(readFileSync(join("bench", "data", file))),
    gc,
  };
}
