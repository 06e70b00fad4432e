/**
 * The sections of docs/benchmarks.md that do not depend on a run: what to expect elsewhere,
 * every workload's definition (taken from the workload modules, so the docs say exactly what the
 * code times), how the numbers are made, the bench page and where the code is.
 */
import { contenderInfo } from "../contenders/list.ts";
import { WORKLOADS } from "../workloads/index.ts";
import type { BenchWorkload } from "../workloads/common.ts";
import { planFor } from "../lib/measure.ts";
import { isTextWorkload } from "../lib/types.ts";
import { familyTitle, READ_PROFILES_SPREAD, targetGoal } from "./view.ts";

export function expectationsSection(): string[] {
  return [
    "## What to expect on your hardware",
    "",
    "- **Absolute figures move with the machine; ratios move less.** These runs come from a " +
    "small shared cloud VM (2 cores, other work running at the same time). A desktop CPU runs " +
    "both engines faster; in-memory work (Cairn reads, queries) scales with single-core speed " +
    "and memory latency, SQLite's file rows also with the disk.",
    "- **fsync dominates SQLite's `synchronous=FULL` writes** (W04, W06, W07): on an NVMe " +
    "laptop an fsync takes tens of µs, on cloud block storage milliseconds, so those rows can " +
    "differ by 10–100× between machines. WAL + NORMAL does not sync at each commit, but it " +
    "does sync when it checkpoints the WAL into the database file (once the WAL passes 1,000 " +
    "pages, and at the last close), so large writes (W09) pay some fsyncs; WAL + FULL syncs the " +
    "WAL at every commit too; OFF never syncs.",
    "- **Cairn signs every block** (Ed25519 through WebCrypto) unless trusted: one-item writes " +
    "pay one signature each (compare Cairn with trusted), batches pay one per batch.",
    "- **Cairn loads a repository whole**: reads and keys on an open repository are memory " +
    "lookups, and in the runs here they take a fraction of SQLite's time (a few times less, " +
    "not orders of magnitude: the Reads rows W05, W08, W11, W18). Counts (W17) and cached " +
    "query results (W13, W15) read what Cairn keeps, which is different work from SQLite's. " +
    "Opening maps the checkpoint and decodes each value on first access (W03), so the first " +
    "full pass over all values (W10) pays that decoding and is slower than SQLite's, and " +
    "memory per item grows as values are read (M01 shows both points, each in a fresh " +
    "process).",
    "- **Warm query rows (W13, W15) measure the design, not a faster scan**: Cairn hands back " +
    "a result cached until an item changes, SQLite runs the query again. The same holds for " +
    "Count (W17): Cairn reads a counter it keeps, SQLite counts rows. These rows stay in the " +
    "tables, out of the charts and summaries. The cold rows (W12, W14) and the live-update " +
    "rows (W16) compare query evaluation itself.",
    "- **Text rows (X01–X05) compare engines, not storage**: Cairn keeps a signed, hash-" +
    "chained history of every transaction (one block each when transactions come in separate " +
    "ticks) and, in X01, writes it to disk; Yjs and Automerge run in memory and only produce " +
    "each transaction's update. The history rows show what that history costs per edit. " +
    "Automerge's WebAssembly memory is invisible to the heap figures, so its memory row is n/a.",
    "- **Sync rows (S01–S04) run on loopback**, server and clients in separate processes on " +
    "the same 2 cores: every process competes for them, so latency and catch-up would be lower " +
    "on a machine with a core per process, and a real network adds its round trips to every " +
    "figure. The server here keeps its repositories on disk (fsync per batch of pushes).",
    "- **The browser's clock is coarse** (5 µs with cross-origin isolation): per-operation " +
    "rows there time loops of at least 10 ms, and latency percentiles below the step show " +
    'as "< 5".',
    "- **Noise**: on a busy machine CVs grow; the runner calls a difference only when it " +
    'exceeds twice the larger robust CV (at least 3 %), otherwise "tie". Compare runs on ' +
    "one machine with `--baseline`, never across machines.",
    "",
  ];
}

export function workloadSection(): string[] {
  const out = [
    "## Workloads",
    "",
    "Each id is versioned: when what a workload times changes, its version changes, and " +
    '`--baseline` stops comparing it with older runs. "N" is 100k items in a full run ' +
    '(5k with `--quick`). Item: `{ title: "Item i", count: i, tags: {"tag"+i, ' +
    '"category"+(i % 5)} }` (a Cairn `set` field; a JSON text column in SQLite, table ' +
    "`items(id TEXT PRIMARY KEY, title, count, tags)`); both sides use the keys `k<i>`. " +
    "The text rows (X01–X05) edit one text instead: a Cairn item with a `text` field, a Y.Text, " +
    "an Automerge text. X01 and X02 replay real editing traces by Joseph Gentle " +
    "(josephg/editing-traces, CC BY 4.0; the files and their README are in `bench/data/`); " +
    'X03–X05 follow dmonad/crdt-benchmarks, whose "N" is 6,000 (less with `--quick`, as ' +
    "the sizes say). The sync rows (S01–S04) write the same items through Cairn's sync " +
    "client to `cairndb/server`, in processes of their own (How the numbers are made).",
    "",
  ];
  for (const w of WORKLOADS) {
    const full = planFor(w, false);
    const quick = planFor(w, true);
    const sizes = (quickMode: boolean) => w.variants(quickMode).map((v) => v.label).join("; ");
    out.push(
      `### ${w.id} ${w.title}`,
      "",
      `${familyTitle(w.family)}. Unit: ${w.unit} (${w.better} is better). Sizes: ${
        sizes(false)
      } (quick: ${
        sizes(true)
      }). Samples: ${full.warmup} warm-up + ${full.samples} (quick ${quick.warmup} + ${quick.samples})${
        w.scale === "fixed" ? `, each ${full.sliceMs} ms (quick ${quick.sliceMs} ms)` : ""
      }.`,
      "",
      ...sidesText(w),
      `- **Fairness:** ${w.fairness}`,
      ...Object.values(w.runtimeNotes ?? {}).map((note) => `- **Note:** ${note}`),
      ...(w.differentWork
        ? [`- **Kept out of charts and summaries:** the ratio compares ${w.differentWork}.`]
        : []),
      ...w.variants(false).filter((v) => v.differentWork).map((v) =>
        `- **Kept out of charts and summaries:** "${v.label}", whose ratio compares ` +
        `${v.differentWork}.`
      ),
      ...(w.zeroSample ? [`- **A sample of 0 or less shows n/a:** ${w.zeroSample}.`] : []),
      "",
    );
  }
  return out;
}

/** " (Cairn needs text, storage)" */
function cairnNeeds(requires?: readonly string[]): string {
  return requires?.length ? ` (Cairn needs ${requires.join(", ")})` : "";
}

/** What each side times (against SQLite), or what every engine times (text rows). */
function sidesText(w: BenchWorkload): string[] {
  if (!isTextWorkload(w)) {
    const needs = w.cairn.requires?.length ? ` (needs ${w.cairn.requires.join(", ")})` : "";
    return [
      `- **Cairn timed${needs}:** ${w.timed.cairn}`,
      `- **SQLite timed:** ${w.timed.sqlite}`,
      `- **Indexes:** Cairn: ${w.indexes.cairn}. SQLite: ${w.indexes.sqlite}.`,
      ...(w.context ? [`- **For context:** ${w.context}`] : []),
    ];
  }
  const names = (ids: readonly string[]) => ids.map((c) => contenderInfo(c).label).join(", ");
  const ratios = w.baselines.length > 0
    ? `; Cairn's figures as ratios to ${names(w.baselines).replace(/, ([^,]*)$/, ", then $1")}`
    : "";
  const sameSteps = w.family === "text" ? ", the same steps for every engine" : "";
  return [
    `- **Runs on:** ${names(w.contenders)}${ratios}.`,
    `- **Timed${sameSteps}${cairnNeeds(w.text.requires)}:** ${w.timed}`,
    ...(w.targets?.length
      ? [`- **Targets:** ${w.targets.map((t) => targetGoal(t, w.unit)).join("; ")}.`]
      : []),
    ...(w.context ? [`- **For context:** ${w.context}`] : []),
  ];
}

export function statisticsSection(): string[] {
  return [
    "## How the numbers are made",
    "",
    "- Each row: setup (not timed), warm-up samples (discarded), then samples: ≥ 30 for " +
    "µs-scale rows, ≥ 7 for ms-scale rows (quick mode: 5 and 3; rows of seconds have one " +
    "warm-up), one for sizes (the bytes of one written document, which the next sample would " +
    "only repeat; they vary by a few bytes between runs). Text rows that only read a written " +
    "document (X01c–f, X02b–c, X05) share it: it is written once per contender and size, by " +
    "the first of them to run, in its untimed setup. Per-operation rows time a " +
    "loop of operations and divide. Background work a sample starts (Cairn's block sealing) " +
    "is awaited inside the clock; background work a setup starts (a checkpoint of the items " +
    "it wrote) is awaited before the first sample.",
    "- The envelope keeps every raw sample; tables show the median and the robust CV " +
    "(1.4826 × MAD / median); the envelope summary also has mean, stddev, CV and the 10 % " +
    "trimmed mean (`bench/lib/stats.ts`).",
    "- Ratios: Cairn's median time ÷ the baseline's (for ops/s rows, the time per operation: " +
    "the baseline's throughput ÷ Cairn's). 2× = Cairn takes twice as long, 1/2 = half as " +
    "long. The mark beside it says whether the difference counts: it does when it exceeds " +
    'twice the larger robust CV of the two rows and 3 % ("faster", "slower"; "smaller", ' +
    '"larger" for memory and bytes); otherwise "tie". Text rows are compared with Yjs and ' +
    "with Automerge in the same run, in time, memory and bytes alike; their targets (issue " +
    "#22) are judged on the medians.",
    "- Family summaries: the geometric mean of the family's ratios (each size of a workload " +
    "one row), with how many rows were faster, slower or a tie; a mean within 3 % of 1× is " +
    "drawn grey. Rows whose two sides do different work by design (W13, W15, W17, and W09 " +
    "without the close) are left out, and so are the text rows, whose baseline is not SQLite " +
    "(they have their own chart per runtime).",
    "- **One contender's cell at a time.** The runner measures a row's whole cell (setup, " +
    "warm-up, every sample) for one contender, then the next contender's: it does not " +
    "interleave their samples. On a shared machine a slow stretch that falls during one cell " +
    "moves that cell's median alone, and so the ratio, and the noise mark cannot see it " +
    "(within the cell the samples agree). One sign of it: where SQLite reads every row in one " +
    "statement and commits nothing (W10, W11, W18), its profiles do the same work and, sampled " +
    "round by round, take the same time; yet in the run of 2026-11-29 W11 took 43 ms on SQL " +
    "FULL and SQL OFF and 68 ms on SQL WAL, on Deno as on Node, and its ratio rests on the " +
    "slow cell. Where such profiles differ by more than " +
    `${READ_PROFILES_SPREAD * 100} % in one of those rows, the tables mark it ("SQLite ` +
    'profiles doing the same reads differ by …") and its ratio is uncertain by about that ' +
    "much. Rows of many small statements (point reads, count, queries) are not checked: " +
    "there the profiles differ even sampled round by round (point reads as in W05, four " +
    "profiles in turn, 2026-11-29: 9.5 to 27 µs), so a gap between them need not be noise.",
    "- Charts share one log axis, 1/1000 to 1000×: a ratio beyond it ends in an arrow and a " +
    "break, and its text gives the true value.",
    "- Latency tables time single operations (≥ 20k for point reads; every operation of the " +
    "mixed workload).",
    "- Memory (M01): measured in a fresh process of the runtime (`bench/fresh/probe.ts`; Deno " +
    "and Node, started with `--expose-gc`), one per sample, so nothing earlier rows left behind " +
    "counts: heap (heap used + external, after forced GCs, repeated 20 ms apart until external " +
    "stops falling: V8 frees a dead ArrayBuffer's contents after the GC that found it) and RSS " +
    "above the figures just " +
    "before opening, right after opening and after reading every value. SQLite's heap cells " +
    "are n/a (it allocates outside the JS heap); an RSS sample that saw no growth shows n/a. " +
    "Chromium has no fresh process here: n/a. Text rows: the heap after a forced GC in the " +
    "bench's own process (Chromium: the DevTools protocol, heap used + backing stores).",
    "- Disk: all files of the database after close, divided by the items it holds; for text " +
    "rows, Cairn's log and checkpoint files apart.",
    "- Sync rows: the server runs in a Deno process of its own (`createSyncServer`, `open: " +
    "true`, on a fresh directory, loopback); the other clients in processes of the runtime " +
    "measured (Deno runs `bench/sync/peer_process.ts`, Node its bundle), driven by JSON lines " +
    "on their stdin; the client that is timed is the bench's own process. In Chromium the " +
    "timed client is the bench page's own Cairn client (in memory as on Deno and Node, except " +
    "S03's new client, whose database is on OPFS as an app would keep it), and " +
    "the runner starts the server and the other clients for it, as Deno processes, when the " +
    "page calls a function the runner exposed to it (`bench/sync/host_bridge.ts`); the page " +
    "then drives each client process over that process's control socket (a WebSocket on " +
    "loopback taking the requests of its stdin), and the server through the runner. In S02 " +
    "the page also holds one process's share of the clients itself. Each row's notes say which " +
    "client is the page. One clock: the bench process (in Chromium, the page) starts the timer " +
    "when it hands a request to another process and stops it when its own client sees the " +
    "result, both stamps taken by `performance.now()` in that one process, so no two " +
    "processes' clocks are ever compared (the hop to the other process, its stdin or its " +
    "control socket, is inside every figure, the floor's too). S02 alone compares times taken in different processes: " +
    "`Date.now()`, the one system clock every process (and the page) reads, in 1 ms steps " +
    "(`performance.timeOrigin` plus `performance.now()` would be finer, but each process's " +
    "monotonic clock may drift from the wall clock it started from). Bytes: the timed " +
    "client's WebSocket payload bytes, every message both ways, counted by a wrapper around " +
    "the socket it opens, given through the client's socket seam (`bench/sync/byte_count.ts`; " +
    "in Chromium, around the page's own WebSocket); WebSocket and TCP headers are not counted. " +
    "Server CPU: `process.cpuUsage()` of the server process, asked over its stdin (from the " +
    "page, through the runner). Rows that read a big repository share it: it is written once " +
    "per run of a runtime, by the first row that needs it, in its untimed setup.",
    "",
  ];
}

export function pageSection(): string[] {
  return [
    "## The bench page",
    "",
    "`deno task bench:serve` serves a page that runs the browser rows by hand and draws the " +
    "charts above as rows complete, with how many rows are done of how many and the time " +
    "left. It opens with the newest committed run of every runtime loaded; Run puts the new " +
    "run beside it. " +
    "Pick runtimes, contenders and workloads to show; load any envelope (or a JSON the page " +
    "downloaded) to compare side by side. It redraws between rows, never inside one, but its " +
    "figures are for looking: the ones above come from the runner, whose page draws nothing " +
    "until the run ends. The sync rows run only under the runner, which starts their server " +
    "and other clients: run by hand, the page shows them n/a.",
    "",
    "![The bench page with the committed run](benchmarks/page-results.png)",
    "",
    "![A quick run in progress beside the committed run](benchmarks/page-running.png)",
    "",
    "![The quick run done, beside the committed run](benchmarks/page-compare.png)",
    "",
    "Screenshots: `CAIRN_PAGE_SHOTS=docs/benchmarks ./node_modules/.bin/deno test -A " +
    "test/server/bench_page.test.ts`.",
    "",
  ];
}

export function codeSection(): string[] {
  return [
    "## Where the code is",
    "",
    "- `bench/run.ts` (CLI), `bench/drivers/` (Deno and Node child processes, Chromium through " +
    "playwright-core, esbuild bundles), `bench/entry/` (the suite every runtime runs, and the " +
    "Deno/Node entry), `web/bench/` (the page, its SQLite worker).",
    "- `bench/workloads/`: one module per family; a workload is an id, its family, its sizes, " +
    "the text above, and a Cairn side and a SQLite side (`setup`, `sample`, `teardown`, " +
    'optional `latency`). A side that needs an engine feature declares `requires: ["storage"]` ' +
    'or `["query"]`; add it to `bench/workloads/index.ts` and it runs everywhere. A text ' +
    "workload (`text_traces.ts`, `text_published.ts`) has one side instead, which every text " +
    "engine runs through `bench/contenders/text_engine.ts`.",
    "- `bench/contenders/`: `list.ts` (every contender as data), `cairn.ts` (profiles, feature " +
    "probes, the query adapter), `sqlite_native.ts`, `sqlite_wasm.ts`; `text_cairn.ts`, " +
    "`text_yjs.ts`, `text_automerge.ts` for the text rows.",
    "- `bench/lib/`: what every side shares — statistics, sampling, the envelope, progress and " +
    "its time estimate; the editing traces (`traces.ts`, files in `bench/data/` with their " +
    "licence), the replay plan of a concurrent trace and the crdt-benchmarks edits.",
    "- `bench/sync/`: the sync rows' processes — the server (`server_process.ts`, also the " +
    "raw WebSocket relay), the client process (`peer_process.ts`, its requests in " +
    "`peer_requests.ts`), the JSON-lines channel to them, the timed client (`observer.ts`) and " +
    "its byte-counting WebSocket, and for the bench page the bridge to the processes the " +
    "runner starts (`host_bridge.ts`), their control sockets (`control_socket.ts`, " +
    "`control_client.ts`) and the page's own share of S02's clients (`own_peer.ts`); the " +
    "rows are " +
    "`bench/workloads/sync_latency.ts`, `sync_fanout.ts` (with `bench/sync/fan_out_clients.ts`) " +
    "and `sync_catchup.ts`.",
    "- `bench/report/`: what a run shows — table lines, ratios, charts, the console table, this " +
    "page, `--baseline`.",
    "",
  ];
}
