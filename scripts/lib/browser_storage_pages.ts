/**
 * Storage checks that need real pages rather than one test page (issue #4): a database that
 * must survive its tab navigating away, in a plain page and in an app bundled with esbuild or
 * with Vite (the tabs of one database: browser_tabs_pages.ts). Each check drives a page under
 * test/web/ (or an app built from one) through several steps; a step that fails rejects with the
 * step's name and the page's message.
 */
import type { BrowserContext, Page } from "playwright-core";

export interface StoragePageCheck {
  readonly name: string;
  /** Resolves when every step passed; rejects with what went wrong. */
  run(context: BrowserContext, origin: string): Promise<void>;
}

export const STORAGE_PAGE_CHECKS: readonly StoragePageCheck[] = [
  {
    name: "OPFS database survives a page reload: lock released, same values, session and index",
    run: (context, origin) =>
      checkReloadAt(context, origin, "/test/web/storage-reload/index.html", "reload"),
  },
  {
    name: 'an app bundling "cairndb" with esbuild keeps its OPFS database across a reload',
    run: (context, origin) =>
      checkReloadAt(context, origin, "/test/web/bundled-reload/index.html", "bundled"),
  },
  {
    name: 'an app bundling "cairndb" with Vite keeps its OPFS database across a reload',
    run: (context, origin) => checkReloadAt(context, origin, "/build/vite-app/index.html", "vite"),
  },
];

const STEP_TIMEOUT_MS = 30_000;

/**
 * Writes in a tab and leaves the database open, then navigates the tab to the read phase: in a
 * plain page, or in an app bundled from the package name (test/web/bundled-reload/app.ts) by
 * esbuild (build/apps/) or by Vite (build/vite-app/).
 */
async function checkReloadAt(
  context: BrowserContext,
  origin: string,
  page: string,
  kind: string,
): Promise<void> {
  const db = uniqueName(kind);
  const tab = await openTab(context);
  try {
    const url = (phase: string) => `${origin}${page}?phase=${phase}&db=${db}`;
    await loadPhase(tab, url("write"), "write phase");
    await loadPhase(tab, url("read"), "read phase, after navigating the same tab");
  } finally {
    await tab.page.close();
  }
}

export interface Tab {
  page: Page;
  /** Uncaught errors and console errors of the tab, added to a failing step's message. */
  errors: string[];
}

export async function openTab(context: BrowserContext): Promise<Tab> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`uncaught: ${err.stack ?? err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(`console: ${msg.text()}`);
  });
  return { page, errors };
}

/**
 * Loads a phase and waits for the page to report it: status "ok" passes (resolving with the
 * page's #out text), anything else fails.
 */
export async function loadPhase(tab: Tab, url: string, step: string): Promise<string> {
  let status: string | undefined;
  let text = "";
  try {
    await tab.page.goto(url);
    await tab.page.waitForSelector("body[data-status]", { timeout: STEP_TIMEOUT_MS });
    [status, text] = await tab.page.evaluate(() => [
      document.body.dataset.status,
      document.getElementById("out")?.textContent ?? "",
    ]);
  } catch (err) {
    throw stepFailure(tab, step, String(err));
  }
  if (status !== "ok") throw stepFailure(tab, step, text);
  return text;
}

/**
 * Calls a step the page exposes as `cairnTabs[name](arg)`; resolves with what it returns (a
 * string), or rejects with the step's name and the page's message.
 */
export async function callStep(
  tab: Tab,
  name: string,
  step: string,
  arg?: number,
): Promise<string> {
  try {
    return await tab.page.evaluate(async ([name, arg]) => {
      const steps = (globalThis as unknown as {
        cairnTabs?: Record<string, (arg?: number) => Promise<string> | string>;
      }).cairnTabs;
      const run = steps?.[name as string];
      if (!run) throw new Error(`the page exposes no step "${name}"`);
      return String(await run(arg as number | undefined));
    }, [name, arg] as const);
  } catch (err) {
    throw stepFailure(tab, step, err instanceof Error ? err.message : String(err));
  }
}

function stepFailure(tab: Tab, step: string, message: string): Error {
  const extra = tab.errors.length ? `\n${tab.errors.join("\n")}` : "";
  return new Error(`${step}: ${message}${extra}`);
}

/** One OPFS directory per run, so a leftover from an aborted run cannot be mistaken for ours. */
export function uniqueName(kind: string): string {
  return `cairn-page-${kind}-${crypto.randomUUID()}`;
}
