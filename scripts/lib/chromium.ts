/**
 * Launches the system Chromium through playwright-core with a fresh persistent profile
 * (an incognito context's OPFS is 15–150× slower) and flags that keep it off the network.
 */
import { type BrowserContext, chromium } from "playwright-core";
import { existsSync } from "node:fs";

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
  const path = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";
  if (!existsSync(path)) {
    throw new Error(`Chromium not found at ${path}: run scripts/setup.sh or set CHROMIUM_PATH`);
  }
  return path;
}

export interface LaunchedBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<LaunchedBrowser> {
  const profile = await Deno.makeTempDir({ prefix: "cairn-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    args: FLAGS,
    headless: true,
  });
  return {
    context,
    async close() {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
