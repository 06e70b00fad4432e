/** A scratch directory for tests on Deno and Node: made before `run`, removed after it. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function withTempDirectory(
  prefix: string,
  run: (path: string) => Promise<void>,
): Promise<void> {
  const path = await mkdtemp(join(tmpdir(), `cairn-${prefix}-`));
  try {
    await run(path);
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}
