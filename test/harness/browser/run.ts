/**
 * Runs the tests registered through the node:test stand-in, one after another, and reports
 * each result to the driver (scripts/lib/browser_tests.ts) through functions it exposes on
 * the page. Also renders results into the page for a person who opens it by hand.
 */
import { registeredTests } from "./node_test.ts";

interface Report {
  name: string;
  file: string;
  ok: boolean;
  error?: string;
  ms: number;
}

declare global {
  // Set by playwright's exposeFunction when a driver runs the page; absent when opened by hand.
  var __cairnReport: ((report: Report) => Promise<void>) | undefined;
  var __cairnDone: ((summary: { passed: number; failed: number }) => Promise<void>) | undefined;
}

const DEFAULT_TIMEOUT_MS = 120_000;

function withTimeout(run: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([run, timeout]).finally(() => clearTimeout(timer));
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    return err.stack && err.stack.includes(err.message)
      ? err.stack
      : `${err.message}\n${err.stack ?? ""}`;
  }
  return String(err);
}

function show(report: Report): void {
  const line = document.createElement("li");
  line.textContent =
    `${report.ok ? "ok" : "FAIL"}  ${report.file} › ${report.name}  (${report.ms.toFixed(1)} ms)` +
    (report.error ? `\n${report.error}` : "");
  line.className = report.ok ? "ok" : "fail";
  document.getElementById("results")?.append(line);
}

export async function runRegisteredTests(): Promise<void> {
  let passed = 0;
  let failed = 0;
  for (const t of registeredTests) {
    const start = performance.now();
    let error: string | undefined;
    try {
      await withTimeout(Promise.resolve().then(t.fn), t.options.timeout ?? DEFAULT_TIMEOUT_MS);
    } catch (err) {
      error = describeError(err);
    }
    const report: Report = {
      name: t.name,
      file: t.file,
      ok: error === undefined,
      error,
      ms: performance.now() - start,
    };
    if (report.ok) passed++;
    else failed++;
    show(report);
    await globalThis.__cairnReport?.(report);
  }
  const summary = document.getElementById("summary");
  if (summary) summary.textContent = `${passed} passed, ${failed} failed`;
  await globalThis.__cairnDone?.({ passed, failed });
}
