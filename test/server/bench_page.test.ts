// The bench page as a person uses it (`deno task bench:serve`), in headless Chromium: it opens
// with the committed run's charts and fits a 1,400 px window, the picks change what is drawn,
// and a quick run shows "row k of N" with the time left, then its own charts beside the
// committed ones, labelled with the sizes it ran. With CAIRN_PAGE_SHOTS=<dir> it saves the
// screenshots docs/benchmarks.md shows (page-results.png, page-running.png, page-compare.png).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import type { Page } from "playwright-core";
import { buildBrowserBench } from "../../bench/drivers/build.ts";
import { plannedCells } from "../../bench/entry/suite.ts";
import { launchChromium } from "../../scripts/lib/chromium.ts";
import { serveStatic } from "../../scripts/lib/static_server.ts";

const WINDOW = { width: 1400, height: 900 };
const SHOTS = process.env.CAIRN_PAGE_SHOTS;
/** A small quick run: two workloads, each on the browser's contenders. */
const RUN_FILTER = "W0[45]";
/** Its rows, as the page counts them ("Row k of N"). */
const RUN_ROWS = plannedCells("browser", { quick: true, filter: RUN_FILTER }).length;

/** The newest committed run of every runtime (a file name starts with when it ran). */
async function committedEnvelope(): Promise<string> {
  const names = (await readdir("bench/results")).filter((n) => n.endsWith(".json")).sort();
  for (const name of names.reverse()) {
    const path = `bench/results/${name}`;
    const { settings } = JSON.parse(await readFile(path, "utf8"));
    if (["deno", "node", "browser"].every((runtime) => settings.runtimes.includes(runtime))) {
      return path;
    }
  }
  assert.fail("bench/results/ holds no committed run of every runtime");
}

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, name) });
}

/** The text of every ratio drawn on the page. */
function barTexts(page: Page, scope = "main"): Promise<string[]> {
  return page.$$eval(
    `${scope} svg.ratio-chart g.bar`,
    (bars) => bars.map((bar) => bar.querySelector("text")?.textContent ?? ""),
  );
}

/** A bar's label: one ratio direction, the verdict in time's words or, for bytes, in size's. */
const ONE_WAY =
  /^(\d[\d,.]*×|1\/[\d,.]+) · (faster|slower|smaller|larger|tie|\d+ (faster|slower|tie).*)$/;

test("the bench page draws charts that fit the window, follows the picks and shows progress", {
  timeout: 240_000,
}, async () => {
  await buildBrowserBench();
  const server = await serveStatic(".");
  const browser = await launchChromium({ viewport: WINDOW });
  const errors: string[] = [];
  try {
    const page = await browser.context.newPage();
    page.on("pageerror", (err) => errors.push(err.message));
    const committed = await committedEnvelope();
    await page.goto(`${server.origin}/web/bench/index.html?load=${committed}`);
    await page.waitForSelector("svg.ratio-chart");

    // Opened with the committed run: charts for every runtime, nothing wider than the window.
    const charts = await page.$$eval("main svg.ratio-chart", (svgs) => svgs.length);
    assert.ok(charts >= 10, `charts drawn: ${charts}`);
    assert.equal(
      await page.evaluate(() => document.documentElement.scrollWidth),
      WINDOW.width,
      "the page fits a 1,400 px window",
    );
    const texts = (await barTexts(page)).filter((t) => /\d/.test(t));
    assert.ok(texts.length > 0);
    for (const text of texts) assert.match(text, ONE_WAY);
    await shot(page, "page-results.png");

    // Unticking a contender takes its bars away; ticking it brings them back.
    const trusted = 'g.bar[data-key="cairn-trusted"]';
    assert.ok((await page.$$(trusted)).length > 0);
    await page.click('input[data-choice="contender:cairn-trusted"]');
    assert.equal((await page.$$(trusted)).length, 0);
    await page.click('input[data-choice="contender:cairn-trusted"]');
    assert.ok((await page.$$(trusted)).length > 0);

    // A quick run of this browser, beside the committed run's Chromium rows: "row k of N" and
    // the time left while it runs, its charts filling in.
    await page.click('input[data-choice="runtime:deno"]');
    await page.click('input[data-choice="runtime:node"]');
    assert.deepEqual(
      await page.$$eval("section.runtime", (s) => s.map((e) => e.getAttribute("data-runtime"))),
      ["browser"],
    );
    await page.check("#quick");
    await page.fill("#filter", RUN_FILTER);
    await page.click("#run");
    // Past half the rows, with the time left shown.
    await page.waitForFunction(
      (rows) => {
        const shown = /^Row (\d+) of (\d+) · about .+ left/.exec(
          document.getElementById("progress")?.textContent ?? "",
        );
        return shown !== null && Number(shown[2]) === rows && Number(shown[1]) > rows / 2;
      },
      RUN_ROWS,
      { timeout: 120_000 },
    );
    await page.evaluate(() => scrollTo(0, 0));
    await shot(page, "page-running.png");
    await page.waitForSelector('#progress[data-state="done"]', { timeout: 180_000 });
    assert.match(
      await page.textContent("#progress") ?? "",
      new RegExp(`^Done: ${RUN_ROWS} rows in`),
    );

    // The run's column: its own charts, its rows labelled with the size they ran.
    const heads = await page.$$eval(".slot-head strong", (els) => els.map((e) => e.textContent));
    assert.deepEqual(heads, ["This run", committed]);
    const liveRows = await page.$$eval(
      'section[data-runtime="browser"] details .table-wrap:first-child tbody tr',
      (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)),
    );
    assert.deepEqual(liveRows.map((r) => r[0]), [
      "W04.v1 Create item",
      "W05.v1 Read item (one field)",
    ]);
    assert.equal(liveRows[1][1], "5k items");
    for (const text of (await barTexts(page)).filter((t) => /\d/.test(t))) {
      assert.match(text, ONE_WAY);
    }
    await page.evaluate(() =>
      document.querySelector('section[data-runtime="browser"]')?.scrollIntoView()
    );
    await shot(page, "page-compare.png");
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
