import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { Cairn } from "cairndb";
import { seededRandom } from "../harness/random.ts";
import { runtimeCommand } from "../harness/runtime_command.ts";
import { withTempDirectory } from "../harness/temp_directory.ts";

const WRITER = "test/fixtures/crash_writer.mjs";
const KILLS = Number(process.env.CAIRN_FUZZ ?? 50);
const SEED = Number(process.env.CAIRN_FUZZ_SEED ?? 20261122);

/**
 * Starts the writer, waits until it has acknowledged at least one write (so the kill lands
 * mid-stream), kills it after `delayMs`, and returns the highest acknowledged item number.
 */
function writeUntilKilled(
  directory: string,
  format: string,
  start: number,
  delayMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const [command, args] = runtimeCommand(WRITER, [directory, format, String(start)]);
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let acked = start - 1;
    let buffered = "";
    let errors = "";
    let timer: ReturnType<typeof setTimeout> | undefined;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const n = Number(line.slice("acked ".length));
        if (line.startsWith("acked ") && n > acked) acked = n;
      }
      timer ??= setTimeout(() => child.kill("SIGKILL"), delayMs);
    });
    child.stderr.on("data", (chunk) => (errors += chunk));
    child.on("error", reject);
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL") resolve(acked);
      else reject(new Error(`writer exited on its own (${_code}): ${errors}`));
    });
  });
}

for (const format of ["binary", "jsonl"] as const) {
  test(
    `${format}: killed with SIGKILL at random moments, every acknowledged durable write survives`,
    { timeout: 10 * 60_000 },
    async () => {
      const random = seededRandom(SEED + (format === "jsonl" ? 1 : 0));
      const kills = Math.max(1, Math.round(KILLS / 2)); // the two formats share the kill budget
      let next = 0;
      await withTempDirectory("crash", async (directory) => {
        for (let kill = 0; kill < kills; kill++) {
          const delayMs = Math.floor(random() * 40);
          const acked = await writeUntilKilled(directory, format, next, delayMs);
          const db = await Cairn.open({ path: directory });
          const repo = await db.open("/crash");
          for (let n = 0; n <= acked; n++) {
            assert.ok(
              repo.has(`k${n}`),
              `kill ${kill} (seed ${SEED}, delay ${delayMs} ms): acknowledged item k${n} is missing`,
            );
          }
          assert.deepEqual(
            repo.stats().damaged,
            [],
            `kill ${kill}: a crash only ever tears the tail`,
          );
          // Continue numbering after everything that survived, acknowledged or not.
          while (repo.has(`k${next}`)) next++;
          await db.close();
        }
      });
    },
  );
}
