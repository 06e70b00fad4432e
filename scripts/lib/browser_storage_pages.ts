/**
 * Storage checks that need real pages rather than one test page (issue #4): a database that
 * must survive its tab navigating away, and two tabs contending for one database. Each check
 * drives a page under web/ that imports the built package (dist/browser/cairn.js) through
 * several steps; a step that fails rejects with the step's name and the page's message.
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
    run: checkReload,
  },
  {
    name: 'an app bundling "cairndb" with esbuild keeps its OPFS database across a reload',
    run: checkBundledReload,
  },
  {
    name: "a second tab gets E_LOCKED while the first holds the database, then opens it",
    run: checkTwoTabs,
  },
];

const STEP_TIMEOUT_MS = 30_000;

/** Write in a tab and leave the database open; navigate the tab to the read phase. */
async function checkReload(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("reload");
  const tab = await openTab(context);
  try {
    const url = (phase: string) =>
      `${origin}/web/storage-reload/index.html?phase=${phase}&db=${db}`;
    await loadPhase(tab, url("write"), "write phase");
    await loadPhase(tab, url("read"), "read phase, after navigating the same tab");
  } finally {
    await tab.page.close();
  }
}

/** The same, in an app esbuild bundled from the package name (web/bundled-reload/). */
async function checkBundledReload(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("bundled");
  const tab = await openTab(context);
  try {
    const url = (phase: string) =>
      `${origin}/web/bundled-reload/index.html?phase=${phase}&db=${db}`;
    await loadPhase(tab, url("write"), "write phase");
    await loadPhase(tab, url("read"), "read phase, after navigating the same tab");
  } finally {
    await tab.page.close();
  }
}

/** Tab A holds the database; tab B must get E_LOCKED, and succeed once A closes it. */
async function checkTwoTabs(context: BrowserContext, origin: string): Promise<void> {
  const db = uniqueName("tabs");
  const url = (phase: string) => `${origin}/web/storage-tabs/index.html?phase=${phase}&db=${db}`;
  const first = await openTab(context);
  let second: Tab | undefined;
  try {
    await loadPhase(first, url("hold"), "tab A opens the database");
    second = await openTab(context);
    await loadPhase(second, url("contend"), "tab B opens it while tab A holds it");
    await callStep(first, "close", "tab A closes the database");
    await callStep(second, "retry", "tab B opens it again");
  } finally {
    await second?.page.close();
    await first.page.close();
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

/** Calls a step the page exposes as `cairnTabs[name]()`; it resolves or rejects with a message. */
async function callStep(tab: Tab, name: string, step: string): Promise<void> {
  try {
    await tab.page.evaluate(async (name) => {
      const steps = (globalThis as unknown as { cairnTabs?: Record<string, () => Promise<string>> })
        .cairnTabs;
      const run = steps?.[name];
      if (!run) throw new Error(`the page exposes no step "${name}"`);
      await run();
    }, name);
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
