/**
 * The Deno test run's guard (test/harness/uncaught_guard.ts): Deno's node:test passes a test that
 * throws outside its own promise; with the guard loaded, as scripts/test.ts loads it, the run fails
 * and prints the error. Runs `deno test` on a fixture, from Deno and from Node.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import process from "node:process";

function denoTest(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      "./node_modules/.bin/deno",
      ["test", "-A", "--no-check", ...args, "test/fixtures/uncaught_in_a_test.ts"],
      { env: { ...process.env, NO_COLOR: "1" } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, output: stdout + stderr });
      },
    );
  });
}

test("the Deno run's guard fails a run whose test threw outside its own promise, which Deno alone passes", async () => {
  const bare = await denoTest();
  assert.equal(bare.code, 0, "Deno's node:test passes it: the blind spot the guard closes");
  const guarded = await denoTest("--preload=test/harness/uncaught_guard.ts");
  assert.notEqual(guarded.code, 0, guarded.output);
  assert.match(guarded.output, /thrown outside the test's promise/);
  assert.match(guarded.output, /1 uncaught error\(s\) in this run/);
});
