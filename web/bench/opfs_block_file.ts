/**
 * S03's block file in the bench page: the frames (bench/sync/block_file.ts) written to a file of
 * their own in OPFS, read back from it, removed after the row.
 */
import { decodeBlockFile, encodeBlockFile } from "../../bench/sync/block_file.ts";
import type { BlockFile } from "../../bench/sync/host.ts";

const DIR = "cairn-bench-blocks";
let files = 0;

export async function saveBlocksToOpfs(frames: readonly Uint8Array[]): Promise<BlockFile> {
  const root = await navigator.storage.getDirectory();
  const dir = await root.getDirectoryHandle(DIR, { create: true });
  const name = `blocks-${Date.now().toString(36)}-${++files}.bin`;
  const handle = await dir.getFileHandle(name, { create: true });
  const writable = await handle.createWritable();
  await writable.write(encodeBlockFile(frames) as Uint8Array<ArrayBuffer>);
  await writable.close();
  return {
    load: async () => decodeBlockFile(new Uint8Array(await (await handle.getFile()).arrayBuffer())),
    remove: () => dir.removeEntry(name),
  };
}
