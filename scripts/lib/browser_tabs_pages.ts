/**
 * The leader election across real pages of one persistent profile (web/tabs-election/): three
 * pages join the election of one directory, the leader's page is closed, and another page must
 * take the lead. Waits are bounded polls on each page's role; how long the takeover took is
 * printed, never asserted.
 *
 * Not here (docs/browser.md, "Many tabs"): a crashed leader (DevTools `Page.crash` took the other
 * pages of the site down with it in this headless Chromium) and a frozen one
 * (`Page.setWebLifecycleState` "frozen" left the page's timers running: its heartbeats kept
 * arriving), so the steal is tested in one page with a leader made silent (test/browser/tabs.test.ts).
 */
import type { BrowserContext, Page } from "playwright-core";
import {
  loadPhase,
  openTab,
  type StoragePageCheck,
  type Tab,
  uniqueName,
} from "./browser_storage_pages.ts";

export const TAB_PAGE_CHECKS: readonly StoragePageCheck[] = [
  { name: "tabs: the leader's page closed, another page takes the lead", run: takeover },
];

const WAIT_MS = 15_000;

async function role(page: Page): Promise<string> {
  return await page.evaluate(() =>
    (globalThis as unknown as { cairnElection: { role(): string } }).cairnElection.role()
  );
}

/** The pages (among `tabs`) that say they lead, once exactly one does. */
async function soleLeader(tabs: Tab[], what: string): Promise<Tab> {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const roles = await Promise.all(tabs.map((tab) => role(tab.page)));
    const leaders = tabs.filter((_, i) => roles[i] === "leader");
    if (leaders.length === 1) return leaders[0];
    if (Date.now() > end) {
      const seen = await Promise.all(
        tabs.map((tab) =>
          tab.page.evaluate(() =>
            `${document.visibilityState}, heard ${
              (globalThis as unknown as { cairnElection: { heard(): number } }).cairnElection
                .heard()
            }`
          ).catch((err) => String(err))
        ),
      );
      throw new Error(`${what}: roles are ${roles.join(", ")} (pages ${seen.join(", ")})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function takeover(context: BrowserContext, origin: string): Promise<void> {
  const url = `${origin}/web/tabs-election/index.html?dir=${uniqueName("election")}`;
  const tabs: Tab[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const tab = await openTab(context);
      tabs.push(tab);
      await loadPhase(tab, url, `page ${i} joins the election`);
    }
    const leader = await soleLeader(tabs, "one leader among three pages");
    const started = Date.now();
    await leader.page.close();
    await soleLeader(tabs.filter((tab) => tab !== leader), "a new leader after the leader closed");
    console.log(`       (a new leader ${Date.now() - started} ms after the close)`);
  } finally {
    for (const tab of tabs) await tab.page.close().catch(() => {});
  }
}
