/**
 * Runs the bench page (web/bench/) in headless Chromium with a fresh persistent profile
 * (scripts/lib/chromium.ts), served on 127.0.0.1 with COOP/COEP. The page reports through
 * exposed functions; heap figures come from the DevTools protocol (after a forced GC); the sync
 * rows' server and other clients are Deno processes started here for the page
 * (bench/sync/host_bridge.ts).
 */
import { launchChromium } from "../../scripts/lib/chromium.ts";
import { serveStatic } from "../../scripts/lib/static_server.ts";
import type { RuntimeResult } from "../lib/envelope.ts";
import type { Message, Settings } from "../lib/types.ts";
import { bridgeCalls } from "../sync/host_bridge.ts";
import { processSyncHost } from "../sync/processes.ts";
import { buildBrowserBench } from "./build.ts";
import type { Collector } from "./collect.ts";

/**
 * Longest a browser run may take: it catches a page that hangs, not a slow run. A full run's
 * Chromium section reached 30 min once X01g–i (a write to OPFS per transaction) joined it.
 */
const TIMEOUT_MS = 60 * 60_000;

export function benchPageUrl(origin: string, settings?: Settings): string {
  const url = new URL("/web/bench/index.html", origin);
  if (settings) {
    url.searchParams.set("auto", "1");
    if (settings.quick) url.searchParams.set("quick", "1");
    if (settings.filter) url.searchParams.set("filter", settings.filter);
  }
  return url.href;
}

export async function runBrowserRuntime(
  settings: Settings,
  collector: Collector,
  echo: (text: string) => void,
): Promise<RuntimeResult> {
  await buildBrowserBench();
  const server = await serveStatic(".");
  const browser = await launchChromium();
  const syncHost = processSyncHost("deno");
  let problem: string | undefined;
  try {
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    page.on("pageerror", (err) => echo(`  [chromium] page error: ${err.stack ?? err.message}`));
    page.on("console", (msg) => {
      if (msg.type() === "error" || msg.type() === "warning") {
        echo(`  [chromium ${msg.type()}] ${msg.text()}`);
      }
    });
    let finished: () => void = () => {};
    const done = new Promise<void>((resolve) => (finished = resolve));
    await page.exposeFunction("__benchEmit", (message: Message) => {
      collector.accept(message);
      if (collector.done) finished();
    });
    await page.exposeFunction("__benchHeap", async () => {
      await cdp.send("HeapProfiler.collectGarbage");
      const usage = await cdp.send("Runtime.getHeapUsage");
      // backingStorageSize: ArrayBuffer contents, which usedSize leaves out.
      return usage.usedSize + (usage.backingStorageSize ?? 0);
    });
    await page.exposeFunction("__benchSync", bridgeCalls(syncHost));
    await page.goto(benchPageUrl(server.origin, settings));
    // A page that crashes or closes (its browser killed) ends the run at once, not at the timeout.
    const ended = new Promise<string>((resolve) => {
      page.on("crash", () => resolve("the page crashed"));
      page.on("close", () => resolve("the page closed (its browser ended?)"));
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      done.then(() => undefined),
      ended,
      new Promise<string>((resolve) =>
        timer = setTimeout(
          () => resolve(`did not finish within ${TIMEOUT_MS / 60_000} min`),
          TIMEOUT_MS,
        )
      ),
    ]);
    clearTimeout(timer);
    if (outcome) problem = `${outcome}, after ${collector.result.rows.length} row(s)`;
  } catch (err) {
    problem = String((err as Error)?.stack ?? err);
  } finally {
    // A browser that died cannot be closed; what ended it is the problem to report.
    await browser.close().catch((err) => problem ??= `closing the browser: ${err?.message ?? err}`);
    await syncHost.stopAll();
    await server.close();
  }
  return collector.finish(problem);
}
