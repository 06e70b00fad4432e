/**
 * Where a contender's time goes in bench rows: runs each selected row's side as the runner does
 * (setup and warm-up not profiled), profiles its measured samples with V8's sampling profiler
 * (node:inspector, in this process, every 100 µs), and prints the samples' median and where the
 * time went (bench/lib/cpu_profile.ts). Cairn's contenders, and Yjs and Automerge in text rows;
 * not SQLite, and not rows that need other processes (fresh-process rows, sync rows).
 *
 *   deno task bench:profile --filter=W04 [--contender=cairn-trusted] [--variant=REGEX]
 *                           [--runtime=node] [--quick] [--top=20] [--out=DIR]
 *
 * --out writes each profile as a .cpuprofile file (Chrome DevTools and most profilers open them).
 * The figures printed come from a profiled process: slower than the runner's, and no substitute
 * for its rows.
 */
import process from "node:process";
import { Session } from "node:inspector/promises";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnSync } from "node:child_process";
import { detectFeatures } from "./contenders/cairn.ts";
import { localPlatform } from "./entry/local_platform.ts";
import { runEngineSide, selectWorkloads, workloadContenders } from "./entry/suite.ts";
import {
  BundleModules,
  type CpuProfile,
  formatSummary,
  summarizeProfile,
} from "./lib/cpu_profile.ts";
import { planFor, type SampleHooks } from "./lib/measure.ts";
import { summarize } from "./lib/stats.ts";
import type { RuntimeName } from "./lib/types.ts";
import type { BenchWorkload } from "./workloads/common.ts";

const isDeno = "Deno" in globalThis;
const runtime: RuntimeName = isDeno ? "deno" : "node";

/** Running bundled (on Node), frames are told apart by the bundle's module comments. */
const bundle = import.meta.url.endsWith(".mjs")
  ? new BundleModules(import.meta.url, readFileSync(fileURLToPath(import.meta.url), "utf8"))
  : undefined;

const { values: args } = parseArgs({
  args: process.argv.slice(2),
  options: {
    filter: { type: "string" },
    contender: { type: "string", default: "cairn" },
    variant: { type: "string", default: "" },
    runtime: { type: "string", default: runtime },
    quick: { type: "boolean", default: false },
    top: { type: "string", default: "20" },
    out: { type: "string" },
    help: { type: "boolean", default: false },
  },
});

const USAGE = "usage: deno task bench:profile --filter=REGEX [--contender=ID] [--variant=REGEX] " +
  "[--runtime=node] [--quick] [--top=N] [--out=DIR]";

/** Profiles the measured samples, and keeps the profile when they end. */
class SampleProfiler implements SampleHooks {
  readonly #session = new Session();
  profile: CpuProfile | undefined;

  constructor() {
    this.#session.connect();
  }

  async beforeSamples(): Promise<void> {
    await this.#session.post("Profiler.enable");
    await this.#session.post("Profiler.setSamplingInterval", { interval: 100 });
    await this.#session.post("Profiler.start");
  }

  async afterSamples(): Promise<void> {
    const { profile } = await this.#session.post("Profiler.stop");
    this.profile = profile as CpuProfile;
    await this.#session.post("Profiler.disable");
  }

  close(): void {
    this.#session.disconnect();
  }
}

async function profileRow(
  workload: BenchWorkload,
  root: string,
  features: Awaited<ReturnType<typeof detectFeatures>>["features"],
): Promise<void> {
  const platform = localPlatform(root);
  const plan = planFor(workload, args.quick);
  const variantPattern = new RegExp(args.variant, "i");
  for (const variant of workload.variants(args.quick)) {
    if (!variantPattern.test(variant.label)) continue;
    const title = `${workload.id} ${workload.title} · ${variant.label} · ${args.contender}`;
    const profiler = new SampleProfiler();
    try {
      const progress = () => {};
      const { samples } = await runEngineSide(
        workload,
        args.contender,
        features,
        platform,
        variant,
        plan,
        progress,
        profiler,
      );
      console.log(`\n${title} (${runtime})`);
      const { median } = summarize(samples);
      console.log(
        `  median of ${samples.length} samples: ${median.toPrecision(3)} ${workload.unit}`,
      );
      console.log(formatSummary(summarizeProfile(profiler.profile!, Number(args.top), bundle)));
      if (args.out) {
        mkdirSync(args.out, { recursive: true });
        const name = `${workload.id}-${variant.label}-${args.contender}-${runtime}`
          .replace(/[^\w.-]+/g, "_");
        writeFileSync(join(args.out, `${name}.cpuprofile`), JSON.stringify(profiler.profile));
      }
    } catch (err) {
      console.log(`\n${title}: not profiled — ${(err as Error).message}`);
    } finally {
      profiler.close();
    }
  }
}

async function main(): Promise<number> {
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (!args.filter) {
    console.error(USAGE);
    return 2;
  }
  if (args.runtime !== runtime) {
    // Node runs this file bundled, as it runs the bench (the runner's Node build).
    const { buildNodeBench } = await import("./drivers/build.ts");
    await buildNodeBench();
    const node = spawnSync("./node_modules/.bin/node", [
      "--expose-gc",
      "--disable-warning=ExperimentalWarning",
      "build/bench/profile.mjs",
      ...process.argv.slice(2),
    ], { stdio: "inherit" });
    return node.status ?? 1;
  }
  const root = mkdtempSync(join(tmpdir(), "cairn-profile-"));
  try {
    const { features } = await detectFeatures(join(root, "features"));
    const workloads = selectWorkloads(args.filter).filter((workload) =>
      workloadContenders(workload, runtime).some((c) =>
        c.id === args.contender && c.family !== "sqlite"
      )
    );
    if (workloads.length === 0) console.log(`no row matches with contender ${args.contender}`);
    for (const workload of workloads) await profileRow(workload, root, features);
    return 0;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

process.exitCode = await main();
