/**
 * Launches the system Chromium through playwright-core with a fresh persistent profile
 * (an incognito context's OPFS is 15–150× slower) and flags that keep it off the network.
 * Node APIs only, so tests on Node (the bench page test) launch it the same way as the scripts.
 */
import { type BrowserContext, chromium } from "playwright-core";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(path)) {
    throw new Error(`Chromium not found at ${path}: run scripts/setup.sh or set CHROMIUM_PATH`);
  }
  return path;
}

export interface LaunchedBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export interface LaunchOptions {
  viewport?: { width: number; height: number };
  /**
   * Keeps Chromium's back/forward cache on: playwright turns it off by default (a page left by a
   * navigation is then always ended, and a back navigation loads it again).
   */
  backForwardCache?: boolean;
}

export async function launchChromium(
  { viewport, backForwardCache = false }: LaunchOptions = {},
): Promise<LaunchedBrowser> {
  const profile = await mkdtemp(join(tmpdir(), "cairn-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    args: FLAGS,
    headless: true,
    ...(viewport ? { viewport } : {}),
    ...(backForwardCache ? { ignoreDefaultArgs: ["--disable-back-forward-cache"] } : {}),
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true }).catch(() => {});
    },
  };
}
