/**
 * The one test command (`npm test` / `deno task test`): runs the suite on Deno, on Node 24
 * against the built package, and in Chromium; prints per-runtime counts and a last line
 * `N passed, N failed`. Exits non-zero if any test fails in any runtime.
 *
 * A fourth section, "package", packs the npm package and checks that a scratch Node project can
 * import it with types.
 *
 * Options: --only=deno,node,browser,package   run a subset of the sections
 */
import {
  buildBrowserTests,
  buildBundledApp,
  buildNodeTests,
  buildViteApp,
  stopBundler,
} from "./lib/bundles.ts";
import { runBrowserTests } from "./lib/browser_tests.ts";
import { runTee } from "./lib/process.ts";
import { testFiles, type TestRuntime } from "./lib/test_files.ts";
import { countJUnit } from "./lib/junit.ts";
import { checkPackage } from "./lib/package_check.ts";
import { build } from "./build.ts";

type Section = TestRuntime | "package";

interface Tally {
  runtime: Section;
  passed: number;
  failed: number;
  /** Tests the runner skipped (each says why where it is skipped; see docs/testing.md). */
  skipped: number;
  /** Set when the runner itself failed in a way its counts do not show. */
  problem?: string;
}

const DENO = "./node_modules/.bin/deno";
const NODE = "./node_modules/.bin/node";

/** Where the runners write their JUnit reports, which the counts are read from. */
const JUNIT_DIR = "build/junit";

/** A runner's counts from the JUnit report it wrote; a missing report is a problem, not a pass. */
async function junitTally(runtime: Section, report: string, exitCode: number): Promise<Tally> {
  let xml: string;
  try {
    xml = await Deno.readTextFile(report);
  } catch {
    return { runtime, passed: 0, failed: 0, skipped: 0, problem: `no JUnit report at ${report}` };
  }
  const { passed, failed, skipped } = countJUnit(xml);
  return tally(runtime, passed, failed, exitCode, skipped);
}

async function runDeno(): Promise<Tally> {
  const files = await testFiles("deno");
  const report = `${JUNIT_DIR}/deno.xml`;
  await Deno.mkdir(JUNIT_DIR, { recursive: true });
  await Deno.remove(report).catch(() => {});
  const { code } = await runTee(DENO, [
    "test",
    "-A",
    "--no-prompt",
    // Fails the run on an error thrown outside any test's promise, which Deno's node:test passes.
    "--preload=test/harness/uncaught_guard.ts",
    `--junit-path=${report}`,
    ...files,
  ], { env: { NO_COLOR: "1" } });
  return await junitTally("deno", report, code);
}

async function runNode(): Promise<Tally> {
  const files = await buildNodeTests(await testFiles("node"));
  const report = `${JUNIT_DIR}/node.xml`;
  await Deno.mkdir(JUNIT_DIR, { recursive: true });
  await Deno.remove(report).catch(() => {});
  const { code } = await runTee(NODE, [
    "--test",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=junit",
    `--test-reporter-destination=${report}`,
    ...files,
  ]);
  return await junitTally("node", report, code);
}

async function runBrowser(): Promise<Tally> {
  await Promise.all([
    buildBrowserTests(await testFiles("browser")),
    buildBundledApp(),
    buildViteApp(),
  ]);
  const result = await runBrowserTests();
  return tally("browser", result.passed, result.failed, result.failed > 0 ? 1 : 0);
}

async function runPackage(): Promise<Tally> {
  const checks = await checkPackage();
  for (const check of checks) {
    console.log(
      `  ${check.ok ? "ok  " : "FAIL"} ${check.name}${check.ok ? "" : `\n${check.detail}`}`,
    );
  }
  const failed = checks.filter((c) => !c.ok).length;
  return tally("package", checks.length - failed, failed, failed ? 1 : 0);
}

function tally(
  runtime: Section,
  passed: number,
  failed: number,
  exitCode: number,
  skipped = 0,
): Tally {
  const t: Tally = { runtime, passed, failed, skipped };
  if (exitCode !== 0 && failed === 0) {
    t.problem = `runner exited with ${exitCode} but reported no failed test`;
  }
  if (exitCode === 0 && passed === 0) t.problem = "no test ran";
  return t;
}

const RUNNERS: Record<Section, () => Promise<Tally>> = {
  deno: runDeno,
  node: runNode,
  browser: runBrowser,
  package: runPackage,
};
const SECTIONS: Section[] = ["deno", "node", "browser", "package"];
/**
 * Sections that use the built package in dist/ (built once, before the first of them): the Deno
 * section too, whose cross-runtime tests start Node children on it.
 */
const NEEDS_BUILD: Section[] = ["deno", "node", "browser", "package"];

async function main(): Promise<number> {
  const only = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
  const sections = SECTIONS.filter((section) => !only || only.includes(section));
  const tallies: Tally[] = [];
  let built = false;
  for (const section of sections) {
    console.log(`\n━━ ${section} ━━`);
    try {
      if (NEEDS_BUILD.includes(section) && !built) {
        await build();
        built = true;
      }
      tallies.push(await RUNNERS[section]());
    } catch (err) {
      tallies.push({
        runtime: section,
        passed: 0,
        failed: 0,
        skipped: 0,
        problem: (err as Error).stack ?? String(err),
      });
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
    const skipped = t.skipped > 0 ? `, ${t.skipped} skipped` : "";
    console.log(
      `${t.runtime.padEnd(8)} ${t.passed} passed, ${tFailed} failed${skipped}${
        t.problem ? `  (${t.problem})` : ""
      }`,
    );
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

Deno.exit(await main());
