import { test } from "node:test";
import assert from "node:assert/strict";
import { countLabel } from "../../bench/lib/format.ts";
import {
  familyChart,
  runtimeLinesOf,
  summarized,
  summaryChart,
} from "../../bench/report/charts.ts";
import { renderBundleSizes } from "../../bench/report/bundle_sizes.ts";
import { renderRuntimeTable } from "../../bench/report/console_table.ts";
import { buildReport } from "../../bench/report/markdown.ts";
import { chooseSources } from "../../bench/report/merge.ts";
import { ratioText } from "../../bench/report/ratio.ts";
import { AXIS_DECADES, barEnd, svgChart } from "../../bench/report/svg_chart.ts";
import { textTable } from "../../bench/report/table.ts";
import { runtimeNotes, tableLines, targetText } from "../../bench/report/view.ts";
import { big } from "../../bench/workloads/common.ts";
import type { Envelope } from "../../bench/lib/envelope.ts";
import type { Row } from "../../bench/lib/types.ts";
import { WORKLOADS } from "../../bench/workloads/index.ts";
import { around, envelope, INFO, row } from "./rows.ts";

/** The report of one run, as `deno task bench:report run.json` writes it. */
function reportOf(run: Envelope) {
  return buildReport(chooseSources([{ path: "bench/results/test.json", envelope: run }]));
}

const RUN = envelope([
  // W09 on Deno as reported in #21: Cairn 539 ms (noisy), SQLite 387 ms: a tie, but Cairn's
  // time is 1.39× SQLite's, never "0.72×".
  row("W09.v1", "100k items + close", "cairn", [400, 450, 539, 650, 700]),
  row("W09.v1", "100k items + close", "sqlite-wal", around(387)),
  // Throughput: more ops/s is less time per operation.
  row("W19.v1", "100k items", "cairn", around(81_651)),
  row("W19.v1", "100k items", "sqlite-wal", around(63_337)),
  row("W05.v1", "100k items", "cairn", around(0.859)),
  row("W05.v1", "100k items", "sqlite-wal", around(8.05)),
  row("W04.v1", "one at a time", "cairn", around(96.8)),
  row("W04.v1", "one at a time", "sqlite-wal", around(25.7)),
  // Beyond the axis: 2,433× more time.
  row("W03.v1", "100k items", "cairn", around(2_433)),
  row("W03.v1", "100k items", "sqlite-wal", around(1)),
  row("W03.v1", "100k items", "sqlite-wasm-mem", [], {
    status: "not-applicable",
    reason: "in-memory database: there is nothing to reopen",
  }),
  // A cached result against a query run again: in the table, out of the charts.
  row("W13.v3", "100k → 10k", "cairn", around(0.033)),
  row("W13.v3", "100k → 10k", "sqlite-wal", around(60_745)),
  // Memory that did not grow is no figure.
  row("M01.v4", "100k items · every value read · RSS", "cairn", around(105)),
  row("M01.v4", "100k items · every value read · RSS", "sqlite-wal", [0.37, -813, 0.41]),
  row("M01.v4", "100k items · every value read · RSS", "sqlite-wasm-mem", [17, 0, 0]),
  row("D01.v1", "100k items", "cairn", [], {
    status: "not-available",
    reason: "not available yet — needs #4 (storage)",
  }),
  row("D01.v1", "100k items", "sqlite-wal", around(70)),
]);

function ratioCell(workload: string): string {
  const lines = tableLines(RUN.runtimes.deno!).filter((l) => l.workload === workload);
  const table = textTable(lines, INFO.contenders);
  return table.rows[0][table.header.indexOf("Cairn vs SQL WAL")];
}

test("ratios read as Cairn's time relative to SQLite's, the mark apart", () => {
  assert.equal(ratioCell("W09.v1"), "1.39× · tie");
  assert.equal(ratioCell("W19.v1"), "1/1.29 · faster");
  assert.equal(ratioCell("W05.v1"), "1/9.4 · faster");
  assert.equal(ratioCell("W04.v1"), "3.8× · slower");
  assert.equal(ratioText(1_826_813), "1,826,813×");
  assert.equal(ratioText(1 / 1_826_813), "1/1,826,813");
});

test("docs, charts and the terminal write every ratio the same way", () => {
  const { markdown, charts } = reportOf(RUN);
  const terminal = renderRuntimeTable("deno", RUN.runtimes.deno!);
  const svg = Object.values(charts).join("\n");
  for (const text of [markdown, terminal, svg]) {
    assert.ok(text.includes("1.39× · tie"), "W09 reads 1.39× · tie");
    assert.ok(!/0\.72/.test(text), "no inverse ratio");
    assert.ok(!/tie \(\d/.test(text), "no ratio folded into the tie mark");
  }
  assert.ok(markdown.includes("2× = Cairn takes twice as long, 1/2 = half as long"));
  assert.ok(svg.includes("1/1.29 · faster"));
});

test("a bar beyond the axis ends at the axis with an arrow and a break, and says its value", () => {
  const edge = barEnd(10 ** AXIS_DECADES).x;
  assert.equal(barEnd(2_433).x, edge);
  assert.equal(barEnd(2_433).overflow, "right");
  assert.equal(barEnd(1 / 1_826_813).x, barEnd(10 ** -AXIS_DECADES).x);
  assert.equal(barEnd(1 / 1_826_813).overflow, "left");
  assert.equal(barEnd(500).overflow, undefined);
  assert.ok(barEnd(500).x < edge, "a value inside the axis stops short of its end");

  const rt = runtimeLinesOf(RUN, "deno")!;
  const startup = familyChart(rt, "startup", ["cairn"])!;
  assert.match(startup, /data-overflow="right"/);
  assert.match(startup, /<polygon/);
  assert.ok(startup.includes("2,433× · slower"), "the true value, not the axis end");
  const writes = familyChart(rt, "writes", ["cairn"])!;
  assert.ok(!writes.includes("data-overflow"), "nothing beyond the axis, no mark");

  const drawn = svgChart({
    title: "t",
    groups: [{ label: "g", bars: [{ label: "a", ratio: 1e-6, verdict: "faster", text: "x" }] }],
  });
  assert.match(drawn, /data-overflow="left"/);
});

test("rows comparing different work stay in the tables, labelled, and out of charts", () => {
  const rt = runtimeLinesOf(RUN, "deno")!;
  const queries = familyChart(rt, "queries", ["cairn"]);
  assert.equal(queries, undefined, "W13 alone makes no queries chart");
  const summary = summaryChart(rt, ["cairn"])!;
  assert.ok(!summary.includes(">Queries<"), "nor a queries summary");
  assert.match(summary, /Left out: W13 \(Cairn's cached live result/);
  const lines = tableLines(RUN.runtimes.deno!).filter((l) => l.workload === "W13.v3");
  const table = textTable(lines, INFO.contenders);
  assert.match(table.rows[0][0], /^W13\.v3 Filter query, warm \(compares Cairn's cached/);
  assert.equal(table.rows[0][table.header.indexOf("Cairn vs SQL WAL")], "1/1,840,758 · faster");
});

test("cells without a figure show n/a and the notes say why", () => {
  const lines = tableLines(RUN.runtimes.deno!);
  const memory = textTable(lines.filter((l) => l.workload === "M01.v4"), INFO.contenders);
  assert.deepEqual(memory.rows[0].slice(3), ["105 ±1%", "n/a", "n/a"]);
  const disk = textTable(lines.filter((l) => l.workload === "D01.v1"), INFO.contenders);
  assert.equal(disk.rows[0][3], "n/a yet #4");
  const open = textTable(lines.filter((l) => l.workload === "W03.v1"), INFO.contenders);
  assert.equal(open.rows[0][5], "n/a");

  const notes = runtimeNotes(RUN.runtimes.deno!, lines);
  assert.ok(
    notes.some((n) => /^n\/a in M01 for SQL WAL, WASM mem: .*memory/.test(n)),
    notes.join("\n"),
  );
  assert.ok(
    notes.some((n) => n === "n/a in D01 for Cairn: not available yet — needs #4 (storage)"),
  );
  assert.ok(notes.some((n) => /^n\/a in W03 for WASM mem: in-memory database/.test(n)));
  assert.ok(!/\s0\.0\s/.test(renderRuntimeTable("deno", RUN.runtimes.deno!)), "no 0.0 figure");
});

test("titles never name the database size, which quick mode changes", () => {
  const fullSize = countLabel(big(false));
  for (const w of WORKLOADS) assert.ok(!w.title.includes(fullSize), `${w.id} ${w.title}`);
  const quick = envelope([
    row("W03.v1", "5k items", "cairn", around(3)),
    row("W03.v1", "5k items", "sqlite-wal", around(0.2)),
  ], true);
  const [line] = tableLines(quick.runtimes.deno!);
  assert.equal(`${line.title} · ${line.variant}`, "Open database (filled) · 5k items");
});

test("text rows compare Cairn with Yjs, then Automerge, and say which targets are met", () => {
  const text = envelope([
    row("W04.v1", "one at a time", "cairn", around(96.8)),
    row("W04.v1", "one at a time", "sqlite-wal", around(25.7)),
    row("X01a.v1", "whole trace", "cairn", around(5_000)),
    row("X01a.v1", "whole trace", "cairn-trusted", around(1_200)),
    row("X01a.v1", "whole trace", "yjs", around(1_000)),
    row("X01a.v1", "whole trace", "automerge", around(10_000)),
    row("X01e.v1", "whole trace", "cairn", around(520)),
    row("X01e.v1", "whole trace", "yjs", around(340)),
    row("X01e.v1", "whole trace", "automerge", around(220)),
    row("X01f.v1", "whole trace", "cairn", around(101, 0.1)),
    row("X01f.v1", "whole trace", "cairn-trusted", [], {
      status: "not-available",
      reason: "not available yet — needs #22 (text)",
    }),
  ]);
  const result = text.runtimes.deno!;
  result.info = {
    ...INFO,
    contenders: ["cairn", "cairn-trusted", "sqlite-wal", "yjs", "automerge"],
  };
  const lines = tableLines(result);
  const replay = lines.filter((l) => l.workload === "X01a.v1");
  assert.deepEqual(replay[0].baselines, ["yjs", "automerge"]);
  const table = textTable(replay, result.info.contenders);
  const cell = (header: string) => table.rows[0][table.header.indexOf(header)];
  assert.equal(cell("Cairn vs Yjs"), "5.0× · slower");
  assert.equal(cell("Cairn vs Automerge"), "1/2.0 · faster");
  assert.equal(cell("trusted vs Yjs"), "1.20× · slower");
  assert.ok(!table.header.includes("SQL WAL"), "no SQLite column among text rows");
  assert.equal(
    cell("Targets"),
    "Cairn ≤ 3× Yjs: missed (5.0×); trusted ≤ 1.5× Yjs: met (1.20×)",
  );
  const bytes = textTable(lines.filter((l) => l.workload === "X01e.v1"), result.info.contenders);
  assert.equal(bytes.rows[0][bytes.header.indexOf("Cairn vs Yjs")], "1.53× · larger");
  const load = lines.find((l) => l.workload === "X01f.v1")!;
  assert.deepEqual(load.targets.map(targetText), [
    "Cairn ≤ 100 ms: missed (101 ms, within the noise)",
    "trusted ≤ 100 ms: not measured",
  ]);

  const rt = runtimeLinesOf(text, "deno")!;
  const summary = summaryChart(rt, ["cairn", "cairn-trusted"])!;
  assert.ok(!summary.includes("Text editing"), "the SQLite summary leaves the text rows out");
  const chart = familyChart(rt, "text", ["cairn", "cairn-trusted"])!;
  assert.ok(chart.includes("Cairn vs Yjs") && chart.includes("1.53× · larger"));
  const { markdown } = reportOf(text);
  assert.match(
    markdown,
    /\| X01a\.v1 Trace replay, a commit each, in a burst \(grouped into blocks\) \| whole trace \| Cairn ≤ 3× Yjs \| \*\*missed\*\* \(5\.0×\) \|/,
  );
  assert.ok(renderRuntimeTable("deno", result).includes("↳ targets: Cairn ≤ 3× Yjs: missed"));
});

test("rows of a workload this code no longer knows keep their table figures, out of charts", () => {
  const retired = (contender: string, samples: number[]): Row => ({
    workload: "M01.v2",
    variant: "100k items",
    contender,
    status: "ok",
    unit: "B/item",
    better: "lower",
    samples,
    ms: 10,
  });
  // The retired in-process memory row: SQLite's figure saw nothing, so a ratio would be ∞.
  const old = envelope([retired("cairn", around(105)), retired("sqlite-wal", [0, 0, 0])]);
  const rt = runtimeLinesOf(old, "deno")!;
  assert.equal(rt.lines[0].family, "other");
  assert.equal(summaryChart(rt, ["cairn"]), undefined, "no summary from a retired row");
  assert.equal(familyChart(rt, "other", ["cairn"]), undefined, "nor a chart");
  assert.equal(textTable(rt.lines, INFO.contenders).rows[0][3], "105 ±1%");
});

test("the bundle sizes of a run with a browser are reported against the 30 KB target", () => {
  const apps = [
    { app: "open + get", minified: 179_359, gzipped: 61_520, lazyGzipped: 3_820 },
    { app: "commit codec only", minified: 20_969, gzipped: 7_841, lazyGzipped: 0 },
  ];
  const withBundle = { ...RUN, bundle: { esbuild: "0.28.0", apps } };
  const markdown = reportOf(withBundle).markdown;
  assert.match(markdown, /## Bundle size/);
  assert.match(markdown, /esbuild 0\.28\.0/);
  assert.match(
    markdown,
    /\| open \+ get \| 179\.4 KB \| 61\.5 KB \| missed: 2\.05× the target \| \+3\.8 KB \|/,
  );
  assert.match(markdown, /\| commit codec only \| 21\.0 KB \| 7\.8 KB \| met \| — \|/);
  assert.match(
    renderBundleSizes(apps),
    /open \+ get .* 61\.5 KB min\+gz at start \(≤ 30 KB: missed/,
  );
  // A run without a browser measured none: no section, rather than an empty one.
  assert.doesNotMatch(reportOf(RUN).markdown, /## Bundle size/);
});

test("each runtime is reported from the newest run that finished it, and the page names each run", () => {
  const w04 = (ms: number) => [row("W04.v1", "one at a time", "cairn", around(ms))];
  const apps = [{ app: "open + get", minified: 1, gzipped: 2, lazyGzipped: 0 }];
  // A full run whose Chromium section was cut short, then Chromium run on its own.
  const full: Envelope = {
    ...envelope(w04(11)),
    createdAt: "2026-11-27T18:38:00.000Z",
    commit: "full",
    settings: { quick: false, filter: "", runtimes: ["deno", "browser"] },
    runtimes: {
      deno: { info: INFO, rows: w04(11), ms: 1000 },
      browser: { info: INFO, rows: [], ms: 1000, problem: "stopped by hand" },
    },
    bundle: { esbuild: "old", apps },
  };
  const chromium: Envelope = {
    ...envelope([]),
    createdAt: "2026-11-28T09:00:00.000Z",
    commit: "chromium",
    settings: { quick: false, filter: "", runtimes: ["browser"] },
    runtimes: { browser: { info: INFO, rows: w04(22), ms: 1000 } },
    bundle: { esbuild: "new", apps },
  };
  // Older than both, and unfinished nowhere: outdated by each.
  const older: Envelope = {
    ...full,
    createdAt: "2026-11-20T00:00:00.000Z",
    commit: "older",
    runtimes: { ...full.runtimes, browser: { info: INFO, rows: w04(33), ms: 1000 } },
  };
  const runs = [
    { path: "a.json", envelope: older },
    { path: "b.json", envelope: full },
    { path: "c.json", envelope: chromium },
  ];
  const sources = chooseSources(runs);
  assert.deepEqual(
    sources.map(({ path, runtimes }) => [path, runtimes]),
    [["c.json", ["browser"]], ["b.json", ["deno"]]],
  );
  const { markdown } = buildReport(sources);
  assert.match(markdown, /Deno: commit full, run 2026-11-27T18:38.*envelope `b\.json`/);
  assert.match(markdown, /Chromium: commit chromium, run 2026-11-28T09:00.*envelope `c\.json`/);
  assert.match(markdown, /esbuild new/, "the bundle sizes of the run that measured the browser");
  assert.doesNotMatch(markdown, /did not finish: stopped by hand/);
  // Without the Chromium run of its own, the older finished one is preferred to the cut one.
  const withoutIt = chooseSources(runs.slice(0, 2));
  assert.deepEqual(
    withoutIt.map(({ path, runtimes }) => [path, runtimes]),
    [["b.json", ["deno"]], ["a.json", ["browser"]]],
  );
  // With only the cut run, its rows and its problem are reported.
  const cut = chooseSources([runs[1]]);
  assert.match(buildReport(cut).markdown, /did not finish: stopped by hand/);
});

test("Cairn durable is compared with SQLite WAL + FULL where the run has it, else the baseline", () => {
  const w04 = (contender: string, us: number) =>
    row("W04.v1", "one at a time", contender, around(us));
  const contenders = ["cairn", "cairn-durable", "sqlite-wal", "sqlite-wal-full"];
  const withFull = {
    ...envelope([
      w04("cairn", 50),
      w04("cairn-durable", 400),
      w04("sqlite-wal", 20),
      w04("sqlite-wal-full", 800),
    ]),
  };
  withFull.runtimes.deno = { ...withFull.runtimes.deno!, info: { ...INFO, contenders } };
  const [line] = tableLines(withFull.runtimes.deno!);
  const table = textTable([line], contenders);
  assert.equal(table.rows[0][table.header.indexOf("Cairn vs SQL WAL")], "2.5× · slower");
  assert.equal(table.rows[0][table.header.indexOf("durable vs SQL WAL FULL")], "1/2.0 · faster");
  assert.equal(table.header.indexOf("durable vs SQL WAL"), -1);
  assert.equal(line.against.get("cairn-durable"), "sqlite-wal-full");
  assert.match(reportOf(withFull).markdown, /Cairn durable's that of \*\*SQLite native, WAL \+/);

  // An older run without the profile: durable against the runtime's baseline, as before.
  const [old] = tableLines(
    envelope([w04("cairn-durable", 400), w04("sqlite-wal", 20)]).runtimes.deno!,
  );
  assert.equal(old.against.get("cairn-durable"), "sqlite-wal");
  assert.equal(textTable([old], contenders).header.at(-1), "durable vs SQL WAL");
});

test("W09 without the close says what differs and stays out of the summaries; + close counts", () => {
  const w09 = (variant: string, contender: string, ms: number) =>
    row("W09.v1", variant, contender, around(ms));
  const run = envelope([
    w09("100k items", "cairn", 400),
    w09("100k items", "sqlite-wal", 320),
    w09("100k items + close", "cairn", 420),
    w09("100k items + close", "sqlite-wal", 300),
  ]);
  const [open, closed] = tableLines(run.runtimes.deno!);
  assert.match(open.differentWork ?? "", /checkpoint/);
  assert.equal(closed.differentWork, undefined);
  assert.equal(summarized(open), false);
  assert.equal(summarized(closed), true);
  assert.match(
    textTable([open], INFO.contenders).rows[0][0],
    /^W09\.v1 Write all items \(compares SQLite's WAL/,
  );
});

test("a read-only row whose same-work SQLite profiles disagree by over 20 % is marked", () => {
  const w11 = (workload: string, contender: string, ms: number): Row => ({
    workload,
    variant: "100k items",
    contender,
    status: "ok",
    unit: "ms",
    better: "lower",
    samples: around(ms),
    ms: 10,
  });
  const profiles = (workload: string, wal: number) => [
    w11(workload, "cairn", 16),
    w11(workload, "sqlite-full", 43),
    w11(workload, "sqlite-wal", wal),
    w11(workload, "sqlite-off", 43),
  ];
  const contenders = ["cairn", "sqlite-full", "sqlite-wal", "sqlite-off"];
  // As in the run of 2026-11-29 (W11.v2, a version this code no longer has): 68 against 43 ms.
  const [slow] = tableLines(envelope(profiles("W11.v2", 68)).runtimes.deno!);
  assert.equal(Math.round(slow.profileSpread! * 100), 58);
  assert.match(
    textTable([slow], contenders).rows[0][0],
    /SQLite profiles doing the same reads differ by 58 %: machine noise during a cell; ratio uncertain/,
  );
  const [close] = tableLines(envelope(profiles("W11.v3", 50)).runtimes.deno!);
  assert.equal(close.profileSpread, undefined, "16 % apart: no mark");
  // A row that writes is not judged: its profiles differ by design.
  const w04 = ["sqlite-full", "sqlite-wal", "sqlite-off"].map((c, i) =>
    row("W04.v1", "one at a time", c, around([875, 22, 114][i]))
  );
  const [writes] = tableLines(
    envelope([row("W04.v1", "one at a time", "cairn", around(50)), ...w04]).runtimes.deno!,
  );
  assert.equal(writes.profileSpread, undefined);
  assert.match(
    renderRuntimeTable("deno", envelope(profiles("W11.v3", 68)).runtimes.deno!),
    /↳ SQLite profiles doing the same reads differ by 58 %/,
  );
});
