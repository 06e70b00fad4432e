/**
 * Runs the browser test bundle in Chromium: serves the project on 127.0.0.1, opens
 * web/test/index.html, and collects each test's report through exposed functions.
 */
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
    await page.goto(`${server.origin}/web/test/index.html`);
    const timedOut = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), RUN_TIMEOUT_MS)),
    ]);
    if (timedOut) {
      recordFailure(result, "browser run", `did not finish within ${RUN_TIMEOUT_MS / 1000} s`);
    }
    // An error outside any test (a module that fails to load) is a failure too.
    for (const error of pageErrors) recordFailure(result, "uncaught page error", error);
  } finally {
    await browser.close();
    await server.close();
  }
  return result;
}

function recordFailure(result: BrowserTestResult, name: string, error: string): void {
  result.failed++;
  result.failures.push({ name, error });
  console.log(`  FAIL ${name}\n${indent(error)}`);
}

function indent(text: string): string {
  return text.split("\n").map((line) => `       ${line}`).join("\n");
}
