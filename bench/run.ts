/**
 * The one benchmark runner (`deno task bench`): runs every workload on every contender in Deno,
 * Node 24 and Chromium, shows which row of how many it is on and the time left, prints a table
 * per runtime, writes a JSON envelope (a full run to bench/results/, to be committed; any other
 * run to bench/results/local/, which git ignores), and optionally compares with an earlier one.
 *
 *   deno task bench [--runtime=deno|node|browser|all] [--filter=REGEX] [--quick]
 *                   [--json=PATH] [--baseline=PATH] [--threshold=PERCENT]
 *
 * Exits non-zero when a runtime fails, a row errors, or (with --baseline) a row regressed by
 * more than the threshold (default 20 %) beyond the noise.
 */
import { parseArgs } from "node:util";
import { dirname } from "node:path";
import { runBrowserRuntime } from "./drivers/browser.ts";
import { measureBundleSizes } from "../scripts/lib/bundle_size.ts";
import { stopBundler } from "../scripts/lib/bundles.ts";
import { chromiumPath } from "../scripts/lib/chromium.ts";
import { Collector } from "./drivers/collect.ts";
import { runServerRuntime } from "./drivers/server.ts";
import { compareWithBaseline } from "./report/baseline.ts";
import { renderBundleSizes } from "./report/bundle_sizes.ts";
import { renderRuntimeTable } from "./report/console_table.ts";
import { plannedCells } from "./entry/suite.ts";
import { type Envelope, ENVELOPE_FORMAT, type RuntimeResult } from "./lib/envelope.ts";
import { defaultEnvelopePath, listEnvelopes, readEnvelope } from "./lib/results_dir.ts";
import { describeCommit, describeMachine } from "./lib/machine.ts";
import { ProgressLine } from "./lib/progress.ts";
import { cellKey, earlierTimes, TimeLeft } from "./lib/time_left.ts";
import { type RuntimeName, RUNTIMES, type Settings } from "./lib/types.ts";

const USAGE = "usage: deno task bench [--runtime=deno|node|browser|all] [--filter=REGEX] " +
  "[--quick] [--json=PATH] [--baseline=PATH] [--threshold=PERCENT]";

interface Options {
  runtimes: RuntimeName[];
  settings: Settings;
  json?: string;
  baseline?: string;
  threshold: number;
}

function options(): Options {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      runtime: { type: "string", default: "all" },
      filter: { type: "string", default: "" },
      quick: { type: "boolean", default: false },
      json: { type: "string" },
      baseline: { type: "string" },
      threshold: { type: "string", default: "20" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const asked = values.runtime === "all" ? RUNTIMES : values.runtime.split(",");
  const unknown = asked.filter((r) => !RUNTIMES.includes(r as RuntimeName));
  if (unknown.length > 0) throw new Error(`unknown runtime ${unknown.join(", ")}\n${USAGE}`);
  new RegExp(values.filter); // a bad pattern fails here, not in three runtimes
  return {
    runtimes: RUNTIMES.filter((r) => asked.includes(r)),
    settings: { quick: values.quick, filter: values.filter },
    json: values.json,
    baseline: values.baseline,
    threshold: Number(values.threshold) / 100,
  };
}

/**
 * The run's cells over every runtime, where each runtime's count starts, and the time each cell
 * took in the newest earlier run of the same mode (preferably on this machine).
 */
async function timeLeft(
  envelope: Envelope,
): Promise<[TimeLeft, Partial<Record<RuntimeName, number>>]> {
  const plan: string[] = [];
  const offsets: Partial<Record<RuntimeName, number>> = {};
  for (const runtime of envelope.settings.runtimes) {
    offsets[runtime] = plan.length;
    for (const { workload, variant, contender } of plannedCells(runtime, envelope.settings)) {
      plan.push(
        cellKey(runtime, {
          workload: workload.id,
          variant: variant.label,
          contender: contender.id,
        }),
      );
    }
  }
  let earlier: Envelope | undefined;
  for (const path of await listEnvelopes()) {
    const candidate = await readEnvelope(path).catch(() => undefined);
    if (candidate?.settings.quick !== envelope.settings.quick) continue;
    earlier ??= candidate;
    if (candidate.machine.fingerprint === envelope.machine.fingerprint) {
      earlier = candidate;
      break;
    }
  }
  return [new TimeLeft(plan, earlier ? earlierTimes(earlier) : undefined), offsets];
}

/**
 * One runtime's rows. A runtime that cannot run to its end (a browser that does not start) ends
 * with that as its problem and the rows it measured, so the runtimes before it are still written.
 */
async function runRuntime(
  runtime: RuntimeName,
  settings: Settings,
  collector: Collector,
  echo: (text: string) => void,
): Promise<RuntimeResult> {
  try {
    return runtime === "browser"
      ? await runBrowserRuntime(settings, collector, echo)
      : await runServerRuntime(runtime, settings, collector, echo);
  } catch (err) {
    return collector.finish(`did not run to its end: ${(err as Error)?.message ?? err}`);
  }
}

async function main(): Promise<number> {
  const opts = options();
  // Before an hour of Deno and Node rows, not after them.
  if (opts.runtimes.includes("browser")) chromiumPath();
  const previous = opts.baseline ? await readEnvelope(opts.baseline) : undefined;
  const envelope: Envelope = {
    format: ENVELOPE_FORMAT,
    createdAt: new Date().toISOString(),
    commit: await describeCommit(),
    machine: await describeMachine(),
    settings: { ...opts.settings, runtimes: opts.runtimes },
    runtimes: {},
  };
  const progress = new ProgressLine(...await timeLeft(envelope));
  const echo = (text: string) => {
    progress.clear();
    console.error(text);
  };
  console.log(
    `Cairn benchmarks${opts.settings.quick ? " (quick)" : ""} on ${envelope.machine.cpu}, ` +
      `${envelope.machine.cores} cores; commit ${envelope.commit}`,
  );
  if (opts.runtimes.includes("browser")) {
    envelope.bundle = await measureBundleSizes("sources");
    console.log(`\n${renderBundleSizes(envelope.bundle.apps)}`);
  }
  let failed = 0;
  for (const runtime of opts.runtimes) {
    console.log(`\n━━ ${runtime} ━━`);
    const collector = new Collector(runtime, progress);
    const result = await runRuntime(runtime, opts.settings, collector, echo);
    envelope.runtimes[runtime] = result;
    console.log(renderRuntimeTable(runtime, result));
    console.log(`(${runtime}: ${(result.ms / 1000).toFixed(1)} s)`);
    if (result.problem) {
      failed++;
      console.error(`${runtime} FAILED: ${result.problem}`);
    }
    failed += result.rows.filter((r) => r.status === "error").length;
  }
  await stopBundler();

  const path = opts.json ?? defaultEnvelopePath(envelope);
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(envelope, null, 1) + "\n");
  console.log(`\nenvelope: ${path}  (docs: deno task bench:report)`);

  let regressions = 0;
  if (previous) {
    const report = compareWithBaseline(envelope, previous, opts.threshold);
    console.log(`\nagainst ${opts.baseline} (${report.compared} rows compared):`);
    for (const line of report.lines) console.log(`  ${line}`);
    if (report.lines.length === 0) {
      console.log("  no difference beyond the threshold and the noise");
    }
    regressions = report.regressions;
  }
  if (failed > 0) console.error(`${failed} runtime or row failure(s)`);
  if (regressions > 0) console.error(`${regressions} regression(s) past the threshold`);
  return failed > 0 || regressions > 0 ? 1 : 0;
}

Deno.exit(await main());
