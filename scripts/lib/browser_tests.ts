/**
 * Runs the browser test bundle in Chromium: serves the project on 127.0.0.1, opens
 * test/web/suite/index.html, and collects each test's report through exposed functions; then checks
 * the example pages and the multi-step storage pages (browser_storage_pages.ts).
 */
import type { BrowserContext } from "playwright-core";
import { STORAGE_PAGE_CHECKS } from "./browser_storage_pages.ts";
import { EXAMPLE_APP_CHECKS } from "./browser_example_pages.ts";
import { SYNC_PAGE_CHECKS } from "./browser_sync_pages.ts";
import { TAB_PAGE_CHECKS } from "./browser_tabs_pages.ts";
import { launchChromium } from "./chromium.ts";
import { serveStatic } from "./static_server.ts";

export interface BrowserTestResult {
  passed: number;
  failed: number;
  failures: { name: string; error: string }[];
}

interface Report {
  name: string;
  file: string;
  ok: boolean;
  error?: string;
  ms: number;
}

/** Longest a whole browser run may take before it counts as failed. */
const RUN_TIMEOUT_MS = 20 * 60_000;
/** Example pages that prove the library loads the ways users load it. */
const EXAMPLE_PAGES = [
  {
    name: "plain <script type=module> page imports dist/browser/cairn.js",
    path: "/test/web/plain/index.html",
  },
  { name: 'app bundling "cairndb" with esbuild', path: "/test/web/bundled/index.html" },
  {
    name: "a CSP without blob: workers: E_IO names the fix, and workerUrl opens OPFS storage",
    path: "/test/web/strict-csp/index.html",
  },
];
const PAGE_TIMEOUT_MS = 30_000;

export async function runBrowserTests(): Promise<BrowserTestResult> {
  const server = await serveStatic(".");
  const browser = await launchChromium();
  const result: BrowserTestResult = { passed: 0, failed: 0, failures: [] };
  try {
    const page = await browser.context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.stack ?? err.message));
    page.on("console", (msg) => {
      if (msg.type() === "error") console.error(`  [chromium console] ${msg.text()}`);
    });
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    await page.exposeFunction("__cairnReport", (report: Report) => {
      const label = `${report.file} › ${report.name}`;
      if (report.ok) {
        result.passed++;
        console.log(`  ok   ${label} (${report.ms.toFixed(0)} ms)`);
      } else {
        result.failed++;
        result.failures.push({ name: label, error: report.error ?? "" });
        console.log(`  FAIL ${label}\n${indent(report.error ?? "")}`);
      }
    });
    await page.exposeFunction("__cairnDone", () => finish());
    await page.goto(`${server.origin}/test/web/suite/index.html`);
    const timedOut = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), RUN_TIMEOUT_MS)),
    ]);
    if (timedOut) {
      recordFailure(result, "browser run", `did not finish within ${RUN_TIMEOUT_MS / 1000} s`);
    }
    // An error outside any test (a module that fails to load) is a failure too.
    for (const error of pageErrors) recordFailure(result, "uncaught page error", error);
    for (const example of EXAMPLE_PAGES) {
      await checkExamplePage(browser.context, server.origin, example, result);
    }
    for (
      const check of [
        ...STORAGE_PAGE_CHECKS,
        ...SYNC_PAGE_CHECKS,
        ...TAB_PAGE_CHECKS,
        ...EXAMPLE_APP_CHECKS,
      ]
    ) {
      try {
        await check.run(browser.context, server.origin);
        result.passed++;
        console.log(`  ok   page › ${check.name}`);
      } catch (err) {
        recordFailure(
          result,
          `page › ${check.name}`,
          err instanceof Error ? err.message : String(err),
        );
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
  return result;
}

async function checkExamplePage(
  context: BrowserContext,
  origin: string,
  example: { name: string; path: string },
  result: BrowserTestResult,
): Promise<void> {
  const page = await context.newPage();
  try {
    await page.goto(`${origin}${example.path}`);
    await page.waitForSelector("body[data-status]", { timeout: PAGE_TIMEOUT_MS });
    const status = await page.evaluate(() => document.body.dataset.status);
    const text = await page.evaluate(() => document.getElementById("out")?.textContent ?? "");
    if (status === "ok") {
      result.passed++;
      console.log(`  ok   page › ${example.name}`);
    } else recordFailure(result, `page › ${example.name}`, text);
  } catch (err) {
    recordFailure(result, `page › ${example.name}`, String(err));
  } finally {
    await page.close();
  }
}

function recordFailure(result: BrowserTestResult, name: string, error: string): void {
  result.failed++;
  result.failures.push({ name, error });
  console.log(`  FAIL ${name}\n${indent(error)}`);
}

function indent(text: string): string {
  return text.split("\n").map((line) => `       ${line}`).join("\n");
}
