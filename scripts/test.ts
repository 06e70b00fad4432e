/**
 * The one test command (`npm test` / `deno task test`): runs the suite on Deno, on Node 24
 * against the built package, and in Chromium; prints per-runtime counts and a last line
 * `N passed, N failed`. Exits non-zero if any test fails in any runtime.
 *
 * Options: --only=deno,node,browser   run a subset of runtimes
 */
import { buildBrowserTests, buildNodeTests, stopBundler } from "./lib/bundles.ts";
import { runBrowserTests } from "./lib/browser_tests.ts";
import { runTee } from "./lib/process.ts";
import { testFiles, type TestRuntime } from "./lib/test_files.ts";
import { build } from "./build.ts";

interface Tally {
  runtime: TestRuntime;
  passed: number;
  failed: number;
  /** Set when the runner itself failed in a way its counts do not show. */
  problem?: string;
}

const DENO = "./node_modules/.bin/deno";
const NODE = "./node_modules/.bin/node";

function lastCount(output: string, pattern: RegExp): number | undefined {
  const matches = [...output.matchAll(pattern)];
  return matches.length ? Number(matches[matches.length - 1][1]) : undefined;
}

async function runDeno(): Promise<Tally> {
  const files = await testFiles("deno");
  const { code, output } = await runTee(DENO, ["test", "-A", "--no-prompt", ...files], {
    env: { NO_COLOR: "1" },
  });
  // deno test ends with e.g. "ok | 12 passed | 0 failed" or "FAILED | 11 passed | 1 failed".
  const passed = lastCount(output, /\| (\d+) passed/g) ?? 0;
  const failed = lastCount(output, /\| (\d+) failed/g) ?? 0;
  return tally("deno", passed, failed, code);
}

async function runNode(): Promise<Tally> {
  await build();
  const files = await buildNodeTests(await testFiles("node"));
  const { code, output } = await runTee(NODE, ["--test", "--test-reporter=spec", ...files]);
  const passed = lastCount(output, /ℹ pass (\d+)/g) ?? 0;
  const failed = lastCount(output, /ℹ fail (\d+)/g) ?? 0;
  return tally("node", passed, failed, code);
}

async function runBrowser(): Promise<Tally> {
  await buildBrowserTests(await testFiles("browser"));
  const result = await runBrowserTests();
  return tally("browser", result.passed, result.failed, result.failed > 0 ? 1 : 0);
}

function tally(runtime: TestRuntime, passed: number, failed: number, exitCode: number): Tally {
  const t: Tally = { runtime, passed, failed };
  if (exitCode !== 0 && failed === 0) {
    t.problem = `runner exited with ${exitCode} but reported no failed test`;
  }
  if (exitCode === 0 && passed === 0) t.problem = "no test ran";
  return t;
}

const RUNNERS: Record<TestRuntime, () => Promise<Tally>> = {
  deno: runDeno,
  node: runNode,
  browser: runBrowser,
};

async function main(): Promise<number> {
  const only = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
  const runtimes = (["deno", "node", "browser"] as TestRuntime[]).filter((r) =>
    !only || only.includes(r)
  );
  const tallies: Tally[] = [];
  for (const runtime of runtimes) {
    console.log(`\n━━ ${runtime} ━━`);
    try {
      tallies.push(await RUNNERS[runtime]());
    } catch (err) {
      tallies.push({ runtime, passed: 0, failed: 0, problem: (err as Error).stack ?? String(err) });
    }
  }
  await stopBundler();

  console.log("\n━━ summary ━━");
  let passed = 0;
  let failed = 0;
  for (const t of tallies) {
    // A runner that broke without counting a failure still counts as one failure.
    const tFailed = t.failed + (t.problem ? 1 : 0);
    passed += t.passed;
    failed += tFailed;
    console.log(
      `${t.runtime.padEnd(8)} ${t.passed} passed, ${tFailed} failed${
        t.problem ? `  (${t.problem})` : ""
      }`,
    );
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

Deno.exit(await main());
