/**
 * The todo example (examples/todo-web/) driven end to end through its own UI in two Chromium
 * profiles (separate OPFS, separate sessions) and its own sync server: profile A makes a list, a
 * todo and a note and B sees them; the sync server stops, both edit while offline (a todo each;
 * A appends to the note, B prepends to it); the server comes back, both reconnect, and both show
 * the same three todos and the same note holding both edits.
 */
import type { Page } from "playwright-core";
import { startTodoApp } from "../../examples/todo-web/serve.ts";
import type { StoragePageCheck } from "./browser_storage_pages.ts";
import { launchChromium, type LaunchedBrowser } from "./chromium.ts";

export const EXAMPLE_APP_CHECKS: readonly StoragePageCheck[] = [
  {
    name: "the todo example in two profiles: both edit offline, reconnect and show the same list",
    run: todoInTwoProfiles,
  },
];

const WAIT_MS = 20_000;

async function todoInTwoProfiles(): Promise<void> {
  const data = await Deno.makeTempDir({ prefix: "cairn-todo-example-" });
  const app = await startTodoApp({ port: 0, syncPort: 0, data });
  const browsers: LaunchedBrowser[] = [];
  try {
    for (let i = 0; i < 2; i++) browsers.push(await launchChromium());
    const [a, b] = await Promise.all(browsers.map(({ context }) => context.newPage()));
    for (const page of [a, b]) await page.goto(app.url);
    await Promise.all([status(a, "synced"), status(b, "synced")]);

    await enter(a, "new-list", "Groceries");
    await enter(a, "new-todo", "bread");
    await a.fill('[data-testid="note"]', "wholemeal");
    await shows(b, { titles: ["bread"], note: "wholemeal" }, "B sees A's list, todo and note");

    await app.stopSync();
    await Promise.all([status(a, "offline"), status(b, "offline")]);
    await enter(a, "new-todo", "milk");
    await enter(b, "new-todo", "eggs");
    await a.fill(
      '[data-testid="todo"][data-title="bread"] [data-testid="note"]',
      "wholemeal, sliced",
    );
    await b.fill(
      '[data-testid="todo"][data-title="bread"] [data-testid="note"]',
      "fresh wholemeal",
    );

    await app.startSync();
    for (const [name, page] of [["A", a], ["B", b]] as const) {
      await shows(
        page,
        { titles: ["bread", "eggs", "milk"], note: "fresh wholemeal, sliced" },
        `${name} shows both profiles' offline todos and the merged note`,
      );
    }
  } finally {
    for (const browser of browsers) await browser.close();
    await app.close();
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
}

/** Types `text` into the input with this test id and presses Enter. */
async function enter(page: Page, testId: string, text: string): Promise<void> {
  const input = page.locator(`[data-testid="${testId}"]`);
  await input.fill(text);
  await input.press("Enter");
}

async function status(page: Page, wanted: string): Promise<void> {
  await page.waitForFunction(
    (wanted) => document.querySelector('[data-testid="sync-status"]')?.textContent === wanted,
    wanted,
    { timeout: WAIT_MS },
  );
}

interface Shown {
  /** Every todo's title in the list shown, sorted. */
  titles: string[];
  /** The note of the todo "bread". */
  note: string | undefined;
}

/** What the page shows (run in the page). */
function shown(): Shown {
  const todos = [...document.querySelectorAll<HTMLElement>('[data-testid="todo"]')];
  const bread = todos.find((li) => li.dataset.title === "bread");
  return {
    titles: todos.map((li) => li.dataset.title ?? "").sort(),
    note: bread?.querySelector<HTMLTextAreaElement>('[data-testid="note"]')?.value,
  };
}

/** Waits until the page shows `wanted` (fields left out are not compared); fails naming `what`. */
async function shows(page: Page, wanted: Partial<Shown>, what: string): Promise<void> {
  try {
    // An expression, so that `shown` (a plain function, no closure) runs in the page.
    const check = `Object.entries(${JSON.stringify(wanted)}).every(([key, value]) => ` +
      `JSON.stringify((${shown})()[key]) === JSON.stringify(value))`;
    await page.waitForFunction(check, undefined, { timeout: WAIT_MS });
  } catch {
    const now = await page.evaluate(`(${shown})()`).catch((err) => String(err));
    throw new Error(`${what}: the page shows ${JSON.stringify(now)}`);
  }
}
